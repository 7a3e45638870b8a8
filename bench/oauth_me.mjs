// The Node helper of bench/oauth_me.sh: an OAuth access token for the REST API
// obtained as an app obtains one, through the real authorization server:
// Dynamic Client Registration, /oauth/authorize with PKCE (the sign-in and
// consent forms submitted as a browser would: tests/e2e/oauth_helpers.mjs)
// and /oauth/token.
//
// Input (environment): OM_BASE (http://127.0.0.1:PORT), OM_EMAIL and
// OM_PASSWORD of an account with a password (scribe admin set-password), and
// SCRIBE_TEST_DATABASE_URL (the helpers' harness needs a database URL to load).
// Output: the access token on stdout.
import { randomBytes } from 'node:crypto';
import { approve, pkce, postForm } from '../tests/e2e/oauth_helpers.mjs';

const base = process.env.OM_BASE;
const redirectUri = 'http://127.0.0.1:9/callback';
const reg = await fetch(`${base}/oauth/register`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ client_name: 'oauth_me bench', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], application_type: 'native' }),
});
const client = await reg.json();
if (reg.status !== 201) throw new Error(`POST /oauth/register: ${reg.status} ${JSON.stringify(client)}`);

const { verifier, challenge } = pkce();
const url = new URL(`${base}/oauth/authorize`);
for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri,
  code_challenge: challenge, code_challenge_method: 'S256', state: randomBytes(8).toString('hex'), scope: 'transcribe',
  resource: base })) url.searchParams.set(k, v);
const { code } = await approve(url, { email: process.env.OM_EMAIL, password: process.env.OM_PASSWORD });
const token = await postForm(`${base}/oauth/token`, { grant_type: 'authorization_code', code, redirect_uri: redirectUri,
  client_id: client.client_id, code_verifier: verifier, resource: base });
if (token.status !== 200) throw new Error(`POST /oauth/token: ${token.status} ${token.text}`);
process.stdout.write(`${token.json.access_token}\n`);

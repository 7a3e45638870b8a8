// OAuth 2.1 (issue 31) driven by the client libraries people use, against the
// real server:
// - @modelcontextprotocol/sdk 1.x's Client + StreamableHTTPClientTransport with
//   an OAuthClientProvider written as MCP clients write theirs (the SDK's
//   examples/client/simpleOAuthClientProvider, plus state, discovery state and
//   invalidateCredentials as Claude and VS Code keep them). It knows only
//   {base}/mcp: the first request's 401 leads it to the protected-resource
//   metadata and the authorization server's metadata; it registers (a web
//   agent with a Client ID Metadata Document served from a loopback https
//   server, a native agent with Dynamic Client Registration and a loopback
//   redirect); the person signs in and consents through the real pages (the
//   forms submitted as a browser would, oauth_helpers authorize()); the SDK
//   exchanges the code, calls tools, refreshes when the access token expired
//   (a 5 s access-token lifetime on that server) and, once the grant is
//   revoked (by the client, then by the person disconnecting it), asks the
//   person to authorize again. The same life once more with
//   the 2.x client (@modelcontextprotocol/client) in `auto` mode, which speaks
//   2026-07-28 and checks the callback's iss itself.
// - oauth4webapi, an independent OAuth library, for code + PKCE with the
//   checks it makes (state, iss), resource binding between the REST API
//   ({base}) and /mcp ({base}/mcp), refresh rotation and revocation.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import * as sdk2 from '@modelcontextprotocol/client';
import * as oauth from 'oauth4webapi';
import { admin, startServer } from './harness.mjs';
import { approve, authorize, CookieJar, newUser, postForm, startCimdServer } from './oauth_helpers.mjs';

const ACCESS_TTL = 5; // seconds, on the MCP server only: the SDK must refresh
const insecure = { [oauth.allowInsecureRequests]: true }; // the test servers speak http on loopback

let cimd;
let mcpServer; // short-lived access tokens
let restServer; // the default lifetime
before(async () => {
  cimd = await startCimdServer();
  const common = { ...cimd.env, SCRIBE_RATE_LIMIT_PER_MINUTE: '100000' };
  mcpServer = await startServer({ extraEnv: { ...common, SCRIBE_OAUTH_ACCESS_TTL_SECONDS: String(ACCESS_TTL) } });
  restServer = await startServer({ extraEnv: common });
});
after(async () => {
  await mcpServer?.stop();
  await restServer?.stop();
  await cimd?.close();
});

// ---------------------------------------------------------------------------
// The MCP SDK.

// An OAuthClientProvider as an MCP client keeps one, in memory.
class AgentProvider {
  constructor({ redirectUrl, clientMetadata, clientMetadataUrl }) {
    this._redirectUrl = redirectUrl;
    this._clientMetadata = clientMetadata;
    this.clientMetadataUrl = clientMetadataUrl;
    this.authorizationUrls = []; // every URL the SDK asked us to open in the browser
    this.states = [];
    this.invalidated = [];
  }
  get redirectUrl() { return this._redirectUrl; }
  get clientMetadata() { return this._clientMetadata; }
  state() {
    const s = randomBytes(16).toString('base64url');
    this.states.push(s);
    return s;
  }
  clientInformation() { return this._clientInformation; }
  saveClientInformation(info) { this._clientInformation = info; }
  tokens() { return this._tokens; }
  saveTokens(tokens) { this._tokens = tokens; }
  redirectToAuthorization(url) { this.authorizationUrls.push(new URL(url)); }
  saveCodeVerifier(v) { this._codeVerifier = v; }
  codeVerifier() {
    if (!this._codeVerifier) throw new Error('no code verifier saved');
    return this._codeVerifier;
  }
  saveDiscoveryState(state) { this._discovery = state; }
  discoveryState() { return this._discovery; }
  invalidateCredentials(scope) {
    this.invalidated.push(scope);
    if (scope === 'all' || scope === 'client') this._clientInformation = undefined;
    if (scope === 'all' || scope === 'tokens') this._tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this._codeVerifier = undefined;
    if (scope === 'all' || scope === 'discovery') this._discovery = undefined;
  }
}

// A fetch that records what the SDK sends: {method, url, status, headers (of
// the response), form (form bodies, parsed) or body, protocol (the request's
// MCP-Protocol-Version)}.
function recordingFetch(log) {
  return async (input, init = {}) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const res = await fetch(input, init);
    const entry = { method: init.method ?? 'GET', url, status: res.status, headers: res.headers,
      protocol: new Headers(init.headers).get('mcp-protocol-version') ?? undefined };
    if (init.body instanceof URLSearchParams) entry.form = new URLSearchParams(init.body);
    else if (typeof init.body === 'string') entry.body = init.body;
    log.push(entry);
    return res;
  };
}

// The two official TypeScript SDKs: 1.x (@modelcontextprotocol/sdk, speaks
// 2025-11-25; finishAuth takes the code, the application checks state and iss)
// and 2.x (@modelcontextprotocol/client in `auto` mode, which negotiates
// 2026-07-28; finishAuth takes the callback's parameters and checks iss itself).
const SDK1 = {
  name: 'sdk 1.x',
  client: (name) => new Client({ name, version: '1.0.0' }),
  transport: (url, opts) => new StreamableHTTPClientTransport(url, opts),
  UnauthorizedError,
  finishAuth: (transport, authorization) => transport.finishAuth(authorization.code),
};
const SDK2 = {
  name: 'client 2.x',
  client: (name) => new sdk2.Client({ name, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } }),
  transport: (url, opts) => new sdk2.StreamableHTTPClientTransport(url, opts),
  UnauthorizedError: sdk2.UnauthorizedError,
  finishAuth: (transport, authorization) => transport.finishAuth(authorization.redirect.searchParams),
};

// Connects `client` to /mcp as the SDKs' examples do: connect; on
// UnauthorizedError the person authorizes in the browser (here: the forms, as a
// browser submits them), the callback goes to transport.finishAuth, and a new
// transport connects. Returns {transport, authorization (authorize()'s result
// or undefined when none was needed)}.
async function connect(sdk, client, mcpUrl, provider, { user, jar, fetchFn }) {
  const transportOf = () => sdk.transport(new URL(mcpUrl), { authProvider: provider, fetch: fetchFn });
  let transport = transportOf();
  try {
    await client.connect(transport);
    return { transport, authorization: undefined };
  } catch (err) {
    if (!(err instanceof sdk.UnauthorizedError)) throw err;
  }
  const url = provider.authorizationUrls.at(-1);
  assert.ok(url, 'the SDK asked for no authorization');
  const authorization = await approve(url, { email: user.email, password: user.password, jar });
  // What the client checks on its redirect URI: the state it sent and the
  // issuer it discovered (RFC 9207).
  assert.equal(authorization.state, provider.states.at(-1));
  assert.equal(authorization.iss, provider.discoveryState().authorizationServerMetadata.issuer);
  await sdk.finishAuth(transport, authorization);
  transport = transportOf();
  await client.connect(transport);
  return { transport, authorization };
}

const okResult = (result, name) => {
  assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result)}`);
  assert.equal(typeof result.structuredContent, 'object', name);
  return result.structuredContent;
};

// initialize with an access token, straight over HTTP (not through the SDK).
async function rawInitialize(base, accessToken) {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
  await res.body?.cancel();
  return res;
}

// Waits until the access token is refused on /mcp (it expires after
// ACCESS_TTL seconds); returns that 401.
async function expired(base, accessToken) {
  for (let i = 0; i < 200; i++) {
    const res = await rawInitialize(base, accessToken);
    if (res.status === 401) return res;
    assert.equal(res.status, 200);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the access token still worked after 20 s (lifetime ${ACCESS_TTL} s)`);
}

// One agent's whole life on /mcp, knowing nothing but the URL.
async function mcpAgentRun({ sdk = SDK1, provider, user, kind }) {
  const base = mcpServer.url;
  const mcpUrl = `${base}/mcp`;
  const log = [];
  const jar = new CookieJar();
  const client = sdk.client(`e2e-${kind}-agent`);

  // 1. Discovery from the 401, registration, authorization, token.
  const first = await connect(sdk, client, mcpUrl, provider, { user, jar, fetchFn: recordingFetch(log) });
  assert.ok(first.authorization, 'no authorization happened');
  const challenge = log[0];
  assert.equal(challenge.method, 'POST');
  assert.equal(challenge.url.href, mcpUrl);
  assert.equal(challenge.status, 401);
  const prmUrl = `${base}/.well-known/oauth-protected-resource/mcp`;
  const wwwAuth = challenge.headers.get('www-authenticate') ?? '';
  assert.match(wwwAuth, /^Bearer\b/);
  assert.ok(wwwAuth.includes(`resource_metadata="${prmUrl}"`), wwwAuth);
  const discovery = log.slice(1, 3).map((e) => `${e.method} ${e.url.href} ${e.status}`);
  assert.deepEqual(discovery, [`GET ${prmUrl} 200`, `GET ${base}/.well-known/oauth-authorization-server 200`]);
  const saved = provider.discoveryState();
  assert.equal(saved.resourceMetadata.resource, mcpUrl);
  assert.deepEqual(saved.resourceMetadata.authorization_servers, [base]);
  assert.equal(saved.authorizationServerMetadata.issuer, base);
  const registrations = log.filter((e) => e.url.pathname === '/oauth/register');
  const clientId = provider.clientInformation().client_id;
  if (kind === 'cimd') {
    assert.equal(registrations.length, 0, 'a client with a metadata document registered');
    assert.equal(clientId, provider.clientMetadataUrl);
    assert.ok(cimd.fetchesOf(new URL(clientId).pathname).length >= 1, 'the server never fetched the metadata document');
  } else {
    assert.equal(registrations.length, 1);
    assert.equal(registrations[0].status, 201);
    assert.match(clientId, /^dcr_/);
    assert.equal(provider.clientInformation().token_endpoint_auth_method, 'none');
    assert.deepEqual(provider.clientInformation().redirect_uris, [provider.redirectUrl]);
  }
  const authUrl = provider.authorizationUrls[0];
  assert.equal(authUrl.origin + authUrl.pathname, `${base}/oauth/authorize`);
  assert.equal(authUrl.searchParams.get('client_id'), clientId);
  assert.equal(authUrl.searchParams.get('resource'), mcpUrl);
  assert.equal(authUrl.searchParams.get('code_challenge_method'), 'S256');
  // The person saw the sign-in page, then the consent page naming the client
  // and where it sends them back.
  const pages = first.authorization.pages;
  assert.deepEqual(pages.map((p) => p.kind), ['sign-in', 'consent']);
  const consent = pages[1].text;
  assert.ok(consent.includes(provider.clientMetadata.client_name), consent);
  assert.ok(consent.includes(new URL(provider.redirectUrl).hostname), consent);
  const tokenCall = log.find((e) => e.url.pathname === '/oauth/token' && e.form?.get('grant_type') === 'authorization_code');
  assert.ok(tokenCall, 'no code exchange');
  assert.equal(tokenCall.status, 200);
  assert.equal(tokenCall.form.get('resource'), mcpUrl);
  assert.equal(tokenCall.headers.get('cache-control'), 'no-store');
  const tokens = provider.tokens();
  assert.match(tokens.token_type, /^bearer$/i);
  assert.match(tokens.access_token, /^sat_[A-Za-z0-9_-]{43}$/);
  assert.match(tokens.refresh_token, /^srt_[A-Za-z0-9_-]+$/);
  assert.ok(tokens.expires_in > 0 && tokens.expires_in <= ACCESS_TTL, `expires_in ${tokens.expires_in}`);

  // 2. Tools, as the person.
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of ['getAccount', 'listTranscriptions', 'transcribe']) assert.ok(names.includes(name), name);
  const account = okResult(await client.callTool({ name: 'getAccount', arguments: {} }), 'getAccount');
  assert.equal(account.email, user.email);
  assert.equal(String(account.user_id), String(user.accountId));
  const list = okResult(await client.callTool({ name: 'listTranscriptions', arguments: { limit: 5 } }), 'listTranscriptions');
  assert.ok(Array.isArray(list.data));

  // 3. The access token expires; the next call refreshes (rotating the
  // refresh token) and goes on in the same MCP session.
  const session = first.transport.sessionId;
  const before = provider.tokens();
  const refused = await expired(base, before.access_token);
  assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  const refreshesBefore = log.filter((e) => e.form?.get('grant_type') === 'refresh_token').length;
  const again = okResult(await client.callTool({ name: 'getAccount', arguments: {} }), 'getAccount after expiry');
  assert.equal(again.email, user.email);
  const refreshes = log.filter((e) => e.form?.get('grant_type') === 'refresh_token');
  assert.equal(refreshes.length, refreshesBefore + 1, 'the SDK did not refresh once');
  const refresh = refreshes.at(-1);
  assert.equal(refresh.status, 200);
  assert.equal(refresh.form.get('refresh_token'), before.refresh_token);
  assert.equal(refresh.form.get('client_id'), clientId);
  const after = provider.tokens();
  assert.notEqual(after.access_token, before.access_token);
  assert.notEqual(after.refresh_token, before.refresh_token, 'the refresh token was not rotated');
  assert.equal(first.transport.sessionId, session, 'the MCP session changed with the refresh');

  // 4. The client revokes its grant (RFC 7009, the revocation_endpoint it
  // discovered): access ends, and the SDK asks the person again.
  const revocationEndpoint = saved.authorizationServerMetadata.revocation_endpoint;
  assert.equal(revocationEndpoint, `${base}/oauth/revoke`);
  const current = provider.tokens();
  const revoked = await postForm(revocationEndpoint, { token: current.refresh_token, token_type_hint: 'refresh_token',
    client_id: clientId });
  assert.equal(revoked.status, 200, revoked.text);
  assert.equal((await rawInitialize(base, current.access_token)).status, 401, 'the access token outlived its grant');
  const asked = provider.authorizationUrls.length;
  await assert.rejects(client.callTool({ name: 'getAccount', arguments: {} }), sdk.UnauthorizedError);
  assert.equal(provider.authorizationUrls.length, asked + 1, 'the SDK did not ask for a new authorization');
  const failedRefresh = log.filter((e) => e.form?.get('grant_type') === 'refresh_token').at(-1);
  assert.equal(failedRefresh.form.get('refresh_token'), current.refresh_token);
  assert.equal(failedRefresh.status, 400);
  await client.close();

  // 5. The person authorizes again in the same browser (still signed in):
  // a client with an https redirect is remembered; one on loopback is asked
  // every time (anyone can claim such a client).
  const client2 = sdk.client(`e2e-${kind}-agent`);
  const second = await connect(sdk, client2, mcpUrl, provider, { user, jar, fetchFn: recordingFetch(log) });
  assert.ok(second.authorization);
  assert.deepEqual(second.authorization.pages.map((p) => p.kind), kind === 'cimd' ? [] : ['consent']);
  assert.equal(provider.clientInformation().client_id, clientId, 'the client registered again');
  assert.equal(okResult(await client2.callTool({ name: 'getAccount', arguments: {} }), 'getAccount').email, user.email);

  // 6. The person disconnects the app (scribe admin apps revoke): its next
  // call is refused and the SDK asks again; the consent is forgotten, so the
  // page is shown again whatever the client.
  admin('apps', 'revoke', '--email', user.email, '--client', clientId);
  const asked2 = provider.authorizationUrls.length;
  await assert.rejects(client2.callTool({ name: 'getAccount', arguments: {} }), sdk.UnauthorizedError);
  assert.equal(provider.authorizationUrls.length, asked2 + 1, 'the SDK did not ask for a new authorization');
  await client2.close();
  const client3 = sdk.client(`e2e-${kind}-agent`);
  const third = await connect(sdk, client3, mcpUrl, provider, { user, jar, fetchFn: recordingFetch(log) });
  assert.deepEqual(third.authorization?.pages.map((p) => p.kind), ['consent']);
  assert.equal(okResult(await client3.callTool({ name: 'getAccount', arguments: {} }), 'getAccount').email, user.email);
  await client3.close();
  return { consent: pages[1], log };
}

// How the consent page warns that every redirect stays on this computer.
const LOCAL_WARNING = /localhost|loopback|this computer|this device/i;
const AGENT_METADATA = { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
  token_endpoint_auth_method: 'none' };

test('MCP SDK, a web agent with a Client ID Metadata Document: discovery from the 401, sign-in, consent, tools, refresh, revocation', async () => {
  const user = newUser();
  const redirectUrl = 'https://agent.example/api/mcp/auth_callback';
  const metadata = { client_name: 'Example Web Agent', client_uri: 'https://agent.example', redirect_uris: [redirectUrl],
    ...AGENT_METADATA };
  const clientMetadataUrl = cimd.client('/clients/web-agent.json', metadata, { headers: { 'Cache-Control': 'max-age=300' } });
  const provider = new AgentProvider({ redirectUrl, clientMetadata: metadata, clientMetadataUrl });
  const { consent } = await mcpAgentRun({ provider, user, kind: 'cimd' });
  // Two authorizations, code exchanges and refreshes: one fetch, within its max-age.
  assert.equal(cimd.fetchesOf('/clients/web-agent.json').length, 1, 'the document was fetched again within its max-age');
  assert.doesNotMatch(consent.text, LOCAL_WARNING, 'a localhost warning for an https redirect');
});

test('MCP SDK, a native agent with Dynamic Client Registration and a loopback redirect: the same, consent asked every time', async () => {
  const user = newUser();
  const redirectUrl = `http://127.0.0.1:${40000 + Math.floor(Math.random() * 20000)}/callback`;
  const metadata = { client_name: 'Example Native Agent', redirect_uris: [redirectUrl], ...AGENT_METADATA };
  const provider = new AgentProvider({ redirectUrl, clientMetadata: metadata });
  const { consent } = await mcpAgentRun({ provider, user, kind: 'dcr' });
  assert.match(consent.text, LOCAL_WARNING, 'no warning that the redirect is on this computer');
});

test('MCP client 2.x in auto mode (2026-07-28), a native agent with DCR: the same, with the SDK checking iss on the callback', async () => {
  const user = newUser();
  const redirectUrl = `http://127.0.0.1:${40000 + Math.floor(Math.random() * 20000)}/callback`;
  const metadata = { client_name: 'Example Native Agent 2', redirect_uris: [redirectUrl], ...AGENT_METADATA };
  const provider = new AgentProvider({ redirectUrl, clientMetadata: metadata });
  const { consent, log } = await mcpAgentRun({ sdk: SDK2, provider, user, kind: 'dcr' });
  assert.match(consent.text, LOCAL_WARNING, 'no warning that the redirect is on this computer');
  // It did speak 2026-07-28 with its tokens.
  const calls = log.filter((e) => e.url.pathname === '/mcp' && e.method === 'POST' && e.body?.includes('"tools/call"'));
  assert.ok(calls.length >= 3, `${calls.length} tool calls`);
  assert.ok(calls.every((e) => e.protocol === '2026-07-28'), JSON.stringify(calls.map((e) => e.protocol)));
});

// ---------------------------------------------------------------------------
// oauth4webapi against the REST API and /mcp.

let as; // the authorization server's metadata, as oauth4webapi validated it
let rest; // {base, mcp}
let dcrClient; // a native client registered through oauth4webapi
const REGISTERED_REDIRECT = 'http://127.0.0.1/callback'; // loopback: any port at authorization time

async function discoverRest() {
  if (as) return;
  const base = restServer.url;
  rest = { base, mcp: `${base}/mcp` };
  const rs = await oauth.processResourceDiscoveryResponse(new URL(base),
    await oauth.resourceDiscoveryRequest(new URL(base), insecure));
  assert.equal(rs.resource, base);
  assert.deepEqual(rs.authorization_servers, [base]);
  const rsMcp = await oauth.processResourceDiscoveryResponse(new URL(rest.mcp),
    await oauth.resourceDiscoveryRequest(new URL(rest.mcp), insecure));
  assert.equal(rsMcp.resource, rest.mcp);
  assert.deepEqual(rsMcp.authorization_servers, [base]);
  const issuer = new URL(rs.authorization_servers[0]);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  assert.equal(as.issuer, base);
  assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
  assert.equal(as.authorization_response_iss_parameter_supported, true);
  const registered = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, {
    client_name: 'oauth4webapi e2e', redirect_uris: [REGISTERED_REDIRECT], grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'], token_endpoint_auth_method: 'none', application_type: 'native' }, insecure));
  assert.equal(registered.client_secret, undefined);
  dcrClient = { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
}

// Code + PKCE for `resources` (none: the server's default); returns the
// token endpoint response (oauth4webapi-validated) and the raw headers.
async function codeFlow(user, resources, { jar = new CookieJar() } = {}) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const redirectUri = `http://127.0.0.1:${40000 + Math.floor(Math.random() * 20000)}/callback`;
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', dcrClient.client_id);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('state', state);
  url.searchParams.set('scope', 'transcribe');
  for (const r of resources) url.searchParams.append('resource', r);
  const result = await approve(url, { email: user.email, password: user.password, jar });
  // Checks state and iss (the metadata says iss is always sent).
  const params = oauth.validateAuthResponse(as, dcrClient, result.redirect, state);
  const additionalParameters = new URLSearchParams(resources.map((r) => ['resource', r]));
  const response = await oauth.authorizationCodeGrantRequest(as, dcrClient, oauth.None(), params, redirectUri, verifier,
    { additionalParameters, ...insecure });
  const headers = response.headers;
  const tokens = await oauth.processAuthorizationCodeResponse(as, dcrClient, response);
  return { tokens, headers };
}

// GET /api/v1/me with an access token: {status, json, challenge (the
// WWW-Authenticate parameters of a 401)}.
async function me(accessToken) {
  try {
    const res = await oauth.protectedResourceRequest(accessToken, 'GET', new URL(`${rest.base}/api/v1/me`), new Headers(), null, insecure);
    return { status: res.status, json: await res.json() };
  } catch (err) {
    if (!(err instanceof oauth.WWWAuthenticateChallengeError)) throw err;
    return { status: err.status, json: await err.response.json(), challenge: err.cause[0] };
  }
}

// POST /mcp initialize with an access token: {status, challenge}.
async function mcpInit(accessToken) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'oauth4webapi', version: '1' } } });
  const headers = new Headers({ 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' });
  try {
    const res = await oauth.protectedResourceRequest(accessToken, 'POST', new URL(rest.mcp), headers, body, insecure);
    await res.body?.cancel();
    return { status: res.status };
  } catch (err) {
    if (!(err instanceof oauth.WWWAuthenticateChallengeError)) throw err;
    await err.response.body?.cancel();
    return { status: err.status, challenge: err.cause[0] };
  }
}

// A 401 of a token that failed on `resource`: the spec's envelope, and the
// challenge naming the resource's metadata.
function refusedToken(res, prm) {
  assert.equal(res.status, 401);
  assert.equal(res.challenge?.scheme, 'bearer');
  assert.equal(res.challenge.parameters.error, 'invalid_token');
  assert.equal(res.challenge.parameters.resource_metadata, prm);
}

test('oauth4webapi: discovery, registration, code + PKCE for the REST API: works on /api/v1 and /v1, refused on /mcp', async () => {
  await discoverRest();
  const user = newUser();
  const { tokens, headers } = await codeFlow(user, [rest.base]);
  assert.equal(headers.get('cache-control'), 'no-store');
  assert.equal(tokens.token_type.toLowerCase(), 'bearer');
  const res = await me(tokens.access_token);
  assert.equal(res.status, 200, JSON.stringify(res.json));
  assert.equal(res.json.email, user.email);
  assert.equal(res.json.oauth?.client_id, dcrClient.client_id);
  assert.equal(res.json.api_key, undefined);
  const models = await fetch(`${rest.base}/v1/models`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
  assert.equal(models.status, 200, await models.text());
  refusedToken(await mcpInit(tokens.access_token), `${rest.base}/.well-known/oauth-protected-resource/mcp`);
});

test('oauth4webapi: no resource asked: the documented default is the REST API', async () => {
  await discoverRest();
  const user = newUser();
  const { tokens } = await codeFlow(user, []);
  assert.equal((await me(tokens.access_token)).status, 200);
  refusedToken(await mcpInit(tokens.access_token), `${rest.base}/.well-known/oauth-protected-resource/mcp`);
});

test('oauth4webapi: a token for {base}/mcp works on /mcp and is refused by the REST API (unauthenticated)', async () => {
  await discoverRest();
  const user = newUser();
  const { tokens } = await codeFlow(user, [rest.mcp]);
  assert.equal((await mcpInit(tokens.access_token)).status, 200);
  const res = await me(tokens.access_token);
  refusedToken(res, `${rest.base}/.well-known/oauth-protected-resource`);
  assert.equal(res.json.error?.code, 'unauthenticated');
});

test('oauth4webapi: a token for both works on both; a refresh narrows it to /mcp and cannot widen it back', async () => {
  await discoverRest();
  const user = newUser();
  const { tokens } = await codeFlow(user, [rest.base, rest.mcp]);
  assert.equal((await me(tokens.access_token)).status, 200);
  assert.equal((await mcpInit(tokens.access_token)).status, 200);
  const narrowed = await oauth.processRefreshTokenResponse(as, dcrClient, await oauth.refreshTokenGrantRequest(as, dcrClient,
    oauth.None(), tokens.refresh_token, { additionalParameters: { resource: rest.mcp }, ...insecure }));
  assert.equal((await mcpInit(narrowed.access_token)).status, 200);
  refusedToken(await me(narrowed.access_token), `${rest.base}/.well-known/oauth-protected-resource`);
  // The grant is still for both: a later refresh may ask for the REST API.
  const rest2 = await oauth.processRefreshTokenResponse(as, dcrClient, await oauth.refreshTokenGrantRequest(as, dcrClient,
    oauth.None(), narrowed.refresh_token, { additionalParameters: { resource: rest.base }, ...insecure }));
  assert.equal((await me(rest2.access_token)).status, 200);
  // A grant for /mcp alone never yields a token for the REST API.
  const mcpOnly = (await codeFlow(user, [rest.mcp])).tokens;
  const widen = await oauth.refreshTokenGrantRequest(as, dcrClient, oauth.None(), mcpOnly.refresh_token,
    { additionalParameters: { resource: rest.base }, ...insecure });
  await assert.rejects(oauth.processRefreshTokenResponse(as, dcrClient, widen), (err) => {
    assert.ok(err instanceof oauth.ResponseBodyError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.error, 'invalid_target');
    return true;
  });
});

test('oauth4webapi: refresh rotation: each refresh returns a new pair that works', async () => {
  await discoverRest();
  const user = newUser();
  const { tokens } = await codeFlow(user, [rest.base]);
  let current = tokens;
  const seen = new Set([tokens.access_token, tokens.refresh_token]);
  for (let i = 0; i < 3; i++) {
    const response = await oauth.refreshTokenGrantRequest(as, dcrClient, oauth.None(), current.refresh_token,
      { additionalParameters: { resource: rest.base }, ...insecure });
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const next = await oauth.processRefreshTokenResponse(as, dcrClient, response);
    assert.ok(next.refresh_token, 'no new refresh token');
    assert.ok(!seen.has(next.access_token) && !seen.has(next.refresh_token), 'a token came back twice');
    seen.add(next.access_token).add(next.refresh_token);
    const res = await me(next.access_token);
    assert.equal(res.status, 200);
    assert.equal(res.json.email, user.email);
    current = next;
  }
});

test('oauth4webapi: revocation: an access token revokes itself, a refresh token its whole grant', async () => {
  await discoverRest();
  const user = newUser();
  const { tokens } = await codeFlow(user, [rest.base]);
  const revoke = async (token, hint) =>
    oauth.processRevocationResponse(await oauth.revocationRequest(as, dcrClient, oauth.None(), token,
      { additionalParameters: hint ? { token_type_hint: hint } : {}, ...insecure }));
  // The access token alone: refused at once; the refresh token still works.
  await revoke(tokens.access_token, 'access_token');
  const gone = await me(tokens.access_token);
  refusedToken(gone, `${rest.base}/.well-known/oauth-protected-resource`);
  assert.equal(gone.json.error?.code, 'unauthenticated');
  const next = await oauth.processRefreshTokenResponse(as, dcrClient, await oauth.refreshTokenGrantRequest(as, dcrClient,
    oauth.None(), tokens.refresh_token, { additionalParameters: { resource: rest.base }, ...insecure }));
  assert.equal((await me(next.access_token)).status, 200);
  // The refresh token: the grant ends, its access token with it.
  await revoke(next.refresh_token);
  refusedToken(await me(next.access_token), `${rest.base}/.well-known/oauth-protected-resource`);
  const again = await oauth.refreshTokenGrantRequest(as, dcrClient, oauth.None(), next.refresh_token, insecure);
  await assert.rejects(oauth.processRefreshTokenResponse(as, dcrClient, again), (err) => {
    assert.ok(err instanceof oauth.ResponseBodyError, String(err));
    assert.equal(err.error, 'invalid_grant');
    return true;
  });
  // RFC 7009 2.2: an unknown token is answered 200 as well.
  await revoke(`srt_${randomBytes(32).toString('base64url')}`);
});

test('oauth4webapi: the person denies: access_denied with state and iss, no code', async () => {
  await discoverRest();
  const user = newUser();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint);
  const redirectUri = 'http://127.0.0.1:45678/callback';
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: dcrClient.client_id, redirect_uri: redirectUri,
    code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()), code_challenge_method: 'S256',
    state, resource: rest.base })) url.searchParams.set(k, v);
  const result = await authorize(url, { email: user.email, password: user.password, decision: 'deny' });
  assert.equal(result.code, undefined);
  assert.equal(result.redirect?.origin + result.redirect?.pathname, redirectUri);
  assert.throws(() => oauth.validateAuthResponse(as, dcrClient, result.redirect, state), (err) => {
    assert.ok(err instanceof oauth.AuthorizationResponseError, String(err));
    assert.equal(err.error, 'access_denied');
    return true;
  });
  assert.equal(result.state, state);
  assert.equal(result.iss, as.issuer);
});

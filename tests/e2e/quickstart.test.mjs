// README's quick start, run verbatim: `bash scripts/run.sh` (the set-up
// command a new user types) on a private data directory and free ports, then
// the README's walkthrough block with bash, as a user would paste it, with
// KEY set to the key run.sh printed. And the web console run.sh built and
// announced: its address answers, and the printed demo password signs in.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { consoleTokens } from './oauth_helpers.mjs';

const ROOT = new URL('../..', import.meta.url).pathname;

function freePort() {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// The ```sh block between the quickstart markers of README.md.
function walkthrough() {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const m = readme.match(/<!-- quickstart -->\s*```sh\n([\s\S]*?)```\s*<!-- \/quickstart -->/);
  assert.ok(m, 'README.md has no quickstart block');
  return m[1];
}

test('the README quick start works against the server scripts/run.sh starts', { timeout: 600_000 }, async () => {
  const data = mkdtempSync(join(tmpdir(), 'scribe-quickstart-'));
  chmodSync(data, 0o755);  // the cluster runs as the postgres user when we are root
  const [pgPort, port] = [await freePort(), await freePort()];
  const env = { ...process.env, SCRIBE_DATA_DIR: data, SCRIBE_PG_PORT: String(pgPort), SCRIBE_PORT: String(port),
    SCRIBE_METRICS_ADDR: 'off', SCRIBE_LOG_LEVEL: 'warn' };
  delete env.SCRIBE_DATABASE_URL;
  delete env.SCRIBE_OBJECT_STORE_DIR;
  const run = spawn('bash', ['scripts/run.sh'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  run.stdout.on('data', (d) => { out += d; });
  run.stderr.on('data', (d) => { err += d; });
  try {
    let key, signIn;
    for (let i = 0; i < 3000 && !(key && signIn); i++) {
      if (run.exitCode !== null) throw new Error(`run.sh exited ${run.exitCode}: ${out}\n${err}`);
      key = out.match(/key_live_[A-Za-z0-9_-]+/)?.[0];
      signIn = out.match(/web console: (\S+)\n\s*sign in as (\S+) with password (\S+)/);
      if (!(key && signIn)) await sleep(100);
    }
    assert.ok(key, `run.sh printed no key: ${out}`);
    assert.ok(signIn, `run.sh printed no console sign-in: ${out}`);
    const api = `http://127.0.0.1:${port}/api/v1`;
    let up = false;
    for (let i = 0; i < 600 && !up; i++) {
      try { up = (await fetch(`http://127.0.0.1:${port}/healthz`)).ok; } catch { await sleep(100); }
    }
    assert.ok(up, `the server did not come up: ${err}`);

    // The console: built by run.sh and served at the printed address; the
    // printed password signs the demo account in.
    const [, consoleUrl, email, password] = signIn;
    assert.equal(consoleUrl, `http://127.0.0.1:${port}/app`);
    const page = await fetch(consoleUrl);
    const html = await page.text();
    assert.equal(page.status, 200, html);
    assert.match(html, /<script type="module" src="\/app\/assets\//);
    const { access_token: consoleToken } = await consoleTokens(`http://127.0.0.1:${port}`, { email, password });
    const me = await (await fetch(`${api}/me`, { headers: { Authorization: `Bearer ${consoleToken}` } })).json();
    assert.equal(me.email, 'demo@scribe.local');
    assert.equal(me.oauth.client_id, 'scribe-console');

    const cwd = mkdtempSync(join(tmpdir(), 'scribe-quickstart-cwd-'));
    const output = execFileSync('bash', ['-euo', 'pipefail', '-c', walkthrough()],
      { cwd, env: { ...process.env, KEY: key, API: api }, encoding: 'utf8', timeout: 300_000 });
    // The quote and the final state are printed by jq; then the transcript and the SRT.
    assert.match(output, /"status": "completed"/, output);
    const charge = Number(output.match(/"charge_usd": ([0-9.e-]+)/)?.[1]);
    assert.ok(charge > 0 && charge <= 0.05, `charged ${charge}: ${output}`);
    assert.match(output, /SPEAKER_00: /, output);
    assert.match(output.toLowerCase(), /library|morning|nine|five/, output);
    assert.match(output, /^1\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\n/m, output);
  } finally {
    run.kill('SIGTERM');
    await new Promise((resolve) => (run.exitCode !== null ? resolve() : run.on('exit', resolve)));
    execFileSync('bash', ['scripts/pg.sh', 'stop', join(data, 'postgres')], { cwd: ROOT });
  }
});

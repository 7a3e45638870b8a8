// The one configuration, through the real binary: a bad setting stops
// `scribe serve` with the setting's name, the value, its source and what is
// allowed; `scribe config` shows where each value came from with secrets
// masked; `--check` exits non-zero; a settings file is honoured by serve.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, newAccount, curl, envelope, BIN, DB } from './harness.mjs';

const scribe = (args, env = {}) =>
  spawnSync(BIN, args, { env: { ...process.env, SCRIBE_DATABASE_URL: DB, ...env }, encoding: 'utf8', timeout: 30000 });

const dir = mkdtempSync(join(tmpdir(), 'scribe-e2e-config-'));

test('a bad environment value stops scribe serve, naming the setting, value, source and what is allowed', () => {
  const portFile = join(dir, 'port-bad-env');
  const r = scribe(['serve', '--port-file', portFile, '--metrics-addr', 'off'], { SCRIBE_WORKER_SLOTS: 'two' });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /SCRIBE_WORKER_SLOTS='two' \(environment\): not an integer; allowed: an integer from 0 to 256/);
  assert.equal(existsSync(portFile), false, 'nothing listened');
});

test('a bad flag stops scribe serve with its name', () => {
  const r = scribe(['serve', '--port', '80x', '--metrics-addr', 'off']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /SCRIBE_PORT='80x' \(flag --port\): not an integer; allowed: an integer from 0 to 65535/);
  const level = scribe(['serve', '--metrics-addr', 'off'], { SCRIBE_LOG_LEVEL: 'loud' });
  assert.equal(level.status, 2);
  assert.match(level.stderr, /SCRIBE_LOG_LEVEL='loud' \(environment\): .*allowed: debug, info, warn or error/);
});

test('scribe config prints each value with its source and masks secrets', () => {
  const file = join(dir, 'show.conf');
  writeFileSync(file, '# settings\nSCRIBE_DB_POOL=5\nSCRIBE_OPENAI_ASR_API_KEY=sk-very-secret\n');
  const r = scribe(['config', '--config', file, '--io-threads', '3'], {
    SCRIBE_DATABASE_URL: 'postgresql://scribe:hunter2@db.example:5432/scribe',
    SCRIBE_WORKER_SLOTS: '2',
  });
  assert.equal(r.status, 0, r.stderr);
  const line = (name) => r.stdout.split('\n').find((l) => l.startsWith(`${name}=`));
  assert.match(line('SCRIBE_DB_POOL'), /^SCRIBE_DB_POOL=5\s+# file$/);
  assert.match(line('SCRIBE_IO_THREADS'), /^SCRIBE_IO_THREADS=3\s+# flag$/);
  assert.match(line('SCRIBE_WORKER_SLOTS'), /^SCRIBE_WORKER_SLOTS=2\s+# environment$/);
  assert.match(line('SCRIBE_PORT'), /^SCRIBE_PORT=8080\s+# default$/);
  assert.match(line('SCRIBE_DATABASE_URL'), /^SCRIBE_DATABASE_URL=postgresql:\/\/scribe:\*\*\*\*@db\.example:5432\/scribe\s+# environment$/);
  assert.match(line('SCRIBE_OPENAI_ASR_API_KEY'), /=\*\*\*\*\s+# file$/);
  assert.ok(!r.stdout.includes('hunter2') && !r.stdout.includes('sk-very-secret'), 'no secret printed');
  assert.match(r.stdout, new RegExp(`^# file: ${file}$`, 'm'));
});

test('scribe config --check exits 0 when valid and 2 naming the first bad setting', () => {
  const ok = scribe(['config', '--check']);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /configuration ok/);
  const file = join(dir, 'bad.conf');
  writeFileSync(file, 'SCRIBE_PORT=8080\nSCRIBE_WEBHOOK_LEASE_SECONDS=5\n');
  const bad = scribe(['config', '--check', '--config', file]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /SCRIBE_WEBHOOK_LEASE_SECONDS='5' \(file\): out of range; allowed: an integer from 11 to 86400/);
  writeFileSync(file, 'SCRIBE_PORTT=8080\n');
  const unknown = scribe(['config', '--check', '--config', file]);
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /bad\.conf:1: unknown setting SCRIBE_PORTT/);
  const missing = scribe(['config', '--check'], { SCRIBE_CONFIG: join(dir, 'nope.conf') });
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /nope\.conf cannot be read/);
});

test('scribe serve honours a settings file, and the environment wins over it', async () => {
  const file = join(dir, 'serve.conf');
  writeFileSync(file, 'SCRIBE_RATE_LIMIT_PER_MINUTE=2\n');
  const server = await startServer({ args: ['--config', file] });
  try {
    const { key } = newAccount();
    for (let i = 0; i < 2; i++) assert.equal((await curl(`${server.url}/api/v1/me`, { key })).status, 200);
    envelope(assert, await curl(`${server.url}/api/v1/me`, { key }), 429, 'rate_limited');
  } finally {
    await server.stop();
  }
  const other = await startServer({ args: ['--config', file], extraEnv: { SCRIBE_RATE_LIMIT_PER_MINUTE: '100' } });
  try {
    const { key } = newAccount();
    for (let i = 0; i < 4; i++) assert.equal((await curl(`${other.url}/api/v1/me`, { key })).status, 200);
  } finally {
    await other.stop();
  }
});

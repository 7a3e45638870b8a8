// A real webhook receiver on 127.0.0.1 for the tests: HTTPS with a
// self-signed certificate made by the openssl CLI (the server trusts it via
// SCRIBE_OUTBOUND_CA_FILE), or plain HTTP for per-request callbacks. Every
// request is recorded with its raw body, and the signature is verified here
// with Node's crypto, independently of the server's code.
import { createServer as createHttps } from 'node:https';
import { createServer as createHttp } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const TOLERANCE_SECONDS = 300;

export function selfSignedCertificate() {
  const dir = mkdtempSync(join(tmpdir(), 'scribe-tls-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert,
    '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { keyPath: key, certPath: cert, key: readFileSync(key), cert: readFileSync(cert) };
}

// Verifies X-Service-Signature over the raw body: returns null when valid,
// else why not.
export function verifySignature(secret, header, rawBody, nowSeconds = Math.floor(Date.now() / 1000)) {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header || '');
  if (!m) return `malformed signature header: ${header}`;
  const t = Number(m[1]);
  if (Math.abs(nowSeconds - t) > TOLERANCE_SECONDS) return `timestamp ${t} is outside the tolerance`;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${rawBody}`).digest();
  const given = Buffer.from(m[2], 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'signature mismatch';
  return null;
}

// Behaviour by path: /ok answers 200; /fail 500; /hang never answers;
// /flaky-<n>-<name> fails its first n requests then answers 204;
// /slow-<ms> answers 200 after ms milliseconds; /redirect answers 302.
export async function startReceiver({ tls } = {}) {
  const requests = [];
  const counts = new Map();
  const hanging = new Set();
  const handler = (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const raw = Buffer.concat(chunks).toString('utf8');
      let json;
      try { json = JSON.parse(raw); } catch { json = undefined; }
      const path = req.url;
      requests.push({ path, method: req.method, headers: req.headers, raw, json, at });
      const n = (counts.get(path) || 0) + 1;
      counts.set(path, n);
      const flaky = /^\/flaky-(\d+)-/.exec(path);
      const slow = /^\/slow-(\d+)/.exec(path);
      if (path === '/hang') { hanging.add(res); return; }
      if (path === '/fail') { res.writeHead(500); res.end('no'); return; }
      if (path === '/redirect') { res.writeHead(302, { Location: '/ok' }); res.end(); return; }
      if (flaky && n <= Number(flaky[1])) { res.writeHead(503); res.end('later'); return; }
      if (slow) { setTimeout(() => { res.writeHead(200); res.end('ok'); }, Number(slow[1])); return; }
      res.writeHead(flaky ? 204 : 200);
      res.end(flaky ? undefined : 'ok');
    });
  };
  const server = tls ? createHttps({ key: tls.key, cert: tls.cert }, handler) : createHttp(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `${tls ? 'https' : 'http'}://127.0.0.1:${server.address().port}`;
  return {
    url: (path) => `${base}${path}`,
    requests,
    to: (path) => requests.filter((r) => r.path === path),
    async waitFor(pred, count = 1, timeoutMs = 60000) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const got = requests.filter(pred);
        if (got.length >= count) return got;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`receiver: expected ${count} matching requests within ${timeoutMs} ms, got ` +
        `${requests.filter(pred).length}; paths seen: ${requests.map((r) => r.path).join(' ')}`);
    },
    close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections?.();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

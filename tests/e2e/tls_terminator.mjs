// TLS in front of a test server, for clients that refuse plain http:/ws:
// (AssemblyAI's SDK throws "Invalid protocol, must be wss" before it
// connects). A self-signed certificate for 127.0.0.1 and localhost is made
// on the spot with the openssl CLI, and a raw TLS listener on loopback pipes
// each decrypted connection to the server's plain port byte for byte, so
// HTTP requests and WebSocket upgrades pass alike. A client trusts the
// certificate through NODE_EXTRA_CA_CERTS, which Node reads only at start:
// run such a client as a child process with `trustEnv(cert)`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import { connect } from 'node:net';

// A fresh self-signed certificate (EC P-256, one day) for the loopback names.
// Returns {certPath, keyPath, cert, key}.
export function makeCertificate() {
  const dir = mkdtempSync(join(tmpdir(), 'scribe-tls-'));
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyPath, '-out', certPath, '-days', '1', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-addext', 'basicConstraints=critical,CA:TRUE'], { stdio: 'ignore' });
  return { certPath, keyPath, cert: readFileSync(certPath), key: readFileSync(keyPath) };
}

// Listens on a free loopback port with `tls` ({cert, key}) and forwards to
// 127.0.0.1:`targetPort`. Returns {port, connections(), close()}.
export async function startTlsTerminator(targetPort, { cert, key }) {
  const sockets = new Set();
  let accepted = 0;
  const server = createServer({ cert, key }, (client) => {
    accepted++;
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    const drop = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream); };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  // A failed handshake (a client that does not trust us) is the client's
  // business; the listener stays up.
  server.on('tlsClientError', () => {});
  await new Promise((resolve, reject) => server.listen(0, '127.0.0.1', resolve).once('error', reject));
  return {
    port: server.address().port,
    connections: () => accepted,
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

// The environment of a child Node process that trusts `certPath`.
export const trustEnv = (certPath) => ({ ...process.env, NODE_EXTRA_CA_CERTS: certPath });

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer as createHttps, type Server } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { tempDir } from '../helpers/hookd.js';

/** Undefined when openssl can make a test certificate; otherwise why not. */
export function opensslSkipReason(): string | undefined {
  const r = spawnSync('openssl', ['version'], { stdio: 'ignore' });
  return r.status === 0 ? undefined : 'no openssl to make a test certificate (apt-get install openssl)';
}

export interface TlsFront {
  /** `https://localhost:PORT`. */
  url: string;
  close(): Promise<void>;
}

/**
 * A TLS-terminating proxy in front of hookd's console listener, as an operator runs one: it
 * answers https on localhost with a throw-away self-signed certificate and passes requests and
 * WebSocket upgrades on with `X-Forwarded-Proto: https` (hookd must trust 127.0.0.1 as a proxy).
 */
export async function startTlsFront(target: string): Promise<TlsFront> {
  const dir = tempDir('hookd-tls-');
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  const made = spawnSync('openssl', [
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
    ...['-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost'],
    ...['-addext', 'subjectAltName=DNS:localhost'],
  ]);
  if (made.status !== 0) throw new Error(`openssl: ${made.stderr.toString()}`);
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const server: Server = createHttps({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const up = httpRequest(
      {
        host: hostname,
        port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-forwarded-proto': 'https' },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  server.on('upgrade', (req, client: Socket, head: Buffer) => {
    const up = connect({ host: hostname, port: Number(port) }, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2)
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      lines.push('X-Forwarded-Proto: https', '', '');
      up.write(lines.join('\r\n'));
      up.write(head);
      client.pipe(up).pipe(client);
    });
    for (const s of [client, up]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        up.destroy();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://localhost:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

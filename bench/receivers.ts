/**
 * Receivers as they are: the callback path to an HTTPS receiver that wants a client certificate
 * (mTLS) and to one that wants an OAuth2 bearer token, beside a plain HTTPS receiver, through one
 * real hookd (bin/hookd.js on loopback). Every signing secret is sealed at rest (hookd encrypts
 * each one under its secrets key), so every row carries that cost; no row goes without it.
 *
 * Three hooks, three receivers in this process, each an HTTPS server on 127.0.0.1 with a
 * certificate the bench makes with openssl: `plain` (the hook's Tls holds only the CA, so hookd
 * trusts the receiver), `mtls` (the receiver requires a client certificate; the hook's Tls holds
 * the client certificate and key), `oauth2` (the receiver wants `Authorization: Bearer`; the
 * token endpoint is a real oidc-provider with a client-credentials client issuing JWTs, and the
 * receiver verifies each distinct token once with jose against the provider's JWKS, then
 * compares, as a gateway with a token cache does). Callbacks are fired with `POST /_hookd/report`
 * in batches; a round is N callbacks to one hook, timed from the first report until the receiver
 * has all N, with hookd's CPU (utime + stime from /proc) read before and after. After a warm-up,
 * rounds go plain, mtls, oauth2, repeated, so that a drift of the shared machine touches all three.
 *
 *   node dist/bench/receivers.js [callbacks=3000] [rounds=5] [warmup=300]
 */
import { rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { loadavg } from 'node:os';
import { createRemoteJWKSet, jwtVerify } from 'jose';
// @ts-expect-error: oidc-provider ships no type declarations (and @types/oidc-provider is not installed).
import Provider from 'oidc-provider';
import { makeCertificates } from '../test/helpers/certificates.js';
import { startHookd, tempDir } from './lib/peers.js';
import { cpuSeconds, sleep } from './lib/process.js';

const N = Number(process.argv[2] ?? 3000);
const ROUNDS = Number(process.argv[3] ?? 5);
const WARMUP = Number(process.argv[4] ?? 300);
const BATCH = 250;
const IN_FLIGHT = 4;
const AUDIENCE = 'https://receiver.example/';
const CLIENT_SECRET = 'bench-client-secret-7d3e';
const KINDS = ['plain', 'mtls', 'oauth2'] as const;
type Kind = (typeof KINDS)[number];

interface Receiver {
  url: string;
  received: number;
  refused: number;
  close(): Promise<void>;
}

async function listen(server: NetServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** An HTTPS receiver counting callbacks; `admit` says whether a request is let in (true) or refused 401. */
async function startReceiver(
  pem: ReturnType<typeof makeCertificates>,
  requireClientCert: boolean,
  admit: (req: IncomingMessage) => boolean | Promise<boolean>,
): Promise<Receiver> {
  const r: Receiver = { url: '', received: 0, refused: 0, close: async () => undefined };
  const server = createHttpsServer(
    {
      cert: pem.serverCert,
      key: pem.serverKey,
      ca: pem.ca,
      requestCert: requireClientCert,
      rejectUnauthorized: requireClientCert,
      keepAliveTimeout: 120_000,
    },
    (req, res) => {
      req.resume();
      req.on('end', async () => {
        if (await admit(req)) {
          r.received++;
          res.writeHead(200).end();
        } else {
          r.refused++;
          res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
        }
      });
    },
  );
  r.url = `https://127.0.0.1:${await listen(server)}`;
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

/** oidc-provider with one client-credentials client issuing JWT access tokens for AUDIENCE. */
async function startAuthServer(): Promise<{ issuer: string; tokens: () => number; close(): Promise<void> }> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  let tokenRequests = 0;
  const server = createHttpServer((req, res) => {
    if (req.method === 'POST' && req.url?.startsWith('/token')) tokenRequests++;
    handler!(req, res);
  });
  const issuer = `http://127.0.0.1:${await listen(server)}`;
  const provider = new Provider(issuer, {
    scopes: ['hooks:write'],
    clients: [
      {
        client_id: 'hookd',
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: 'hooks:write',
      },
    ],
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'hooks:write',
          audience: AUDIENCE,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 3600,
        }),
      },
    },
  });
  handler = provider.callback();
  return {
    issuer,
    tokens: () => tokenRequests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<void> {
  const certDir = tempDir('receivers-pem');
  const pem = makeCertificates(certDir);
  const auth = await startAuthServer();
  const jwks = createRemoteJWKSet(new URL(`${auth.issuer}/jwks`));
  const verified = new Set<string>();
  const receivers: Record<Kind, Receiver> = {
    plain: await startReceiver(pem, false, () => true),
    mtls: await startReceiver(pem, true, (req) => {
      const socket = req.socket as import('node:tls').TLSSocket;
      return socket.authorized && socket.getPeerCertificate().subject?.CN === 'hookd-client';
    }),
    oauth2: await startReceiver(pem, false, async (req) => {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (token === undefined) return false;
      if (verified.has(token)) return true;
      try {
        await jwtVerify(token, jwks, { issuer: auth.issuer, audience: AUDIENCE });
        verified.add(token);
        return true;
      } catch {
        return false;
      }
    }),
  };
  const dataDir = tempDir('receivers');
  const hookd = await startHookd({ core: undefined, dataDir });
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${hookd.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${hookd.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  try {
    const extra: Record<Kind, Record<string, unknown>> = {
      plain: { Tls: { CaCertificates: pem.ca } },
      mtls: { Tls: { ClientCertificate: pem.clientCert, ClientKey: pem.clientKey, CaCertificates: pem.ca } },
      oauth2: {
        Tls: { CaCertificates: pem.ca },
        Auth: {
          OAuth2: {
            TokenUrl: `${auth.issuer}/token`,
            ClientId: 'hookd',
            ClientSecret: CLIENT_SECRET,
            Scope: 'hooks:write',
          },
        },
      },
    };
    for (const kind of KINDS) {
      await call('POST', '/hooks', {
        PathPattern: `/${kind}/*`,
        Methods: ['GET'],
        Type: 1,
        Callback: `${receivers[kind].url}/${kind}`,
        ...extra[kind],
      });
    }

    /** Fires `n` callbacks to one hook; returns callbacks/s and hookd's CPU µs per callback. */
    const round = async (kind: Kind, n: number) => {
      const rcv = receivers[kind];
      const start = rcv.received;
      const cpu0 = cpuSeconds(hookd.running.pid);
      const t0 = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < n) {
            const size = Math.min(BATCH, n - next);
            const first = next;
            next += size;
            const events = Array.from({ length: size }, (_, i) => ({
              Method: 'GET',
              Path: `/${kind}/${first + i}`,
              StatusCode: 200,
              Phase: 'after',
            }));
            const res = await call('POST', '/_hookd/report', events);
            if (res.fired !== size) throw new Error(`${kind}: fired ${String(res.fired)} of ${size}`);
          }
        }),
      );
      const deadline = Date.now() + 120_000;
      while (rcv.received - start < n) {
        if (Date.now() > deadline) throw new Error(`${kind}: ${rcv.received - start} of ${n} arrived`);
        await sleep(2);
      }
      const s = (performance.now() - t0) / 1000;
      const cpu = cpuSeconds(hookd.running.pid) - cpu0;
      return { rate: n / s, cpuUs: (cpu / n) * 1e6 };
    };

    for (const kind of KINDS) await round(kind, WARMUP);
    const results: Record<Kind, { rate: number; cpuUs: number }[]> = { plain: [], mtls: [], oauth2: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const kind of KINDS) {
        const x = await round(kind, N);
        results[kind].push(x);
        console.log(
          `round ${r + 1} ${kind}: ${x.rate.toFixed(0)} callbacks/s, ${x.cpuUs.toFixed(0)} µs CPU each`,
        );
      }
    }
    const summary = Object.fromEntries(
      KINDS.map((k) => [
        k,
        {
          rate: median(results[k].map((x) => x.rate)),
          cpuUs: median(results[k].map((x) => x.cpuUs)),
          rates: results[k].map((x) => Math.round(x.rate)),
          cpuUsEach: results[k].map((x) => Math.round(x.cpuUs)),
        },
      ]),
    ) as Record<Kind, { rate: number; cpuUs: number; rates: number[]; cpuUsEach: number[] }>;
    for (const k of KINDS) {
      const s = summary[k];
      console.log(
        `${k}: median ${s.rate.toFixed(0)} callbacks/s (${s.rates.join(', ')}), ` +
          `${s.cpuUs.toFixed(0)} µs hookd CPU per callback (${s.cpuUsEach.join(', ')})` +
          (k === 'plain'
            ? ''
            : `; ratio to plain: rate ${(s.rate / summary.plain.rate).toFixed(2)}, CPU ${(s.cpuUs / summary.plain.cpuUs).toFixed(2)}`),
      );
    }
    console.log(
      JSON.stringify({
        callbacks: N,
        rounds: ROUNDS,
        warmup: WARMUP,
        tokenRequests: auth.tokens(),
        refused: Object.fromEntries(KINDS.map((k) => [k, receivers[k].refused])),
        loadavg: loadavg().map((x) => Number(x.toFixed(2))),
        summary,
      }),
    );
  } finally {
    await hookd.stop();
    for (const k of KINDS) await receivers[k].close();
    await auth.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(certDir, { recursive: true, force: true });
  }
}

await main();

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import type { IdentityRequest } from '../../src/identity/provider.js';

/** A signing key made in the test, with its public JWK (kid and alg set). */
export interface TestKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** The public key as SPKI PEM (for the key-file provider and the HS256 confusion attack). */
  publicPem: string;
}

export async function makeKey(alg: 'RS256' | 'ES256', kid: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  const { KeyObject } = await import('node:crypto');
  const publicPem = KeyObject.from(publicKey).export({ type: 'spki', format: 'pem' }) as string;
  return { kid, alg, privateKey, publicJwk, publicPem };
}

export const ISSUER = 'https://id.example.test/';
export const AUDIENCE = 'hookd-test';

/** A token signed by `key`; valid for an hour from now unless `claims` say otherwise. */
export async function sign(key: TestKey, claims: JWTPayload & { sub?: string }, opts: { exp?: number } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: now, exp: opts.exp ?? now + 3600, ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .sign(key.privateKey);
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** An unsigned token (`alg: none`). */
export function unsignedToken(claims: JWTPayload): string {
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: ISSUER, aud: AUDIENCE, exp: now + 3600, ...claims })}.`;
}

/** An HS256 token whose HMAC secret is the RSA public key's PEM: the key-confusion attack. */
export async function hs256WithPublicKey(key: TestKey, claims: JWTPayload): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, exp: now + 3600, ...claims })
    .setProtectedHeader({ alg: 'HS256', kid: key.kid, typ: 'JWT' })
    .sign(new TextEncoder().encode(key.publicPem));
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function shut(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A real JWKS endpoint on loopback; `keys` may be swapped (a rotation); counts its fetches. */
export interface JwksServer {
  url: string;
  keys: TestKey[];
  fetches: number;
  /** When set, answers this status instead of the key set. */
  failWith: number | undefined;
  close(): Promise<void>;
}

export async function startJwks(keys: TestKey[]): Promise<JwksServer> {
  const state = { keys, fetches: 0, failWith: undefined as number | undefined };
  const server = createServer((_req, res) => {
    state.fetches++;
    if (state.failWith !== undefined) return void res.writeHead(state.failWith).end();
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ keys: state.keys.map((k) => k.publicJwk) }));
  });
  const base = await listen(server);
  return Object.assign(state, { url: `${base}/.well-known/jwks.json`, close: () => shut(server) });
}

export type ForwardMode = '200' | '401' | '403' | '500' | 'hang' | '200-no-user';

/**
 * A forward-auth endpoint: `Authorization: Bearer <user>` (or a `session=<user>` cookie) answers
 * 200 with `X-User: <user>`, unless the mode says otherwise; a user named `nobody` gets 401.
 * Records every call's Authorization and Cookie.
 */
export interface ForwardAuthServer {
  url: string;
  mode: ForwardMode;
  calls: { authorization?: string; cookie?: string }[];
  /** Answers every request held in `hang` mode as `200` mode would. */
  release(): void;
  close(): Promise<void>;
}

export async function startForwardAuth(): Promise<ForwardAuthServer> {
  const held: { res: ServerResponse; user: string | undefined }[] = [];
  const state = {
    mode: '200' as ForwardMode,
    calls: [] as { authorization?: string; cookie?: string }[],
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    state.calls.push({
      ...(req.headers.authorization !== undefined && { authorization: req.headers.authorization }),
      ...(req.headers.cookie !== undefined && { cookie: req.headers.cookie }),
    });
    const user =
      /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ??
      /(?:^|;\s*)session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    switch (state.mode) {
      case 'hang':
        held.push({ res, user });
        return;
      case '500':
        return void res.writeHead(500).end('boom');
      case '401':
        return void res.writeHead(401).end();
      case '403':
        return void res.writeHead(403).end();
      case '200-no-user':
        return void res.writeHead(200).end();
    }
    if (!user || user === 'nobody') return void res.writeHead(401).end();
    res.writeHead(200, { 'x-user': user }).end('ok');
  });
  const url = await listen(server);
  return Object.assign(state, {
    url: `${url}/auth`,
    release: () => {
      for (const { res, user } of held.splice(0)) {
        if (res.destroyed) continue;
        if (!user || user === 'nobody') res.writeHead(401).end();
        else res.writeHead(200, { 'x-user': user }).end('ok');
      }
    },
    close: async () => {
      for (const { res } of held) res.destroy();
      await shut(server);
    },
  });
}

/** An IdentityRequest made by hand. */
export function identityRequest(
  headers: Record<string, string> = {},
  peer: string | undefined = '127.0.0.1',
): IdentityRequest {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    authorization: lower.authorization,
    cookie: lower.cookie,
    header: (name) => lower[name.toLowerCase()],
    peer,
  };
}

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
// @ts-expect-error: oidc-provider ships no type declarations (and @types/oidc-provider is not installed).
import Provider from 'oidc-provider';
import { validateHook } from '../../src/hook/index.js';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { cleanEnv, hookctl } from '../hookctl/helpers.js';

// OAuth2 client credentials against a real authorization server: oidc-provider with a
// client-credentials client and a resource indicator, so it issues JWT access tokens; the
// receiver verifies each token with jose against the provider's JWKS, as an API gateway does.
const AUDIENCE = 'https://receiver.example/';
const SECRET = 'client-secret-that-must-never-be-shown-4f1e';
const SHORT_SECRET = 'short-lived-client-secret-9a2c';

interface AuthServer {
  issuer: string;
  tokenUrl: string;
  /** Token requests answered since start. */
  tokenRequests: number;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function startAuthServer(): Promise<AuthServer> {
  let handler: ((req: IncomingMessage, res: import('node:http').ServerResponse) => void) | undefined;
  const a: AuthServer = { issuer: '', tokenUrl: '', tokenRequests: 0, close: async () => undefined };
  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url?.startsWith('/token')) a.tokenRequests++;
    handler!(req, res);
  });
  a.issuer = await listen(server);
  a.tokenUrl = `${a.issuer}/token`;
  const client = (id: string, secret: string) => ({
    client_id: id,
    client_secret: secret,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: 'hooks:write',
  });
  const provider = new Provider(a.issuer, {
    scopes: ['hooks:write'],
    clients: [client('hookd', SECRET), client('short', SHORT_SECRET)],
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, _resource: string, c: { clientId: string }) => ({
          scope: 'hooks:write',
          audience: AUDIENCE,
          accessTokenFormat: 'jwt',
          // The "short" client's tokens live 2 s: hookd must ask again once they expire.
          accessTokenTTL: c.clientId === 'short' ? 2 : 300,
        }),
      },
    },
  });
  handler = provider.callback();
  a.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return a;
}

interface ProtectedReceiver {
  url: string;
  /** The verified tokens, per request, in arrival order. */
  tokens: string[];
  /** Requests refused with 401 (no or a bad token, or `refuseNext`). */
  refused: number;
  /** The next request is refused 401 even with a good token (a revoked token). */
  refuseNext: boolean;
  close(): Promise<void>;
}

async function startProtectedReceiver(issuer: string): Promise<ProtectedReceiver> {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const r: ProtectedReceiver = {
    url: '',
    tokens: [],
    refused: 0,
    refuseNext: false,
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    req.resume();
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const refuse = () => {
      r.refused++;
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
    };
    if (token === undefined) return refuse();
    jwtVerify(token, jwks, { issuer, audience: AUDIENCE }).then(
      ({ payload }) => {
        assert.equal(payload.scope, 'hooks:write');
        if (r.refuseNext) {
          r.refuseNext = false;
          return refuse();
        }
        r.tokens.push(token);
        res.writeHead(200).end('ok');
      },
      () => refuse(),
    );
  });
  r.url = await listen(server);
  r.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return r;
}

describe('OAuth2 client credentials against a real authorization server', () => {
  let d: TestDaemon;
  let auth: AuthServer;
  let rcv: ProtectedReceiver;
  before(async () => {
    d = await startHookd();
    auth = await startAuthServer();
    rcv = await startProtectedReceiver(auth.issuer);
  });
  after(async () => {
    await d?.close();
    await rcv?.close();
    await auth?.close();
  });

  const oauth2 = (clientId = 'hookd', secret = SECRET) => ({
    OAuth2: { TokenUrl: auth.tokenUrl, ClientId: clientId, ClientSecret: secret, Scope: 'hooks:write' },
  });
  const hookOn = (path: string, a: unknown) =>
    createHook(d, {
      PathPattern: `${path}/*`,
      Methods: ['GET'],
      Type: 1,
      Callback: `${rcv.url}${path}`,
      Auth: a,
    });
  const fire = async (path: string) => {
    const res = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', [
      { Method: 'GET', Path: `${path}/1`, StatusCode: 200, Phase: 'after' },
    ]);
    assert.equal(res.body.fired, 1, res.text);
  };

  it('fetches one token for two hooks with the same credentials, and never shows the secret', async () => {
    const a = await hookOn('/a', oauth2());
    await hookOn('/b', oauth2());
    const shown = await api<Record<string, unknown>>(d.url, d.token, 'GET', `/hooks/${a.Id}`);
    assert.equal(shown.status, 200);
    assert.ok(!shown.text.includes(SECRET), 'GET /hooks/{id} holds no client secret');
    assert.deepEqual(shown.body.Auth, {
      OAuth2: { TokenUrl: auth.tokenUrl, ClientId: 'hookd', ClientSecret: '(set)', Scope: 'hooks:write' },
    });
    const list = await api(d.url, d.token, 'GET', '/hooks');
    assert.ok(!list.text.includes(SECRET), 'GET /hooks holds no client secret');

    const before = auth.tokenRequests;
    await fire('/a');
    await until('the first callback', () => rcv.tokens.length >= 1);
    await fire('/b');
    await until('the second callback', () => rcv.tokens.length >= 2);
    assert.equal(auth.tokenRequests - before, 1, 'one token for both hooks');
    assert.equal(rcv.tokens[0], rcv.tokens[1]);
  });

  it('on a 401 from the receiver fetches a new token once and delivers', async () => {
    const hook = await hookOn('/c', oauth2());
    const before = auth.tokenRequests;
    const seen = rcv.tokens.length;
    rcv.refuseNext = true;
    await fire('/c');
    await until('the callback with a new token', () => rcv.tokens.length > seen);
    assert.equal(auth.tokenRequests - before, 1, 'one new token');
    // The receiver's answer reaches the delivery's record a moment after the receiver has sent it.
    const [delivery] = await until(
      'the delivery recorded as succeeded',
      async () =>
        (
          await api<{ Status: string; Attempts: number }[]>(
            d.url,
            d.token,
            'GET',
            `/hooks/${hook.Id}/deliveries`,
          )
        ).body,
      (l) => l[0]?.Status !== 'pending',
    );
    assert.equal(delivery?.Status, 'succeeded');
    assert.equal(delivery?.Attempts, 1, 'the 401 and the send with the new token are one attempt');
  });

  it('fetches a new token once the cached one expires', async () => {
    await hookOn('/short', oauth2('short', SHORT_SECRET));
    const seen = rcv.tokens.length;
    await fire('/short');
    await until('the first callback', () => rcv.tokens.length > seen);
    const first = rcv.tokens.at(-1);
    // Fires again until a callback carries another token: the first one expires after 2 s.
    await until(
      'a callback with a new token',
      async () => {
        await fire('/short');
        return rcv.tokens.at(-1) !== first;
      },
      { ms: 20_000, every: 250 },
    );
  });

  it('names a token endpoint that refuses the client in the delivery log', async () => {
    const hook = await hookOn('/wrong', oauth2('hookd', 'not-the-secret'));
    await fire('/wrong');
    const [delivery] = await until(
      'a failed attempt',
      async () =>
        (
          await api<{ LastError: string | null; Attempts: number }[]>(
            d.url,
            d.token,
            'GET',
            `/hooks/${hook.Id}/deliveries`,
          )
        ).body,
      (l) => (l[0]?.Attempts ?? 0) >= 1,
    );
    assert.match(
      delivery!.LastError ?? '',
      new RegExp(`token endpoint ${auth.tokenUrl} answered 401 invalid_client`),
    );
  });

  it('hookctl takes the client secret from a file or standard input, never from argv', async () => {
    const dir = tempDir('hookctl-oauth2-');
    const file = join(dir, 'hook.json');
    const { ClientSecret: _omitted, ...credentials } = oauth2().OAuth2;
    writeFileSync(
      file,
      JSON.stringify({
        PathPattern: '/cli/*',
        Methods: ['GET'],
        Type: 1,
        Callback: `${rcv.url}/cli`,
        Auth: { OAuth2: credentials },
      }),
    );
    writeFileSync(join(dir, 'secret'), `${SECRET}\n`);
    const env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
    const made = await hookctl(['create', '-f', file, '--client-secret-file', join(dir, 'secret')], { env });
    assert.equal(made.code, 0, made.stderr);
    const id = made.stdout.trim();
    const shown = await hookctl(['get', id, '-o', 'json'], { env });
    assert.ok(!shown.stdout.includes(SECRET), 'hookctl get shows no client secret');
    assert.match(shown.stdout, /"ClientSecret": "\(set\)"/);
    const seen = rcv.tokens.length;
    await fire('/cli');
    await until('the callback with a token', () => rcv.tokens.length > seen);
    const piped = await hookctl(['replace', id, '-f', file, '--client-secret-file', '-'], {
      env,
      input: `${SECRET}\n`,
    });
    assert.equal(piped.code, 0, piped.stderr);
    const lines = await hookctl(['deliveries', id], { env });
    assert.match(lines.stderr, new RegExp(`receiver ${rcv.url}: (concurrency limit|ramping up:) \\d+ of 8`));
  });

  it('the console shows the Auth fields without the secret, and an edit that leaves it empty keeps it', async () => {
    const hook = await hookOn('/console', oauth2());
    const url = d.consoleUrl;
    const root = `${url}/_hookd/console`;
    const signin = await fetch(`${root}/signin`);
    const pre = signin.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf0 = /name="_csrf" value="([^"]+)"/.exec(await signin.text())![1]!;
    const signed = await fetch(`${root}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf0, token: d.token }),
    });
    const cookie = signed.headers.getSetCookie()[0]!.split(';')[0]!;
    const page = await (await fetch(`${root}/hooks/${hook.Id}`, { headers: { cookie } })).text();
    assert.ok(!page.includes(SECRET), 'the hook page holds no client secret');
    assert.match(page, /client secret \(set\)/);
    const edit = await (await fetch(`${root}/hooks/${hook.Id}/edit`, { headers: { cookie } })).text();
    assert.ok(!edit.includes(SECRET), 'the edit form holds no client secret');
    assert.match(edit, /name="AuthClientSecret" type="password"[^>]*value=""/);
    // Submit the form as it stands, the secret field left empty.
    const form = new URLSearchParams();
    const unescaped = (v: string) =>
      v.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&');
    for (const [tag] of edit.matchAll(/<input[^>]*>/g)) {
      const name = / name="([^"]+)"/.exec(tag)?.[1];
      if (name !== undefined && name !== 'Persist')
        form.set(name, unescaped(/ value="([^"]*)"/.exec(tag)?.[1] ?? ''));
    }
    form.set('CallbackMethod', 'POST');
    form.set('Type', '1');
    const saved = await fetch(`${root}/hooks/${hook.Id}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    assert.equal(saved.status, 303, await saved.text());
    const seen = rcv.tokens.length;
    await fire('/console');
    await until('the callback with a token after the edit', () => rcv.tokens.length > seen);
  });

  it('refuses a bad Auth with a 400 naming the field', async () => {
    const res = await api<{ errors: { field: string }[] }>(d.url, d.token, 'POST', '/hooks', {
      PathPattern: '/bad/*',
      Methods: ['GET'],
      Callback: `${rcv.url}/bad`,
      Auth: { OAuth2: { TokenUrl: 'ftp://x/token', ClientId: 'a', ClientSecret: '(set)' } },
    });
    assert.equal(res.status, 400, res.text);
    const fields = res.body.errors.map((e) => e.field);
    assert.ok(fields.includes('Auth.OAuth2.ClientSecret'), res.text);
    // A broker Callback has credentials of its own: Auth is for http(s) only.
    await assert.rejects(
      validateHook(
        {
          PathPattern: '/broker/*',
          Methods: ['GET'],
          Callback: 'amqp://127.0.0.1:5672/hooks',
          Auth: oauth2(),
        },
        { checkScheme: () => undefined },
      ),
      (e: Error & { errors?: { field: string; message: string }[] }) =>
        e.errors?.some((x) => x.field === 'Auth' && /http and https Callbacks only/.test(x.message)) === true,
    );
  });
});

import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Hook } from '../../src/hook/hook.js';
import { api, type HookdProcess, spawnHookd, tempDir } from '../helpers/hookd.js';
import { findNginx, type Nginx, startNginx } from '../helpers/nginx.js';
import {
  closedPort,
  type Receiver,
  send,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';

// nginx with auth_basic in front of a real hookd process, naming the user in X-Forwarded-User
// (`proxy_set_header X-Forwarded-User $remote_user`). nginx connects from 127.0.0.2
// (`proxy_bind`), the only trusted proxy; a client talking to hookd directly from 127.0.0.1
// forges the header: it is ignored, and the upstream never sees it.

const nginx = findNginx();

describe('--identity-header behind nginx auth_basic', { skip: nginx.skip }, () => {
  let upstream: Upstream;
  let receiver: Receiver;
  let hookd: HookdProcess;
  let front: Nginx;
  const basic = (user: string) => ({
    authorization: `Basic ${Buffer.from(`${user}:${user}-pw`).toString('base64')}`,
  });

  before(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver();
    hookd = await spawnHookd([
      '--upstream',
      upstream.url,
      '--identity-header',
      'X-Forwarded-User',
      '--trusted-proxy',
      '127.0.0.2',
    ]);
    const dir = tempDir('hookd-htpasswd-');
    const htpasswd = join(dir, 'htpasswd');
    writeFileSync(htpasswd, ['alice', 'bob'].map((u) => `${u}:{PLAIN}${u}-pw\n`).join(''));
    // nginx's workers run as nobody when the master is root.
    chmodSync(dir, 0o755);
    chmodSync(htpasswd, 0o644);
    front = await startNginx(
      nginx.bin!,
      await closedPort(),
      `
    location / {
      auth_basic "service";
      auth_basic_user_file ${htpasswd};
      proxy_pass ${hookd.url};
      proxy_bind 127.0.0.2;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-User $remote_user;
      proxy_set_header Authorization "";
    }`,
    );
  });
  after(async () => {
    await front?.stop();
    await hookd?.stop();
    await Promise.all([upstream?.close(), receiver?.close()]);
  });

  let hook: Hook;

  it('an nginx user manages hooks as itself (created on first sight); a forged header gets 401', async () => {
    const created = await api<Hook>(
      front.url,
      undefined,
      'POST',
      '/hooks',
      {
        PathPattern: '/data',
        Methods: ['GET'],
        Callback: `${receiver.url}/cb`,
        CallbackContent: 'user=$REQUEST_USER',
        CallbackContentMediaType: 'text/plain',
        Type: 1,
      },
      basic('alice'),
    );
    assert.equal(created.status, 201, created.text);
    hook = created.body;
    assert.equal(hook.Owner, 'alice');
    // alice was created with ["own"]; the tests below watch other clients' requests too (scopes
    // have their own tests in test/users/): the admin grants her every path.
    const grant = await api(hookd.url, hookd.token, 'PUT', '/_hookd/users/alice', { Scopes: ['/'] });
    assert.equal(grant.status, 200, grant.text);
    const mine = await api<Hook[]>(front.url, undefined, 'GET', '/hooks', undefined, basic('alice'));
    assert.equal(mine.status, 200, mine.text);
    assert.deepEqual(
      mine.body.map((h) => h.Id),
      [hook.Id],
    );
    const bobs = await api<Hook[]>(front.url, undefined, 'GET', '/hooks', undefined, basic('bob'));
    assert.deepEqual(bobs.body, []);

    const forged = await api(hookd.url, undefined, 'GET', '/hooks', undefined, {
      'X-Forwarded-User': 'alice',
    });
    assert.equal(forged.status, 401, 'from an untrusted peer the header is nobody');
    assert.equal((await api(front.url, undefined, 'GET', '/hooks')).status, 401, "nginx's own challenge");
  });

  it('$REQUEST_USER is the nginx user; a forged header is ignored and never reaches the upstream', async () => {
    receiver.reset();
    upstream.reset();
    const viaNginx = await send(`${front.url}/data/1?as=bob`, { headers: basic('bob') });
    assert.equal(viaNginx.status, 200);
    const direct = await send(`${hookd.url}/data/2?as=forger`, { headers: { 'X-Forwarded-User': 'alice' } });
    assert.equal(direct.status, 200);
    const calls = await receiver.waitFor(2);
    assert.deepEqual(calls.map((c) => c.body).sort(), ['user=', 'user=bob']);

    const seen = Object.fromEntries(upstream.requests.map((r) => [r.url, r.headers['x-forwarded-user']]));
    assert.deepEqual(seen, { '/data/1?as=bob': 'bob', '/data/2?as=forger': undefined });
    // Every spelling of the name goes: header names are case-insensitive.
    upstream.reset();
    await send(`${hookd.url}/other`, { headers: { 'x-FORWARDED-user': 'alice', 'X-Other': 'kept' } });
    assert.equal(upstream.requests[0]!.headers['x-forwarded-user'], undefined);
    assert.equal(upstream.requests[0]!.headers['x-other'], 'kept');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';
import { addUser } from '../helpers/servers.js';
import { assertBuilt, cleanEnv, runInProcess } from '../hookctl/helpers.js';

// A hook's Name through the API and hookctl, against a real hookd.

let d: TestDaemon;

async function call<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  token = d.token,
): Promise<{ status: number; body: T; etag: string | null }> {
  const res = await fetch(`${d.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: (text ? JSON.parse(text) : undefined) as T,
    etag: res.headers.get('etag'),
  };
}

const hook = (over: Record<string, unknown> = {}) => ({
  PathPattern: '/n/(*)',
  Methods: ['GET'],
  Callback: 'http://127.0.0.1:9/n',
  ...over,
});

before(async () => {
  assertBuilt();
  d = await startHookd();
});
after(async () => {
  await d.close();
});

describe('hook Name', () => {
  it('is optional, shown by get/list, kept by PUT, and resolves /hooks/{name} for every hook endpoint', async () => {
    const created = await call<{ Id: string; Name: string }>(
      'POST',
      '/hooks',
      hook({ Name: 'orders.created_v2' }),
    );
    assert.equal(created.status, 201);
    assert.equal(created.body.Name, 'orders.created_v2');
    const byName = await call<{ Id: string }>('GET', '/hooks/orders.created_v2');
    assert.equal(byName.status, 200);
    assert.equal(byName.body.Id, created.body.Id);
    const listed = await call<{ Id: string; Name?: string }[]>('GET', '/hooks');
    assert.equal(listed.body.find((h) => h.Id === created.body.Id)?.Name, 'orders.created_v2');
    const put = await call<{ Id: string; Name: string }>(
      'PUT',
      '/hooks/orders.created_v2',
      hook({ Name: 'orders.created_v2', Methods: ['POST'] }),
    );
    assert.equal(put.status, 200);
    assert.equal(put.body.Id, created.body.Id);
    assert.equal(put.body.Name, 'orders.created_v2');
    assert.equal((await call('GET', '/hooks/orders.created_v2/secret')).status, 200);
    assert.equal((await call('GET', '/hooks/orders.created_v2/deliveries')).status, 200);
    // A PUT without Name drops it, as any field left out (SPEC §2).
    const dropped = await call<Record<string, unknown>>('PUT', `/hooks/${created.body.Id}`, hook());
    assert.equal('Name' in dropped.body, false);
    assert.equal((await call('GET', '/hooks/orders.created_v2')).status, 404);
    assert.equal((await call('DELETE', `/hooks/${created.body.Id}`)).status, 204);
  });

  it('a bad Name is a 400 naming Name and the rule', async () => {
    for (const bad of ['', 'Orders', '-x', 'a b', 'x'.repeat(64), 'hk/1']) {
      const r = await call<{ errors: { field: string; message: string }[] }>(
        'POST',
        '/hooks',
        hook({ Name: bad }),
      );
      assert.equal(r.status, 400, bad);
      assert.equal(r.body.errors[0]!.field, 'Name');
      assert.match(r.body.errors[0]!.message, /1 to 63 characters from a-z, 0-9/);
    }
    const notString = await call<{ errors: { field: string }[] }>('POST', '/hooks', hook({ Name: 7 }));
    assert.equal(notString.status, 400);
    assert.equal(notString.body.errors[0]!.field, 'Name');
  });

  it("a duplicate among the owner's hooks is 409 naming Name (create, replace, Persist:false too); another user may use it", async () => {
    const a = await call<{ Id: string }>('POST', '/hooks', hook({ Name: 'dup' }));
    assert.equal(a.status, 201);
    for (const body of [hook({ Name: 'dup' }), hook({ Name: 'dup', Persist: false })]) {
      const again = await call<{ detail: string; errors: { field: string }[] }>('POST', '/hooks', body);
      assert.equal(again.status, 409);
      assert.equal(again.body.errors[0]!.field, 'Name');
      assert.match(again.body.detail, /Name "dup" is already used by hook hk_/);
    }
    const b = await call<{ Id: string }>('POST', '/hooks', hook());
    const rename = await call('PUT', `/hooks/${b.body.Id}`, hook({ Name: 'dup' }));
    assert.equal(rename.status, 409);
    const bob = await addUser(d, 'bob');
    assert.equal((await call('POST', '/hooks', hook({ Name: 'dup' }), bob)).status, 201);
    // Bob's Name does not reach alice's hook, nor alice's his.
    assert.equal(
      (await call<{ Id: string }>('GET', '/hooks/dup', undefined, bob)).body.Id === a.body.Id,
      false,
    );
  });

  it('hookctl get NAME prints it; list shows a NAME column only when a hook has one', async () => {
    await call('POST', '/hooks', hook({ Name: 'shown' }));
    const env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
    const got = await runInProcess(['get', 'shown'], { env, tty: false });
    assert.equal(got.code, 0, got.stderr);
    assert.equal((JSON.parse(got.stdout) as { Name: string }).Name, 'shown');
    const table = await runInProcess(['list'], { env, tty: true, columns: 200 });
    assert.match(table.stdout.replace(/\u001b\[[0-9;]*m/g, '').split('\n')[0]!, /^ID\s+NAME\s+TYPE/);
    const missing = await runInProcess(['get', 'nope-name'], { env, tty: false });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no hook with Id or Name "nope-name"/);
  });
});

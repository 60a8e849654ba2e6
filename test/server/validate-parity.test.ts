import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { addUser } from '../helpers/servers.js';

// `/_hookd/validate` answers what create would: a hook it passes is one create accepts, and one
// that create refuses for the owner's path scopes or a Name already taken it refuses too.

interface Problem {
  code: string;
  errors?: { field: string; message: string }[];
}

let d: TestDaemon;
let token: string;
const hook = { Callback: 'http://127.0.0.1:9/hook', Methods: ['GET'] };

before(async () => {
  d = await startHookd();
  token = await addUser(d, 'ana', ['/teams/ana']);
});
after(async () => {
  await d?.close();
});

async function both(doc: Record<string, unknown>): Promise<[number, Problem, number, Problem]> {
  const v = await api<Problem>(d.url, token, 'POST', '/_hookd/validate', doc);
  const c = await api<Problem>(d.url, token, 'POST', '/hooks', doc);
  return [v.status, v.body, c.status, c.body];
}

describe('/_hookd/validate and create: one check', () => {
  it('a PathPattern outside the owner scopes: refused by both, naming PathPattern', async () => {
    const [vs, vb, cs, cb] = await both({ ...hook, PathPattern: '/teams/bob/(*)' });
    assert.equal(cs, 400);
    assert.equal(vs, 400, 'validate refuses what create refuses');
    assert.deepEqual(
      vb.errors?.map((e) => e.field),
      cb.errors?.map((e) => e.field),
    );
    assert.match(vb.errors?.[0]?.message ?? '', /outside the scopes of user "ana"/);
  });

  it('a Name another of the owner hooks has: 409 from both; the holder itself (its Id) passes', async () => {
    const first = await api<{ Id: string }>(d.url, token, 'POST', '/hooks', {
      ...hook,
      PathPattern: '/teams/ana/one',
      Name: 'orders',
    });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const [vs, vb, cs, cb] = await both({ ...hook, PathPattern: '/teams/ana/two', Name: 'orders' });
    assert.equal(cs, 409);
    assert.equal(vs, 409, 'validate refuses what create refuses');
    assert.equal(vb.code, cb.code);
    assert.equal(vb.errors?.[0]?.field, 'Name');
    const own = await api(d.url, token, 'POST', '/_hookd/validate', {
      ...hook,
      Id: first.body.Id,
      PathPattern: '/teams/ana/one',
      Name: 'orders',
    });
    assert.equal(own.status, 200, `a hook's own document validates as its replace: ${own.text}`);
  });

  it('a hook inside the scopes with a free Name passes both', async () => {
    const [vs, , cs] = await both({ ...hook, PathPattern: '/teams/ana/three', Name: 'three' });
    assert.equal(vs, 200);
    assert.equal(cs, 201);
  });
});

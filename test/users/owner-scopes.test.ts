import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import type { FiredEvent } from '../../src/engine/fired-event.js';
import { MatchEngine } from '../../src/engine/match-engine.js';
import { BEFORE_COMPLETION, type Hook } from '../../src/hook/hook.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { Accounts } from '../../src/users/accounts.js';
import { migrateUserScopes, OwnerScopes } from '../../src/users/index.js';
import { storedHook } from '../store/store-contract.js';

const hook = (owner: string, pattern: string): Hook =>
  storedHook(owner, {
    PathPattern: pattern,
    Methods: ['*'],
    Type: BEFORE_COMPLETION,
    StatusCodeWhiteList: [],
    CallbackMethod: 'POST',
    CallbackContent: '$REQUEST_URI',
  });

async function world() {
  const store = new MemoryStore();
  const accounts = new Accounts(store);
  const scopes = new OwnerScopes(store);
  accounts.onUserChanged((n) => scopes.changed(n));
  await accounts.addUser('admin');
  await accounts.addUser('olive');
  await accounts.addUser('rita', ['/repositories/acme']);
  await scopes.loadAll();
  const fired: FiredEvent[] = [];
  let asked = 0;
  const engine = new MatchEngine(
    { accept: (events) => fired.push(...events) },
    { scopes, redactUri: (u) => u.replace(/secret=[^&]*/, 'secret=REDACTED') },
  );
  const fire = async (path: string, user?: string) => {
    fired.length = 0;
    asked = 0;
    const n = await engine.fireAndWait('before', {
      method: 'GET',
      path,
      uri: () => `http://h${path}?secret=s`,
      ...(user !== undefined && {
        requestUser: async () => {
          asked++;
          return user;
        },
      }),
    });
    assert.equal(n, fired.length);
    return fired.map((e) => e.owner).sort();
  };
  return { store, accounts, scopes, engine, fire, asked: () => asked };
}

describe('OwnerScopes and the engine: the fire rule', () => {
  it('admin sees everything, a path scope its paths, own only its own requests', async () => {
    const w = await world();
    w.engine.load([hook('admin', '/'), hook('olive', '/'), hook('rita', '/repositories/acme')]);
    assert.deepEqual(await w.fire('/repositories/acme/x', 'bob'), ['admin', 'rita']);
    assert.deepEqual(await w.fire('/repositories/acme/x', 'olive'), ['admin', 'olive', 'rita']);
    assert.deepEqual(await w.fire('/other', 'olive'), ['admin', 'olive']);
    assert.deepEqual(await w.fire('/other'), ['admin']);
  });

  it("asks for the request's user only when a matched hook is left after the path scopes", async () => {
    const w = await world();
    w.engine.load([hook('rita', '/')]); // stored before a narrowing: rita's scopes hold only acme
    assert.deepEqual(await w.fire('/other', 'rita'), []);
    assert.equal(w.asked(), 0, 'no provider call for a hook that cannot fire');
    assert.deepEqual(await w.fire('/repositories/acme/1', 'rita'), ['rita']);
    assert.equal(w.asked(), 1);
  });

  it('follows scope changes made through Accounts at once', async () => {
    const w = await world();
    w.engine.load([hook('olive', '/users')]);
    assert.deepEqual(await w.fire('/users/x', 'bob'), []);
    await w.accounts.setScopes('olive', ['own', '/users']);
    assert.deepEqual(await w.fire('/users/x', 'bob'), ['olive']);
    await w.accounts.setScopes('olive', []);
    assert.deepEqual(await w.fire('/users/x', 'olive'), []);
  });

  it('looks up an owner it has not cached (a user made elsewhere), and an unknown owner sees nothing', async () => {
    const w = await world();
    await w.store.addUser({ name: 'late', created: 'c', scopes: ['/late'] });
    w.engine.load([hook('late', '/late'), hook('ghost', '/late')]);
    assert.deepEqual(await w.fire('/late/1'), ['late']);
    // Changed behind the cache's back: still the cached value, until told.
    await w.store.setUserScopes('late', []);
    assert.deepEqual(await w.fire('/late/1'), ['late']);
    w.scopes.changed('late');
    assert.deepEqual(await w.fire('/late/1'), []);
  });

  it('the dry run applies the same rule with its User', async () => {
    const w = await world();
    w.engine.load([hook('olive', '/')]);
    const t = { method: 'GET', path: '/x', uri: () => 'http://h/x?secret=1' };
    assert.equal((await w.engine.preview('olive', { ...t, user: 'bob' })).length, 0);
    const mine = await w.engine.preview('olive', { ...t, user: 'olive' });
    assert.equal(mine.length, 1);
    assert.equal(mine[0]!.request.body, 'http://h/x?secret=REDACTED');
  });
});

describe('migrateUserScopes', () => {
  it('gives users without scopes the default and names those whose hooks now fire less', async () => {
    const store = new MemoryStore();
    for (const name of ['admin', 'bob', 'carol', 'dave']) await store.addUser({ name, created: 'c' });
    await store.setUserScopes('dave', ['/d']);
    await store.putHook(hook('bob', '/b'));
    await store.putHook(hook('admin', '/'));
    const lines: { msg: string; users?: string[] }[] = [];
    const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });
    assert.deepEqual(await migrateUserScopes(store, log), ['bob']);
    assert.deepEqual(
      (await store.listUsers()).map((u) => [u.name, u.scopes]),
      [
        ['admin', ['/']],
        ['bob', ['own']],
        ['carol', ['own']],
        ['dave', ['/d']],
      ],
    );
    assert.equal(lines.length, 1);
    assert.deepEqual(lines[0]!.users, ['bob']);
    assert.match(lines[0]!.msg, /bob now fire only for their own requests/);
    assert.deepEqual(await migrateUserScopes(store, log), []);
    assert.equal(lines.length, 1, 'nothing to say the second time');
  });
});

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Hook } from '../../src/hook/hook.js';
import { newHookId } from '../../src/hook/hook-id.js';
import type { Store, TokenRecord } from '../../src/store/store.js';

/** A fixed clock so that Ids sort in the order the test means, whatever the machine's speed. */
const T0 = Date.UTC(2026, 0, 1);

function hook(owner: string, n: number, over: Partial<Hook> = {}): Hook {
  return {
    Id: newHookId(T0 + n * 1000),
    Owner: owner,
    PathPattern: `/repositories/*/timeseries/(*)/${n}`,
    Callback: `https://example.com/hook/${n}`,
    Methods: ['GET', 'PUT'],
    Type: 1,
    StatusCodeBlackList: [500],
    StatusCodeWhiteList: [],
    CallbackMethod: 'POST',
    CallbackContentMediaType: 'application/json',
    Headers: { 'X-Tenant': 'acme' },
    Persist: true,
    Modified: '2026-01-01T00:00:00.000+00:00',
    State: 'active',
    ...over,
  };
}

/** A stored hook with a body template and a status list, for the backends' own tests. */
export function storedHook(owner = 'alice', over: Partial<Hook> = {}): Hook {
  return {
    Id: newHookId(),
    Owner: owner,
    PathPattern: '/a/(*)',
    Callback: 'https://example.com/x',
    Methods: ['GET'],
    Type: 1,
    StatusCodeBlackList: [],
    StatusCodeWhiteList: [200],
    CallbackMethod: 'PUT',
    CallbackContent: '$1',
    CallbackContentMediaType: 'text/plain',
    Headers: {},
    Persist: true,
    Modified: '2026-01-01T00:00:00.000+00:00',
    State: 'active',
    ...over,
  };
}

function token(user: string, id: string, created = '2026-01-01T00:00:00.000+00:00'): TokenRecord {
  return { id, user, hash: 'ab'.repeat(32), label: `label of ${id}`, created };
}

const ids = (hooks: Hook[]) => hooks.map((h) => h.Id);

/**
 * The storage contract every backend passes (memory, SQLite, PostgreSQL). `makeStore` returns a
 * fresh, empty store for each test; it is closed afterwards.
 */
export function storeContract(name: string, makeStore: () => Promise<Store> | Store): void {
  describe(`store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    describe('hooks', () => {
      it('getHook of an unknown id is undefined', async () => {
        assert.equal(await store.getHook(newHookId()), undefined);
        assert.equal(await store.getHook(''), undefined);
      });

      it('putHook then getHook returns the same document', async () => {
        const h = hook('alice', 1, { CallbackContent: '{"path":"$REQUEST_PATH","µ":"\u00e9\u{1F600}"}' });
        await store.putHook(h);
        assert.deepEqual(await store.getHook(h.Id), h);
      });

      it('keeps an absent CallbackContent absent (not null, not "")', async () => {
        const h = hook('alice', 1);
        await store.putHook(h);
        const got = await store.getHook(h.Id);
        assert.ok(got);
        assert.equal('CallbackContent' in got, false);
      });

      it('keeps strings that are not well-formed UTF-16 (a lone surrogate) intact', async () => {
        const h = hook('alice', 1, { CallbackContent: 'a\ud800b', Headers: { 'X-Odd': '\udfff' } });
        await store.putHook(h);
        assert.deepEqual(await store.getHook(h.Id), h);
      });

      it('putHook with an existing id replaces the whole document', async () => {
        const h = hook('alice', 1, { CallbackContent: 'old' });
        await store.putHook(h);
        const { CallbackContent: _dropped, ...rest } = h;
        const replaced: Hook = {
          ...rest,
          PathPattern: '/other',
          Methods: ['*'],
          Persist: true,
          State: 'disabled',
          Modified: '2026-01-02T00:00:00.000+00:00',
        };
        await store.putHook(replaced);
        assert.deepEqual(await store.getHook(h.Id), replaced);
        assert.deepEqual(ids(await store.listHooks('alice')), [h.Id]);
        assert.equal((await store.allHooks()).length, 1);
      });

      it('a returned hook is a copy: changing it does not change the store', async () => {
        const h = hook('alice', 1);
        await store.putHook(h);
        const got = (await store.getHook(h.Id))!;
        got.Methods.push('DELETE');
        got.Headers['X-New'] = 'x';
        got.PathPattern = '/changed';
        const listed = (await store.listHooks('alice'))[0]!;
        listed.StatusCodeBlackList.push(404);
        assert.deepEqual(await store.getHook(h.Id), h);
      });

      it('a stored hook does not change when the caller changes its object afterwards', async () => {
        const h = hook('alice', 1);
        await store.putHook(h);
        const expected = structuredClone(h);
        h.Methods.push('POST');
        h.Headers.Extra = '1';
        assert.deepEqual(await store.getHook(h.Id), expected);
      });

      it('deleteHook removes it and says whether there was one', async () => {
        const a = hook('alice', 1);
        const b = hook('alice', 2);
        await store.putHook(a);
        await store.putHook(b);
        assert.equal(await store.deleteHook(a.Id), true);
        assert.equal(await store.getHook(a.Id), undefined);
        assert.equal(await store.deleteHook(a.Id), false);
        assert.equal(await store.deleteHook(newHookId()), false);
        assert.deepEqual(ids(await store.listHooks('alice')), [b.Id]);
      });

      it("listHooks returns only the owner's hooks, ordered by Id whatever the insertion order", async () => {
        const mine = [5, 1, 4, 2, 3].map((n) => hook('alice', n));
        const theirs = [hook('bob', 6), hook('bob', 0)];
        for (const h of [...mine, ...theirs]) await store.putHook(h);
        const expected = [...ids(mine)].sort();
        assert.deepEqual(ids(await store.listHooks('alice')), expected);
        assert.deepEqual(ids(await store.listHooks('bob')), [...ids(theirs)].sort());
        assert.deepEqual(await store.listHooks('carol'), []);
        // Owner names are compared exactly.
        assert.deepEqual(await store.listHooks('Alice'), []);
      });

      it('listHooks pages with limit and after, and a walk visits every hook once', async () => {
        const all = Array.from({ length: 7 }, (_, i) => hook('alice', i));
        for (const h of [...all].reverse()) await store.putHook(h);
        assert.deepEqual(ids(await store.listHooks('alice', { limit: 3 })), ids(all.slice(0, 3)));
        assert.deepEqual(ids(await store.listHooks('alice', { after: all[2]!.Id })), ids(all.slice(3)));
        assert.deepEqual(
          ids(await store.listHooks('alice', { after: all[2]!.Id, limit: 2 })),
          ids(all.slice(3, 5)),
        );
        assert.deepEqual(await store.listHooks('alice', { after: all[6]!.Id }), []);
        assert.deepEqual(ids(await store.listHooks('alice', { limit: 100 })), ids(all));

        const seen: string[] = [];
        let after: string | undefined;
        for (let guard = 0; guard < 10; guard++) {
          const page = await store.listHooks('alice', { limit: 2, ...(after !== undefined && { after }) });
          if (page.length === 0) break;
          seen.push(...ids(page));
          after = page[page.length - 1]!.Id;
        }
        assert.deepEqual(seen, ids(all));
      });

      it('listHooks with an `after` that is not a stored Id starts after where it would sort', async () => {
        const all = [1, 3, 5].map((n) => hook('alice', n));
        for (const h of all) await store.putHook(h);
        const between = newHookId(T0 + 2 * 1000);
        assert.deepEqual(ids(await store.listHooks('alice', { after: between })), ids(all.slice(1)));
      });

      it('allHooks returns every hook of every user', async () => {
        const hs = [hook('alice', 1), hook('bob', 2), hook('carol', 3, { Persist: false })];
        for (const h of hs) await store.putHook(h);
        const got = await store.allHooks();
        assert.deepEqual([...ids(got)].sort(), [...ids(hs)].sort());
        for (const h of hs)
          assert.deepEqual(
            got.find((g) => g.Id === h.Id),
            h,
          );
      });

      it('allHooks of an empty store is an empty array', async () => {
        assert.deepEqual(await store.allHooks(), []);
      });
    });

    describe('hook names', () => {
      it("getHookByName finds the owner's hook by Name, and only theirs", async () => {
        const a = hook('alice', 1, { Name: 'orders' });
        const b = hook('bob', 2, { Name: 'orders' });
        await store.putHook(a);
        await store.putHook(b);
        assert.deepEqual(await store.getHookByName('alice', 'orders'), a);
        assert.deepEqual(await store.getHookByName('bob', 'orders'), b);
        assert.equal(await store.getHookByName('carol', 'orders'), undefined);
        assert.equal(await store.getHookByName('alice', 'other'), undefined);
      });

      it('refuses a second hook of the owner with the same Name (409 CONFLICT naming Name)', async () => {
        await store.putHook(hook('alice', 1, { Name: 'orders' }));
        await assert.rejects(store.putHook(hook('alice', 2, { Name: 'orders' })), (e: unknown) => {
          const err = e as { code?: string; status?: number; errors?: { field: string }[] };
          return err.code === 'CONFLICT' && err.status === 409 && err.errors?.[0]?.field === 'Name';
        });
        // Hooks without a Name never collide.
        await store.putHook(hook('alice', 3));
        await store.putHook(hook('alice', 4));
        assert.equal((await store.listHooks('alice')).length, 3);
      });

      it('a replace that renames or drops the Name frees the old one; delete frees it too', async () => {
        const h = hook('alice', 1, { Name: 'old' });
        await store.putHook(h);
        await store.putHook({ ...h, Name: 'new' });
        assert.equal(await store.getHookByName('alice', 'old'), undefined);
        assert.equal((await store.getHookByName('alice', 'new'))?.Id, h.Id);
        const { Name: _n, ...unnamed } = h;
        await store.putHook(unnamed);
        assert.equal(await store.getHookByName('alice', 'new'), undefined);
        const other = hook('alice', 2, { Name: 'new' });
        await store.putHook(other);
        await store.deleteHook(other.Id);
        await store.putHook(hook('alice', 3, { Name: 'new' }));
      });
    });

    describe('users', () => {
      it('addUser adds once and says so; getUser finds it', async () => {
        const u = { name: 'alice', created: '2026-01-01T00:00:00.000+00:00' };
        assert.equal(await store.addUser(u), true);
        assert.equal(await store.addUser({ ...u, created: '2027-01-01T00:00:00.000+00:00' }), false);
        assert.deepEqual(await store.getUser('alice'), u);
        assert.equal(await store.getUser('bob'), undefined);
        assert.equal(await store.getUser('ALICE'), undefined);
      });

      it('listUsers lists every user ordered by name', async () => {
        for (const name of ['carol', 'alice', 'bob']) await store.addUser({ name, created: 'c' });
        assert.deepEqual(
          (await store.listUsers()).map((u) => u.name),
          ['alice', 'bob', 'carol'],
        );
      });

      it('listUsers orders mixed-case names the same way in every backend (by code unit, as SQL does)', async () => {
        for (const name of ['alice', 'Bob', 'carol', 'Dave']) await store.addUser({ name, created: 'c' });
        assert.deepEqual(
          (await store.listUsers()).map((u) => u.name),
          ['Bob', 'Dave', 'alice', 'carol'],
        );
      });

      it('keeps scopes: stored with the user, replaced by setUserScopes, absent for a user stored without', async () => {
        await store.addUser({ name: 'alice', created: 'c', scopes: ['own', '/repositories/acme'] });
        await store.addUser({ name: 'old', created: 'c' });
        assert.deepEqual((await store.getUser('alice'))?.scopes, ['own', '/repositories/acme']);
        assert.equal('scopes' in (await store.getUser('old'))!, false);
        assert.equal(await store.setUserScopes('alice', ['/a', '/b/$']), true);
        assert.equal(await store.setUserScopes('old', []), true);
        assert.equal(await store.setUserScopes('nobody', ['/']), false);
        assert.deepEqual(
          (await store.listUsers()).map((u) => [u.name, u.scopes]),
          [
            ['alice', ['/a', '/b/$']],
            ['old', []],
          ],
        );
        const got = (await store.getUser('alice'))!;
        got.scopes!.push('/changed');
        assert.deepEqual((await store.getUser('alice'))?.scopes, ['/a', '/b/$']);
      });

      it('listUsers of an empty store is an empty array', async () => {
        assert.deepEqual(await store.listUsers(), []);
      });

      it('removeUser removes the user with their tokens and hooks, and nobody else’s', async () => {
        await store.addUser({ name: 'alice', created: 'c' });
        await store.addUser({ name: 'bob', created: 'c' });
        await store.addToken(token('alice', 'aaaaaaaaaaa1'));
        await store.addToken(token('alice', 'aaaaaaaaaaa2'));
        await store.addToken(token('bob', 'bbbbbbbbbbb1'));
        const a1 = hook('alice', 1);
        const a2 = hook('alice', 2, { Persist: false });
        const b1 = hook('bob', 3);
        for (const h of [a1, a2, b1]) await store.putHook(h);

        assert.equal(await store.removeUser('alice'), true);
        assert.equal(await store.getUser('alice'), undefined);
        assert.deepEqual(
          (await store.listUsers()).map((u) => u.name),
          ['bob'],
        );
        assert.equal(await store.getToken('aaaaaaaaaaa1'), undefined);
        assert.equal(await store.getToken('aaaaaaaaaaa2'), undefined);
        assert.deepEqual(await store.listTokens('alice'), []);
        assert.equal(await store.getHook(a1.Id), undefined);
        assert.equal(await store.getHook(a2.Id), undefined);
        assert.deepEqual(await store.listHooks('alice'), []);

        assert.deepEqual(await store.getToken('bbbbbbbbbbb1'), token('bob', 'bbbbbbbbbbb1'));
        assert.deepEqual(await store.getHook(b1.Id), b1);
        assert.deepEqual(ids(await store.allHooks()), [b1.Id]);
      });

      it('removeUser of an unknown user is false and changes nothing', async () => {
        await store.addUser({ name: 'bob', created: 'c' });
        assert.equal(await store.removeUser('alice'), false);
        assert.equal((await store.listUsers()).length, 1);
      });

      it('a user added again after removal starts without the old tokens and hooks', async () => {
        await store.addUser({ name: 'alice', created: 'c' });
        await store.addToken(token('alice', 'aaaaaaaaaaa1'));
        await store.putHook(hook('alice', 1));
        await store.removeUser('alice');
        assert.equal(await store.addUser({ name: 'alice', created: 'd' }), true);
        assert.deepEqual(await store.listTokens('alice'), []);
        assert.deepEqual(await store.listHooks('alice'), []);
      });
    });

    describe('tokens', () => {
      beforeEach(async () => {
        await store.addUser({ name: 'alice', created: 'c' });
        await store.addUser({ name: 'bob', created: 'c' });
      });

      it('addToken then getToken returns the record', async () => {
        const t = token('alice', '0123456789ab');
        await store.addToken(t);
        assert.deepEqual(await store.getToken(t.id), t);
        assert.equal(await store.getToken('ffffffffffff'), undefined);
      });

      it('touchToken records when a token was last used; getToken and listTokens show it', async () => {
        const t = token('alice', '0123456789ab');
        await store.addToken(t);
        assert.equal((await store.getToken(t.id))!.lastUsed, undefined, 'absent until used');
        assert.ok(store.touchToken, 'every backend records it');
        await store.touchToken!(t.id, '2026-11-25T10:00:00.000Z');
        await store.touchToken!(t.id, '2026-11-25T10:01:00.000Z');
        assert.equal((await store.getToken(t.id))!.lastUsed, '2026-11-25T10:01:00.000Z');
        assert.equal((await store.listTokens('alice'))[0]!.lastUsed, '2026-11-25T10:01:00.000Z');
        await store.touchToken!('ffffffffffff', '2026-11-25T10:02:00.000Z');
        assert.equal(await store.getToken('ffffffffffff'), undefined, 'a gone token stays gone');
      });

      it('addToken for a user that does not exist is refused', async () => {
        await assert.rejects(store.addToken(token('nobody', '0123456789ab')));
        assert.equal(await store.getToken('0123456789ab'), undefined);
      });

      it('listTokens lists all, or one user’s, ordered by creation time then id', async () => {
        await store.addToken(token('alice', 'cccccccccccc', '2026-01-01T00:00:02.000+00:00'));
        await store.addToken(token('bob', 'bbbbbbbbbbbb', '2026-01-01T00:00:01.000+00:00'));
        await store.addToken(token('alice', 'aaaaaaaaaaaa', '2026-01-01T00:00:02.000+00:00'));
        await store.addToken(token('alice', 'dddddddddddd', '2026-01-01T00:00:00.000+00:00'));
        assert.deepEqual(
          (await store.listTokens()).map((t) => t.id),
          ['dddddddddddd', 'bbbbbbbbbbbb', 'aaaaaaaaaaaa', 'cccccccccccc'],
        );
        assert.deepEqual(
          (await store.listTokens('alice')).map((t) => t.id),
          ['dddddddddddd', 'aaaaaaaaaaaa', 'cccccccccccc'],
        );
        assert.deepEqual(
          (await store.listTokens('bob')).map((t) => t.id),
          ['bbbbbbbbbbbb'],
        );
        assert.deepEqual(await store.listTokens('carol'), []);
      });

      it('revokeToken removes it and says whether there was one', async () => {
        await store.addToken(token('alice', 'aaaaaaaaaaaa'));
        await store.addToken(token('alice', 'bbbbbbbbbbbb'));
        assert.equal(await store.revokeToken('aaaaaaaaaaaa'), true);
        assert.equal(await store.getToken('aaaaaaaaaaaa'), undefined);
        assert.equal(await store.revokeToken('aaaaaaaaaaaa'), false);
        assert.deepEqual(
          (await store.listTokens('alice')).map((t) => t.id),
          ['bbbbbbbbbbbb'],
        );
        // Revoking a token leaves its user in place.
        assert.ok(await store.getUser('alice'));
      });
    });
  });
}

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Accounts } from '../../src/users/accounts.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';

type HookBody = Record<string, unknown> & { Id: string; Modified: string };

const MODIFIED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;
const HOOK_ID = /^hk_[0-9A-HJKMNP-TV-Z]{30}$/;

const minimal = (n: number | string = 1) => ({
  PathPattern: `/repositories/*/timeseries/(*)/${n}`,
  Callback: 'http://127.0.0.1:9/hook',
  Methods: ['GET'],
});

/** Everything of a stored hook that a client controls, with the defaults the server must fill in. */
const withDefaults = (input: Record<string, unknown>) => ({
  Type: 1,
  StatusCodeBlackList: [],
  StatusCodeWhiteList: [],
  CallbackMethod: 'POST',
  CallbackContentMediaType: 'application/json',
  Headers: {},
  Persist: true,
  State: 'active',
  ...input,
});

function configOf(h: Record<string, unknown>): Record<string, unknown> {
  const { Id: _i, Modified: _m, ...rest } = h;
  return rest;
}

/** A new user with a token, straight through the store of the running daemon. */
async function addUser(d: TestDaemon, name: string): Promise<string> {
  const accounts = new Accounts(d.hookd.store);
  await accounts.addUser(name, ['/']);
  return (await accounts.createToken(name, 'test')).token;
}

async function create(d: TestDaemon, token: string, body: unknown): Promise<HookBody> {
  const r = await api<HookBody>(d.url, token, 'POST', '/hooks', body);
  assert.equal(r.status, 201, r.text);
  return r.body;
}

async function listIds(d: TestDaemon, token: string): Promise<string[]> {
  const r = await api<HookBody[]>(d.url, token, 'GET', '/hooks');
  assert.equal(r.status, 200, r.text);
  return r.body.map((h) => h.Id);
}

describe('hooks API over HTTP', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startHookd();
  });
  after(async () => {
    await d.close();
  });

  describe('POST /hooks', () => {
    it('answers 201 with Location and the stored hook, defaults filled in', async () => {
      const before = new Date().toISOString();
      const r = await api<HookBody>(d.url, d.token, 'POST', '/hooks', minimal());
      const afterwards = new Date().toISOString();
      assert.equal(r.status, 201, r.text);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      const h = r.body;
      assert.match(h.Id, HOOK_ID);
      assert.equal(r.headers.get('location'), `/hooks/${h.Id}`);
      assert.match(h.Modified, MODIFIED);
      const modified = h.Modified.replace('+00:00', 'Z');
      assert.ok(
        modified >= before.slice(0, 23) && modified <= afterwards,
        `${modified} outside ${before}…${afterwards}`,
      );
      assert.deepEqual(configOf(h), withDefaults({ Owner: 'admin', ...minimal() }));
      // The default event document is used: no CallbackContent is invented.
      assert.equal('CallbackContent' in h, false);
    });

    it('returns every field in input spelling, and the Location serves the same hook', async () => {
      const h = await create(d, d.token, minimal(2));
      assert.deepEqual(Object.keys(h).sort(), [
        'Callback',
        'CallbackContentMediaType',
        'CallbackMethod',
        'Headers',
        'Id',
        'Methods',
        'Modified',
        'Owner',
        'PathPattern',
        'Persist',
        'State',
        'StatusCodeBlackList',
        'StatusCodeWhiteList',
        'Type',
      ]);
      const got = await api(d.url, d.token, 'GET', `/hooks/${h.Id}`);
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, h);
    });

    it('keeps every field a client sets', async () => {
      const input = {
        PathPattern: '/repositories/*/timeseries/(*)/$',
        Callback: 'http://127.0.0.1:9/chat?room=1',
        Methods: ['PUT', 'DELETE'],
        Type: 1,
        StatusCodeBlackList: [500, 503],
        StatusCodeWhiteList: [200, 204],
        CallbackMethod: 'PATCH',
        CallbackContent: '{"text":"$REQUEST_METHOD $REQUEST_PATH ($1)","$schema":"x"}',
        CallbackContentMediaType: 'application/vnd.chat+json; charset=utf-8',
        ContentEscape: 'slack',
        Headers: { 'X-Api-Key': 'k', Authorization: 'Bearer downstream' },
        Persist: false,
      };
      const h = await create(d, d.token, input);
      assert.deepEqual(configOf(h), { ...input, Owner: 'admin', State: 'active' });
    });

    it('normalises methods: upper case, no duplicates, "*" stands alone', async () => {
      assert.deepEqual(
        (await create(d, d.token, { ...minimal(), Methods: ['get', 'Get', 'post'] })).Methods,
        ['GET', 'POST'],
      );
      assert.deepEqual((await create(d, d.token, { ...minimal(), Methods: ['get', '*'] })).Methods, ['*']);
      assert.equal((await create(d, d.token, { ...minimal(), CallbackMethod: 'put' })).CallbackMethod, 'PUT');
    });

    it('accepts a Type 0 hook with empty status lists', async () => {
      const h = await create(d, d.token, {
        ...minimal(),
        Type: 0,
        StatusCodeWhiteList: [],
        StatusCodeBlackList: [],
      });
      assert.equal(h.Type, 0);
    });

    it('gives every hook its own Id', async () => {
      const a = await create(d, d.token, minimal());
      const b = await create(d, d.token, minimal());
      assert.notEqual(a.Id, b.Id);
    });
  });

  describe('GET /hooks', () => {
    it('is an empty JSON array for a user without hooks', async () => {
      const token = await addUser(d, 'newcomer');
      const r = await api(d.url, token, 'GET', '/hooks');
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(r.text, '[]');
      assert.equal(r.headers.get('link'), null);
    });

    it("lists the caller's hooks in Id order, Persist true and false alike", async () => {
      const token = await addUser(d, 'lister');
      const made = [];
      for (let i = 0; i < 4; i++) made.push(await create(d, token, { ...minimal(i), Persist: i % 2 === 0 }));
      const r = await api<HookBody[]>(d.url, token, 'GET', '/hooks');
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body,
        [...made].sort((a, b) => (a.Id < b.Id ? -1 : 1)),
      );
      assert.equal(r.headers.get('link'), null);
    });

    describe('paging', () => {
      let token: string;
      let all: string[];
      before(async () => {
        token = await addUser(d, 'pager');
        for (let i = 0; i < 7; i++) await create(d, token, { ...minimal(i), Persist: i % 3 !== 1 });
        all = await listIds(d, token);
        assert.equal(all.length, 7);
      });

      async function walk(first: string): Promise<{ pages: string[][]; links: (string | null)[] }> {
        const pages: string[][] = [];
        const links: (string | null)[] = [];
        let next: string | null = first;
        while (next !== null) {
          assert.ok(pages.length < 20, 'the Link chain does not end');
          const r: Awaited<ReturnType<typeof api<HookBody[]>>> = await api<HookBody[]>(
            d.url,
            token,
            'GET',
            next,
          );
          assert.equal(r.status, 200, r.text);
          pages.push(r.body.map((h) => h.Id));
          const link = r.headers.get('link');
          links.push(link);
          if (link === null) next = null;
          else {
            const m = /^<([^>]+)>; rel="next"$/.exec(link);
            assert.ok(m, `Link header ${link}`);
            next = m[1]!;
          }
        }
        return { pages, links };
      }

      it('follows Link: rel="next" to the end, every hook once, in order', async () => {
        const { pages, links } = await walk('/hooks?limit=3');
        assert.deepEqual(
          pages.map((p) => p.length),
          [3, 3, 1],
        );
        assert.deepEqual(pages.flat(), all);
        assert.equal(links[0], `</hooks?limit=3&after=${all[2]}>; rel="next"`);
        assert.equal(links[2], null);
      });

      it('has no Link on a last page that is exactly full', async () => {
        const { pages } = await walk('/hooks?limit=7');
        assert.deepEqual(pages, [all]);
        const { pages: p1 } = await walk('/hooks?limit=1');
        assert.equal(p1.length, 7);
        assert.deepEqual(p1.flat(), all);
      });

      it('after alone starts behind that Id; after the last Id is empty', async () => {
        const r = await api<HookBody[]>(d.url, token, 'GET', `/hooks?after=${all[4]}`);
        assert.deepEqual(
          r.body.map((h) => h.Id),
          all.slice(5),
        );
        const end = await api<HookBody[]>(d.url, token, 'GET', `/hooks?after=${all[6]}&limit=5`);
        assert.deepEqual(end.body, []);
        assert.equal(end.headers.get('link'), null);
      });

      it('limit=1000 is allowed and returns everything', async () => {
        const r = await api<HookBody[]>(d.url, token, 'GET', '/hooks?limit=1000');
        assert.equal(r.status, 200);
        assert.deepEqual(
          r.body.map((h) => h.Id),
          all,
        );
      });

      for (const q of [
        'limit=0',
        'limit=1001',
        'limit=-1',
        'limit=1.5',
        'limit=abc',
        'limit=',
        'limit=1&limit=2',
      ]) {
        it(`?${q} is 400 naming limit`, async () => {
          const r = await api<{ code: string; errors: { field: string }[] }>(
            d.url,
            token,
            'GET',
            `/hooks?${q}`,
          );
          assert.equal(r.status, 400, r.text);
          assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
          assert.equal(r.body.code, 'BAD_REQUEST');
          assert.deepEqual(
            r.body.errors.map((e) => e.field),
            ['limit'],
          );
        });
      }

      for (const q of ['after=%00', 'after=a%20b', `after=${'x'.repeat(65)}`]) {
        it(`?${q.slice(0, 20)} is 400 naming after`, async () => {
          const r = await api<{ code: string; errors: { field: string }[] }>(
            d.url,
            token,
            'GET',
            `/hooks?${q}`,
          );
          assert.equal(r.status, 400, r.text);
          assert.deepEqual(
            r.body.errors.map((e) => e.field),
            ['after'],
          );
        });
      }
    });
  });

  describe('GET /hooks/{id}', () => {
    it('returns the hook', async () => {
      const h = await create(d, d.token, { ...minimal(), CallbackContent: '$REQUEST_PATH' });
      const r = await api(d.url, d.token, 'GET', `/hooks/${h.Id}`);
      assert.equal(r.status, 200);
      // The create answer adds the lint's Warnings (a bare variable under JSON); GET does not.
      const { Warnings, ...stored } = h as typeof h & { Warnings?: unknown[] };
      assert.equal(Warnings?.length, 1);
      assert.deepEqual(r.body, stored);
      assert.equal(r.headers.get('etag'), `"${h.Modified}"`);
    });

    it('is 404 for an unknown or junk id', async () => {
      for (const id of ['hk_00000000000000000000000000000', 'nope', '%00', 'a%2Fb', '..%2F..%2Fetc']) {
        const r = await api<{ code: string }>(d.url, d.token, 'GET', `/hooks/${id}`);
        assert.equal(r.status, 404, `${id}: ${r.text}`);
        assert.equal(r.body.code, 'NOT_FOUND');
      }
    });
  });

  describe('PUT /hooks/{id}', () => {
    it('replaces the whole configuration: left-out fields take their defaults, Id kept, Modified changes', async () => {
      const full = {
        PathPattern: '/a/(*)',
        Callback: 'http://127.0.0.1:9/one',
        Methods: ['POST'],
        Type: 0,
        CallbackMethod: 'PUT',
        CallbackContent: 'x=$1',
        CallbackContentMediaType: 'text/plain',
        Headers: { 'X-One': '1' },
        Persist: false,
      };
      const h = await create(d, d.token, full);
      await sleep(5); // so that the new Modified is a later millisecond
      const replacement = { PathPattern: '/b', Callback: 'http://127.0.0.1:9/two', Methods: ['GET'] };
      const r = await api<HookBody>(d.url, d.token, 'PUT', `/hooks/${h.Id}`, replacement);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.Id, h.Id);
      assert.match(r.body.Modified, MODIFIED);
      assert.ok(r.body.Modified > h.Modified, `${r.body.Modified} is not after ${h.Modified}`);
      assert.deepEqual(configOf(r.body), withDefaults({ Owner: 'admin', ...replacement }));
      assert.equal('CallbackContent' in r.body, false);

      const got = await api(d.url, d.token, 'GET', `/hooks/${h.Id}`);
      assert.deepEqual(got.body, r.body);
      // Persist flipped from false to true: the hook moved store, and is listed once.
      const ids = await listIds(d, d.token);
      assert.equal(ids.filter((id) => id === h.Id).length, 1);
    });

    it('takes back what GET returned, unchanged (round trip)', async () => {
      const h = await create(d, d.token, {
        ...minimal(),
        CallbackContent: '{"p":"$REQUEST_PATH"}',
        Headers: { 'X-A': 'a' },
        StatusCodeWhiteList: [201],
        Persist: false,
      });
      const got = await api<HookBody>(d.url, d.token, 'GET', `/hooks/${h.Id}`);
      await sleep(2);
      const r = await api<HookBody>(d.url, d.token, 'PUT', `/hooks/${h.Id}`, got.body);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(configOf(r.body), configOf(h));
      assert.equal(r.body.Id, h.Id);
    });

    it('ignores Id, Owner, Modified and State in the body', async () => {
      const h = await create(d, d.token, minimal());
      const other = await create(d, d.token, minimal());
      const r = await api<HookBody>(d.url, d.token, 'PUT', `/hooks/${h.Id}`, {
        ...minimal(),
        Id: other.Id,
        Owner: 'mallory',
        Modified: '2000-01-01T00:00:00.000+00:00',
        State: 'disabled',
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.Id, h.Id);
      assert.equal(r.body.Owner, 'admin');
      assert.equal(r.body.State, 'active');
      assert.notEqual(r.body.Modified, '2000-01-01T00:00:00.000+00:00');
      const untouched = await api(d.url, d.token, 'GET', `/hooks/${other.Id}`);
      assert.deepEqual(untouched.body, other);
    });

    it('is 404 for an unknown id and creates nothing', async () => {
      const before = await listIds(d, d.token);
      const r = await api(d.url, d.token, 'PUT', '/hooks/hk_0000000000ZZZZZZZZZZZZZZZZZZZZ', minimal());
      assert.equal(r.status, 404);
      assert.deepEqual(await listIds(d, d.token), before);
    });

    it('leaves the hook as it was when the replacement is invalid', async () => {
      const h = await create(d, d.token, minimal());
      const r = await api(d.url, d.token, 'PUT', `/hooks/${h.Id}`, { ...minimal(), Methods: [] });
      assert.equal(r.status, 400);
      assert.deepEqual((await api(d.url, d.token, 'GET', `/hooks/${h.Id}`)).body, h);
    });
  });

  describe('DELETE /hooks/{id}', () => {
    for (const persist of [true, false]) {
      it(`answers 204 with no body, then 404 (Persist ${persist})`, async () => {
        const h = await create(d, d.token, { ...minimal(), Persist: persist });
        const r = await api(d.url, d.token, 'DELETE', `/hooks/${h.Id}`);
        assert.equal(r.status, 204);
        assert.equal(r.text, '');
        assert.equal((await api(d.url, d.token, 'GET', `/hooks/${h.Id}`)).status, 404);
        assert.equal((await api(d.url, d.token, 'DELETE', `/hooks/${h.Id}`)).status, 404);
        assert.equal((await api(d.url, d.token, 'PUT', `/hooks/${h.Id}`, minimal())).status, 404);
        assert.equal((await listIds(d, d.token)).includes(h.Id), false);
      });
    }
  });

  describe('GET /hooktypes', () => {
    it('lists BeforeCompletion (0) and AfterCompletion (1), with exactly Type, Name, Description', async () => {
      const r = await api<{ Type: number; Name: string; Description: string }[]>(
        d.url,
        d.token,
        'GET',
        '/hooktypes',
      );
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(
        r.body.map(({ Type, Name }) => ({ Type, Name })),
        [
          { Type: 0, Name: 'BeforeCompletion' },
          { Type: 1, Name: 'AfterCompletion' },
        ],
      );
      for (const t of r.body) {
        assert.deepEqual(Object.keys(t), ['Type', 'Name', 'Description']);
        assert.equal(typeof t.Description, 'string');
        assert.ok(t.Description.length > 20);
      }
    });
  });

  describe('users are isolated from each other', () => {
    let bob: string;
    let aliceHook: HookBody;
    before(async () => {
      bob = await addUser(d, 'bob');
      aliceHook = await create(d, d.token, { ...minimal('alice'), Headers: { 'X-Secret': 's' } });
    });

    it("another user's list does not show them, and their hooks carry their name", async () => {
      const mine = await create(d, bob, minimal('bob'));
      assert.equal(mine.Owner, 'bob');
      assert.deepEqual(await listIds(d, bob), [mine.Id]);
      assert.equal((await listIds(d, d.token)).includes(mine.Id), false);
      assert.ok((await listIds(d, d.token)).includes(aliceHook.Id));
      // Paging does not leak either.
      const page = await api<HookBody[]>(
        d.url,
        bob,
        'GET',
        `/hooks?limit=1000&after=${'hk_0'.padEnd(33, '0')}`,
      );
      assert.deepEqual(
        page.body.map((h) => h.Id),
        [mine.Id],
      );
    });

    it("get, replace and delete of another user's hook are 404, indistinguishable from an unknown id", async () => {
      const unknown = 'hk_0000000000ZZZZZZZZZZZZZZZZZZZZ';
      for (const [method, body] of [
        ['GET', undefined],
        ['PUT', minimal('stolen')],
        ['DELETE', undefined],
      ] as const) {
        const theirs = await api<{ code: string; detail: string }>(
          d.url,
          bob,
          method,
          `/hooks/${aliceHook.Id}`,
          body,
        );
        const none = await api<{ code: string; detail: string }>(
          d.url,
          bob,
          method,
          `/hooks/${unknown}`,
          body,
        );
        assert.equal(theirs.status, 404, `${method}: ${theirs.text}`);
        assert.equal(theirs.body.code, 'NOT_FOUND');
        assert.equal(theirs.body.detail.replace(aliceHook.Id, 'ID'), none.body.detail.replace(unknown, 'ID'));
      }
      const still = await api(d.url, d.token, 'GET', `/hooks/${aliceHook.Id}`);
      assert.equal(still.status, 200);
      assert.deepEqual(still.body, aliceHook);
    });

    it("an invalid replace of another user's hook is 404 too, so validation does not reveal it", async () => {
      const r = await api(d.url, bob, 'PUT', `/hooks/${aliceHook.Id}`, { nonsense: true });
      assert.equal(r.status, 404, r.text);
    });
  });
});

describe('hooks API under a base path (--api-base /api)', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startHookd({ apiBase: '/api' });
  });
  after(async () => {
    await d.close();
  });

  it('serves the hooks below the base, with Location and Link carrying it', async () => {
    const a = await api<HookBody>(d.url, d.token, 'POST', '/api/hooks', minimal());
    assert.equal(a.status, 201, a.text);
    assert.equal(a.headers.get('location'), `/api/hooks/${a.body.Id}`);
    await api(d.url, d.token, 'POST', '/api/hooks', minimal(2));
    const page = await api(d.url, d.token, 'GET', '/api/hooks?limit=1');
    assert.equal(page.headers.get('link'), `</api/hooks?limit=1&after=${a.body.Id}>; rel="next"`);
    assert.equal((await api(d.url, d.token, 'GET', `/api/hooks/${a.body.Id}`)).status, 200);
    assert.equal((await api(d.url, d.token, 'GET', '/api/hooktypes')).status, 200);
  });

  it('does not serve the API outside the base', async () => {
    const r = await api<{ code: string }>(d.url, d.token, 'GET', '/hooks');
    assert.equal(r.status, 404);
    assert.equal(r.body.code, 'NOT_FOUND');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Hook } from '../../src/hook/hook.js';
import { api, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';

// docs/API.md "Versions: ETag and If-Match": PUT and DELETE with `If-Match` act only on the
// version named (a tag, a list of tags, or `*`); a stale one is 412 PRECONDITION_FAILED with the
// current ETag and changes nothing; weak tags never match (strong comparison). `hookctl apply
// --prune` relies on the DELETE half.

let d: TestDaemon;
before(async () => {
  d = await startHookd();
});
after(async () => {
  await d.close();
});

const body = (n: number) => ({
  PathPattern: `/if-match/${n}`,
  Methods: ['GET'],
  Callback: 'http://127.0.0.1:9/cb',
});

/** A hook and its ETag, then replaced once: `stale` is the first version's ETag. */
async function twoVersions(n: number): Promise<{ hook: Hook; stale: string; current: string }> {
  const first = await createHook(d, body(n));
  const got = await api<Hook>(d.url, d.token, 'GET', `/hooks/${first.Id}`);
  const stale = got.headers.get('etag')!;
  assert.equal(stale, `"${first.Modified}"`, 'the ETag is the Modified value in quotes');
  const put = await api<Hook>(d.url, d.token, 'PUT', `/hooks/${first.Id}`, {
    ...body(n),
    Headers: { 'X-V': '2' },
  });
  assert.equal(put.status, 200, put.text);
  const current = put.headers.get('etag')!;
  assert.notEqual(current, stale);
  return { hook: put.body, stale, current };
}

const exists = async (id: string) => (await api(d.url, d.token, 'GET', `/hooks/${id}`)).status === 200;

describe('DELETE /hooks/{id} with If-Match', () => {
  it('a stale tag is 412 PRECONDITION_FAILED with the current ETag, and the hook stays', async () => {
    const { hook, stale, current } = await twoVersions(1);
    const r = await api<{ code: string }>(d.url, d.token, 'DELETE', `/hooks/${hook.Id}`, undefined, {
      'If-Match': stale,
    });
    assert.equal(r.status, 412, r.text);
    assert.equal(r.body.code, 'PRECONDITION_FAILED');
    assert.equal(r.headers.get('etag'), current);
    assert.ok(await exists(hook.Id), 'nothing was deleted');
  });

  it('the current tag deletes (204)', async () => {
    const { hook, current } = await twoVersions(2);
    const r = await api(d.url, d.token, 'DELETE', `/hooks/${hook.Id}`, undefined, { 'If-Match': current });
    assert.equal(r.status, 204, r.text);
    assert.equal(await exists(hook.Id), false);
  });

  it('a list deletes when any tag in it is current, and is 412 when none is', async () => {
    const { hook, stale, current } = await twoVersions(3);
    const none = await api(d.url, d.token, 'DELETE', `/hooks/${hook.Id}`, undefined, {
      'If-Match': `${stale}, "2000-01-01T00:00:00.000+00:00"`,
    });
    assert.equal(none.status, 412, none.text);
    assert.ok(await exists(hook.Id));
    const any = await api(d.url, d.token, 'DELETE', `/hooks/${hook.Id}`, undefined, {
      'If-Match': `${stale}, ${current}`,
    });
    assert.equal(any.status, 204, any.text);
    assert.equal(await exists(hook.Id), false);
  });

  it('`*` deletes whatever the version', async () => {
    const { hook } = await twoVersions(4);
    const r = await api(d.url, d.token, 'DELETE', `/hooks/${hook.Id}`, undefined, { 'If-Match': '*' });
    assert.equal(r.status, 204, r.text);
    assert.equal(await exists(hook.Id), false);
  });

  it('a weak tag never matches, even of the current version (strong comparison)', async () => {
    const { hook, current } = await twoVersions(5);
    const r = await api(d.url, d.token, 'DELETE', `/hooks/${hook.Id}`, undefined, {
      'If-Match': `W/${current}`,
    });
    assert.equal(r.status, 412, r.text);
    assert.ok(await exists(hook.Id));
  });
});

describe('PUT /hooks/{id} with If-Match: lists, `*` and weak tags', () => {
  it('replaces with a list holding the current tag or with `*`; a weak tag or a stale list is 412', async () => {
    const { hook, stale, current } = await twoVersions(6);
    const put = (ifMatch: string, v: string) =>
      api<Hook>(
        d.url,
        d.token,
        'PUT',
        `/hooks/${hook.Id}`,
        { ...body(6), Headers: { 'X-V': v } },
        {
          'If-Match': ifMatch,
        },
      );
    assert.equal((await put(`W/${current}`, 'weak')).status, 412);
    assert.equal((await put(`${stale}, "x"`, 'stale')).status, 412);
    const listed = await put(`"x", ${current}`, '3');
    assert.equal(listed.status, 200, listed.text);
    const star = await put('*', '4');
    assert.equal(star.status, 200, star.text);
    const now = await api<Hook>(d.url, d.token, 'GET', `/hooks/${hook.Id}`);
    assert.deepEqual(now.body.Headers, { 'X-V': '4' }, 'only the matching replaces took effect');
  });
});

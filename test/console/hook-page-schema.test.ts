import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { REPO_ROOT, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { createHook } from '../helpers/servers.js';

// The console's hook page has a place for every field of the hook's JSON Schema: each group of
// its facts names the fields it shows (data-field), and a field the schema has and the page does
// not is caught here, for a hook that sets it and for one that leaves it out.

const schema = JSON.parse(readFileSync(join(REPO_ROOT, 'schema', 'hook.schema.json'), 'utf8')) as {
  properties: Record<string, unknown>;
};
const SCHEMA_FIELDS = Object.keys(schema.properties).filter((k) => k !== '$schema');

describe('the hook page against the hook schema', () => {
  let d: TestDaemon;
  let cookie = '';
  const root = () => `${d.consoleUrl}/_hookd/console`;
  before(async () => {
    d = await startHookd();
    const signin = await fetch(`${root()}/signin`);
    const pre = signin.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await signin.text())![1]!;
    const signed = await fetch(`${root()}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, token: d.token }),
    });
    cookie = signed.headers.getSetCookie()[0]!.split(';')[0]!;
  });
  after(async () => {
    await d?.close();
  });

  /** The page's facts: each data-field group's fields and what it shows. */
  async function facts(id: string): Promise<Map<string, string>> {
    const page = await (await fetch(`${root()}/hooks/${id}`, { headers: { cookie } })).text();
    const out = new Map<string, string>();
    for (const m of page.matchAll(/<div data-field="([^"]+)"(?: hidden)?>([\s\S]*?)<\/div>/g))
      for (const f of m[1]!.split(' ')) out.set(f, m[2]!);
    return out;
  }

  it('a hook with only the required fields: every schema field has a place', async () => {
    const hook = await createHook(d, {
      PathPattern: '/bare/*',
      Callback: 'http://127.0.0.1:9/in',
      Methods: ['GET'],
    });
    const shown = await facts(hook.Id);
    assert.ok(shown.size > 0, 'the page marks its facts');
    const missing = SCHEMA_FIELDS.filter((f) => !shown.has(f));
    assert.deepEqual(missing, [], `schema fields with no place on the hook page: ${missing.join(', ')}`);
    const unknown = [...shown.keys()].filter((f) => !SCHEMA_FIELDS.includes(f));
    assert.deepEqual(unknown, [], `places for fields the schema does not have: ${unknown.join(', ')}`);
    assert.match(shown.get('ContentEscape')!, /none/);
  });

  it('a hook that sets the optional fields: each place shows its value', async () => {
    const hook = await createHook(d, {
      Name: 'everything',
      PathPattern: '/full/(*)',
      Callback: 'https://chat.example/in',
      Methods: ['POST'],
      Type: 1,
      StatusCodeWhiteList: [201],
      CallbackContent: '{"text": "made $1"}',
      ContentEscape: 'slack',
      Filter: 'request.method == "POST"',
      Transform: 'function transform(e) { return {}; }',
      Ordering: { Key: '$1' },
      RetrySchedule: [0, 30],
      RateLimit: { PerSecond: 2, Burst: 4 },
      Verification: 'off',
      Signature: { Schemes: ['v1a'] },
    });
    const shown = await facts(hook.Id);
    const missing = SCHEMA_FIELDS.filter((f) => !shown.has(f));
    assert.deepEqual(missing, [], `schema fields with no place on the hook page: ${missing.join(', ')}`);
    for (const [field, want] of [
      ['Name', /everything/],
      ['ContentEscape', /<dd class="content-escape">slack<\/dd>/],
      ['Filter', /request\.method == &quot;POST&quot;|request\.method == "POST"/],
      ['Transform', /function transform/],
      ['Ordering', /\$1/],
      ['Signature', /v1a/],
      ['Verification', /off/],
      ['StatusCodeWhiteList', /201/],
      ['RateLimit', /2 per second, bursts of 4/],
    ] as const)
      assert.match(shown.get(field)!, want, field);
  });
});

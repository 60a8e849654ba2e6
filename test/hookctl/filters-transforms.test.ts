import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { cleanEnv, hookctlInProcess as hookctl } from './helpers.js';

// hookctl carries Filter and Transform: create and replace take --transform-file, and match
// sends headers and bodies and shows what the filter and the transform made of them.

let daemon: TestDaemon;
let env: NodeJS.ProcessEnv;
const dir = tempDir('hookctl-filters-');
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

before(async () => {
  // These tests are about hookctl's flags, not the sandbox's limit: a run's wall time counts the
  // moments its thread waits for a core, and on a machine running two suites at once the first run
  // of a Transform overran the default 50 ms.
  daemon = await startHookd({ transformTimeLimit: 5000 });
  env = cleanEnv({ HOOKD_URL: daemon.url, HOOKD_TOKEN: daemon.token });
});
after(() => daemon?.close());

const HOOK = JSON.stringify({
  PathPattern: '/repositories/(*)/timeseries/*/data',
  Methods: ['POST'],
  Type: 0,
  Callback: 'http://127.0.0.1:9/chat',
  Filter: 'request.body.quality == "bad" && request.query.unit == "kWh"',
});

describe('hookctl with filters and transforms', () => {
  it('create --transform-file, get shows both, match --header/--body shows Filter and Transform', async () => {
    const js = file(
      'chat.js',
      'function transform(event) {\n  return { payload: { text: "bad reading in " + event.captures[0] } };\n}\n',
    );
    const created = await hookctl(['create', '-f', file('h.json', HOOK), '--transform-file', js], { env });
    assert.equal(created.code, 0, created.stderr);
    const id = created.stdout.trim();
    const got = await hookctl(['get', id, '-o', 'json'], { env });
    const hook = JSON.parse(got.stdout) as { Filter: string; Transform: string };
    assert.equal(
      hook.Transform,
      'function transform(event) {\n  return { payload: { text: "bad reading in " + event.captures[0] } };\n}\n',
    );
    assert.match(hook.Filter, /quality/);
    const body = file('write.json', '{"quality": "bad", "value": 3}');
    const m = await hookctl(
      [
        'match',
        'POST',
        '/repositories/r1/timeseries/ts/data?unit=kWh',
        '--header',
        'X-Unit: kWh',
        '--body',
        body,
        '-o',
        'json',
      ],
      { env },
    );
    assert.equal(m.code, 0, m.stderr);
    const [view] = JSON.parse(m.stdout) as { Filter: unknown; Transform: { Payload: string } }[];
    assert.deepEqual(view!.Filter, { Matched: true, Error: null });
    assert.deepEqual(JSON.parse(view!.Transform.Payload), { text: 'bad reading in r1' });
    const table = await hookctl(
      ['match', 'POST', '/repositories/r1/timeseries/ts/data?unit=MWh', '--body', '-'],
      {
        env,
        input: '{"quality": "bad"}',
      },
    );
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /no match/);
  });

  it('a Transform that does not compile is refused naming Transform', async () => {
    const js = file('bad.js', 'function transform(event) {\n  return {;\n}\n');
    const r = await hookctl(['create', '-f', file('h2.json', HOOK), '--transform-file', js], { env });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Transform/);
    assert.match(r.stderr, /2:\d+/);
  });
});

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { cleanEnv, fakeStdin, runInProcess } from './helpers.js';

// hookctl's Filter and Transform flags through the run seam against a real hookd: match's
// repeated --header, --body -, --response-header, --response-body with --status and -o json;
// replace --transform-file FILE and -; validate, diff and apply carrying both fields; get showing
// a hook's LastFilterError.

let daemon: TestDaemon;
let env: NodeJS.ProcessEnv;
const dir = tempDir('hookctl-flags-');
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

const hookctl = (args: string[], input = '') =>
  runInProcess(args, { env, tty: false, stdin: fakeStdin({ tty: false, input }) });

before(async () => {
  daemon = await startHookd();
  env = cleanEnv({ HOOKD_URL: daemon.url, HOOKD_TOKEN: daemon.token });
});
after(() => daemon?.close());

const AFTER = {
  Name: 'answered-chat',
  PathPattern: '/repositories/(*)/data',
  Methods: ['PUT'],
  Type: 1,
  Callback: 'http://127.0.0.1:9/chat',
  Filter:
    'response.status == 201 && response.headers["x-kind"] == "points" && response.body.Points > 100 && request.headers["x-unit"] == "kWh" && request.headers["x-tenant"] == "acme" && request.body.quality == "bad"',
};
const CHAT =
  'function transform(event) {\n  return { payload: { text: event.response.body.Points + " points" } };\n}\n';

describe('hookctl: Filter and Transform flags', () => {
  it('match: repeated --header, --body -, --response-header, --response-body and --status; -o json is the API answer', async () => {
    const created = await hookctl(
      ['create', '-f', file('after.json', JSON.stringify(AFTER)), '--transform-file', '-'],
      CHAT,
    );
    assert.equal(created.code, 0, created.stderr);
    const id = created.stdout.trim();
    const args = (status: string, points: number) => [
      'match',
      'PUT',
      '/repositories/r1/data',
      '--header',
      'X-Unit: kWh',
      '--header',
      'X-Tenant: acme',
      '--body',
      '-',
      '--status',
      status,
      '--response-header',
      'X-Kind: points',
      '--response-header',
      'Content-Type: application/json',
      '--response-body',
      file(`answer-${points}.json`, JSON.stringify({ Points: points })),
      '-o',
      'json',
    ];
    const hit = await hookctl(args('201', 1440), '{"quality": "bad"}');
    assert.equal(hit.code, 0, hit.stderr);
    const [view] = JSON.parse(hit.stdout) as {
      HookId: string;
      Filter: unknown;
      Transform: { Payload: string; Error: unknown };
    }[];
    assert.equal(view!.HookId, id);
    assert.deepEqual(view!.Filter, { Matched: true, Error: null });
    assert.deepEqual(JSON.parse(view!.Transform.Payload), { text: '1440 points' });
    // The same request, as the API answers it directly: -o json is that answer.
    const direct = await fetch(`${daemon.url}/_hookd/match`, {
      method: 'POST',
      headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        Method: 'PUT',
        Path: '/repositories/r1/data',
        StatusCode: 201,
        Headers: { 'X-Unit': 'kWh', 'X-Tenant': 'acme' },
        Body: { quality: 'bad' },
        ResponseHeaders: { 'X-Kind': 'points', 'Content-Type': 'application/json' },
        ResponseBody: { Points: 1440 },
      }),
    }).then((r) => r.json());
    const untimed = (v: unknown) =>
      JSON.parse(JSON.stringify(v).replace(/\\"timestamp\\":\\"[^\\]+\\"/g, ''));
    assert.deepEqual(untimed(JSON.parse(hit.stdout)), untimed(direct));
    // Another status, or a smaller answer: the filter says no, in the table too.
    const miss = await hookctl(args('200', 1440).slice(0, -2), '{"quality": "bad"}');
    assert.equal(miss.code, 0, miss.stderr);
    assert.match(miss.stdout, /no match/);
    const small = await hookctl(args('201', 5), '{"quality": "bad"}');
    assert.deepEqual((JSON.parse(small.stdout) as { Filter: unknown }[])[0]!.Filter, {
      Matched: false,
      Error: null,
    });
    const both = await hookctl(['match', 'PUT', '/x', '--body', '-', '--response-body', '-']);
    assert.notEqual(both.code, 0);
    assert.match(both.stderr, /cannot both read standard input/);
  });

  it('replace --transform-file FILE and -: the hook takes the new Transform', async () => {
    const id = (await hookctl(['get', 'answered-chat', '-o', 'json'])).stdout;
    const hookId = (JSON.parse(id) as { Id: string }).Id;
    const hookFile = file('after2.json', JSON.stringify(AFTER));
    const js = file('v2.js', 'function transform(event) {\n  return { "skip": true };\n}\n');
    const r1 = await hookctl(['replace', hookId, '-f', hookFile, '--transform-file', js]);
    assert.equal(r1.code, 0, r1.stderr);
    const v2 = JSON.parse((await hookctl(['get', hookId, '-o', 'json'])).stdout) as { Transform: string };
    assert.match(v2.Transform, /"skip": true/);
    const v3src = 'function transform(event) {\n  return { payload: "v3" };\n}\n';
    const r2 = await hookctl(['replace', hookId, '-f', hookFile, '--transform-file', '-'], v3src);
    assert.equal(r2.code, 0, r2.stderr);
    const v3 = JSON.parse((await hookctl(['get', hookId, '-o', 'json'])).stdout) as {
      Transform: string;
      Filter: string;
    };
    assert.equal(v3.Transform, v3src);
    assert.equal(v3.Filter, AFTER.Filter);
    const clash = await hookctl(['replace', hookId, '-f', '-', '--transform-file', '-'], '{}');
    assert.notEqual(clash.code, 0);
    assert.match(clash.stderr, /both read standard input/);
    await hookctl(['delete', hookId]);
  });

  it('validate, diff and apply carry Filter and Transform', async () => {
    const hook = {
      ...AFTER,
      Name: 'as-code',
      Transform: 'function transform(event) {\n  return { payload: "a" };\n}',
    };
    const good = file('as-code.json', JSON.stringify(hook));
    const v = await hookctl(['validate', '-f', good, '-o', 'json']);
    assert.equal(v.code, 0, v.stderr);
    const checked = JSON.parse(v.stdout) as { Filter: string; Transform: string };
    assert.deepEqual([checked.Filter, checked.Transform], [hook.Filter, hook.Transform]);
    const badFilter = await hookctl([
      'validate',
      '-f',
      file('bad-filter.json', JSON.stringify({ ...hook, Filter: 'requst.method == "PUT"' })),
    ]);
    assert.notEqual(badFilter.code, 0);
    assert.match(
      badFilter.stderr,
      /Filter.*undeclared reference to 'requst' at 1:1; did you mean 'request'\?/,
    );
    const badTransform = await hookctl([
      'validate',
      '-f',
      file(
        'bad-transform.json',
        JSON.stringify({ ...hook, Transform: 'function transform(e) {\n  return {;\n}' }),
      ),
    ]);
    assert.notEqual(badTransform.code, 0);
    assert.match(badTransform.stderr, /Transform.*2:\d+/);

    // apply's exit status is diff's: 1 when it changed something.
    const applied = await hookctl(['apply', '-f', good]);
    assert.equal(applied.code, 1, applied.stderr);
    assert.match(applied.stdout, /hook\/as-code created/);
    const stored = JSON.parse((await hookctl(['get', 'as-code', '-o', 'json'])).stdout) as {
      Filter: string;
      Transform: string;
    };
    assert.deepEqual([stored.Filter, stored.Transform], [hook.Filter, hook.Transform]);
    assert.equal((await hookctl(['diff', '-f', good])).code, 0, 'no differences once applied');
    const changed = file(
      'as-code-2.json',
      JSON.stringify({
        ...hook,
        Filter: `${hook.Filter} && request.query.unit == "kWh"`,
        Transform: hook.Transform.replace('"a"', '"b"'),
      }),
    );
    const diff = await hookctl(['diff', '-f', changed]);
    assert.equal(diff.code, 1, diff.stderr);
    assert.match(diff.stdout, /^-.*"Filter"/m);
    assert.match(diff.stdout, /^\+.*request\.query\.unit/m);
    assert.match(diff.stdout, /^\+.*payload: \\"b\\"/m);
    const again = await hookctl(['apply', '-f', changed]);
    assert.equal(again.code, 1, again.stderr);
    assert.match(again.stdout, /hook\/as-code configured/);
    const now = JSON.parse((await hookctl(['get', 'as-code', '-o', 'json'])).stdout) as {
      Transform: string;
      Id: string;
    };
    assert.match(now.Transform, /payload: "b"/);
    await hookctl(['delete', now.Id]);
  });

  it("get shows the hook's LastFilterError once an evaluation fails", async () => {
    const created = await hookctl(
      ['create', '-f', '-'],
      JSON.stringify({
        PathPattern: '/lfe/*',
        Methods: ['POST'],
        Type: 0,
        Callback: 'http://127.0.0.1:9/x',
        Filter: 'request.body.missing.deeper == 1',
      }),
    );
    assert.equal(created.code, 0, created.stderr);
    const id = created.stdout.trim();
    const r = await fetch(`${daemon.url}/_hookd/report`, {
      method: 'POST',
      headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ Method: 'POST', Path: '/lfe/1', Body: { other: 1 } }),
    });
    assert.equal(r.status, 202, await r.text());
    const got = await hookctl(['get', id]);
    assert.equal(got.code, 0, got.stderr);
    const shown = JSON.parse(got.stdout) as { LastFilterError?: { At: string; Error: string } };
    assert.ok(shown.LastFilterError, got.stdout);
    assert.match(shown.LastFilterError.Error, /missing/);
    await hookctl(['delete', id]);
  });
});

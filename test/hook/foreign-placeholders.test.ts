import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { lintHook } from '../../src/hook/index.js';
import { api, onConsoleOrigin, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { cleanEnv, runInProcess } from '../hookctl/helpers.js';

// Path placeholders spelt as OpenAPI ({id}) or Express and Rails (:repo) do are literal segments
// in a hookd pattern: the hook is accepted but never fires, so create, validate and the console
// say so, naming the segment and hookd's spelling.

const SAYS = (seg: string) =>
  `\`${seg}\` is a literal segment here; for any value write \`*\`, to capture it \`(*)\``;

describe('foreign path placeholders', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startHookd();
  });
  after(async () => {
    await d.close();
  });

  it('the lint names each such segment, and leaves hookd spellings and plain literals alone', () => {
    const lint = (PathPattern: string) =>
      lintHook({ PathPattern, Methods: ['GET'], Type: 0 }).warnings.map((w) => w.message);
    assert.deepEqual(lint('/repositories/{id}/timeseries/(*)'), [SAYS('{id}')]);
    assert.deepEqual(lint('/repositories/:repo/x/{ts_id}'), [SAYS(':repo'), SAYS('{ts_id}')]);
    assert.deepEqual(lint('/repositories/*/timeseries/(*)'), []);
    assert.deepEqual(lint('/a:b/x'), [], 'a colon inside a segment is an ordinary character');
  });

  it('create answers 201 with the warning (the API)', async () => {
    const r = await api<{ Warnings?: { Field: string; Message: string }[] }>(
      d.url,
      d.token,
      'POST',
      '/hooks',
      {
        PathPattern: '/repositories/{id}/timeseries/(*)',
        Methods: ['GET'],
        Callback: 'http://127.0.0.1:9/h',
        Persist: false,
      },
    );
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.Warnings, [{ Field: 'PathPattern', Message: SAYS('{id}') }]);
  });

  it('hookctl validate says it (and the file is still valid)', async () => {
    const file = join(tempDir('placeholders-'), 'hook.json');
    writeFileSync(
      file,
      JSON.stringify({
        PathPattern: '/repositories/:repo/items',
        Methods: ['GET'],
        Callback: 'http://127.0.0.1:9/h',
      }),
    );
    const r = await runInProcess(['validate', '-f', file], {
      env: cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token }),
      tty: false,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stderr.includes(`PathPattern: ${SAYS(':repo')}`), r.stderr);
  });

  it("the console's live check shows it beside PathPattern", async () => {
    const c = onConsoleOrigin(d);
    const form = await fetch(`${c.url}/_hookd/console/signin`);
    const pre = form.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const signed = await fetch(`${c.url}/_hookd/console/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, token: d.token }),
    });
    const cookie = signed.headers.getSetCookie()[0]!.split(';')[0]!;
    const home = await (await fetch(`${c.url}/_hookd/console/`, { headers: { cookie } })).text();
    const token = /name="csrf-token" content="([^"]+)"/.exec(home)![1]!;
    const res = await fetch(`${c.url}/_hookd/console/hooks/validate`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'x-csrf-token': token },
      body: new URLSearchParams({
        PathPattern: '/repositories/{id}/items',
        Methods: 'GET',
        Type: '0',
        Callback: 'http://127.0.0.1:9/h',
      }),
    });
    const text = await res.text();
    assert.match(
      text,
      /id="err-PathPattern"[^>]*><span class="field-warning">Warning: &#96;\{id\}&#96; is a literal segment here/,
    );
  });
});

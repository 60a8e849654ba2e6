import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { api, REPO_ROOT, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { closedPort, type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { signWithHookd } from '../verify/signed.js';

// The guides' examples run as written: the hook author's two hooks in filters-and-transforms.md
// are saved by a real hookd and fire on the requests they describe; the receivers' verification
// examples in from-code.md (Node's http, Express, Fastify) run as programs that a real hookd's
// callbacks reach, answering 204 to what hookd signed and 401 to a changed body. Express is not
// among this package's dependencies, so its example is not run here.

const GUIDES = join(REPO_ROOT, 'docs', 'guides');

/** The fenced blocks of `lang` under each heading (## or ###), keyed by the heading's text. */
function blocks(page: string, lang: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let heading = '';
  let code: string[] | undefined;
  for (const line of readFileSync(join(GUIDES, page), 'utf8').split('\n')) {
    if (code) {
      if (line.startsWith('```')) {
        out.set(heading, [...(out.get(heading) ?? []), code.join('\n')]);
        code = undefined;
      } else code.push(line);
    } else if (line === `\`\`\`${lang}`) code = [];
    else if (/^#{2,3} /.test(line)) heading = line.replace(/^#+ /, '').trim();
  }
  return out;
}

let d: TestDaemon;
let receiver: Receiver;
before(async () => {
  receiver = await startReceiver();
  d = await startHookd();
});
after(async () => {
  await d?.close();
  await receiver?.close();
});

describe('filters-and-transforms.md: the two examples', () => {
  const json = blocks('filters-and-transforms.md', 'json');
  const example = (heading: string) => {
    const [text] = json.get(heading) ?? [];
    assert.ok(text, `a JSON block under "${heading}"`);
    return { ...(JSON.parse(text) as Record<string, unknown>), Callback: `${receiver.url}/chat` };
  };

  it('bad-quality writes post to the chat channel; others do not', async () => {
    const hook = example('Example: time-series writes with a bad quality flag, to a chat channel');
    const created = await api<{ Id: string }>(d.url, d.token, 'POST', '/hooks', hook);
    assert.equal(created.status, 201, created.text);
    receiver.reset();
    const write = (query: string, body: unknown) =>
      api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', {
        Method: 'PUT',
        Path: `/repositories/r1/timeseries/ts1/data${query}`,
        Headers: { 'content-type': 'application/json' },
        Body: body,
      });
    assert.equal((await write('?unit=kWh', { quality: 'bad', value: 3 })).body.fired, 1);
    assert.equal((await write('?unit=kWh', { quality: 'good' })).body.fired, 0);
    assert.equal((await write('?unit=kWh', { value: 3 })).body.fired, 0, 'has() guards the key');
    assert.equal((await write('?unit=MWh', { quality: 'bad' })).body.fired, 0);
    const [call] = await receiver.waitFor(1);
    assert.deepEqual(JSON.parse(call!.body), { text: 'Bad-quality write to ts1 in repository r1 by ' });
    await api(d.url, d.token, 'DELETE', `/hooks/${created.body.Id}`);
  });

  it("a chat message built from the service's JSON answer", async () => {
    const hook = example("Example: a chat message built from the service's JSON answer");
    const created = await api<{ Id: string }>(d.url, d.token, 'POST', '/hooks', hook);
    assert.equal(created.status, 201, created.text);
    receiver.reset();
    const r = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', {
      Method: 'PUT',
      Path: '/repositories/r1/timeseries/ts1/data',
      Phase: 'after',
      StatusCode: 200,
      ResponseHeaders: { 'content-type': 'application/json' },
      ResponseBody: { Points: 1440, Name: 'ts1', Unit: 'kWh' },
    });
    assert.equal(r.status, 202, r.text);
    const [call] = await receiver.waitFor(1);
    assert.deepEqual(JSON.parse(call!.body), { text: '1440 points written to ts1 (kWh) in r1' });
    await api(d.url, d.token, 'DELETE', `/hooks/${created.body.Id}`);
  });
});

describe('from-code.md: the receivers verify what hookd signs', () => {
  const js = blocks('from-code.md', 'js');
  // Inside the package, so that `hookd/verify` resolves as the package's own export.
  const dir = join(REPO_ROOT, 'test-output', 'guide-examples');
  mkdirSync(dir, { recursive: true });
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) c.kill();
  });

  const cases: [string, string][] = [
    ["Node's http", 'node:http'],
    ['Fastify', 'fastify'],
  ];
  for (const [heading, module] of cases) {
    it(`${heading}: 204 for hookd's callback, 401 for a changed body`, async () => {
      const [code] = js.get(heading) ?? [];
      assert.ok(code, `a js block under "${heading}"`);
      assert.ok(
        code.split('\n').length <= 14,
        `${heading}: a short example (${code.split('\n').length} lines)`,
      );
      const port = await closedPort();
      assert.match(code, /3000/);
      const file = join(dir, `${module.replace(/\W/g, '-')}.mjs`);
      writeFileSync(file, code.replaceAll('3000', String(port)));
      const h = await api<{ Id: string }>(d.url, d.token, 'POST', '/hooks', {
        PathPattern: `/guide/${module.replace(/\W/g, '')}`,
        Methods: ['POST'],
        Type: 1,
        Callback: `http://127.0.0.1:${port}/hooks`,
        CallbackContent: '{"written": "$REQUEST_URI"}',
      });
      assert.equal(h.status, 201, h.text);
      const secret = await api<{ Secret: string }>(d.url, d.token, 'GET', `/hooks/${h.body.Id}/secret`);
      let stderr = '';
      const child = spawn(process.execPath, [file], {
        cwd: dir,
        env: { ...process.env, HOOK_SECRET: secret.body.Secret },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.push(child);
      child.stderr!.on('data', (c: Buffer) => {
        stderr += c.toString();
      });
      await until(`${heading} listens`, () =>
        fetch(`http://127.0.0.1:${port}/hooks`, { method: 'POST', body: '{}' }).then(
          (r) => r.status === 401,
          () => false,
        ),
      );
      const fired = await api<{ fired: number }>(d.url, d.token, 'POST', '/_hookd/report', {
        Method: 'POST',
        Path: `/guide/${module.replace(/\W/g, '')}`,
        StatusCode: 200,
      });
      assert.equal(fired.body.fired, 1, fired.text);
      const [delivery] = await until(
        `${heading}: the delivery is answered`,
        async () => {
          const l = await api<{ Status: string; Attempts?: unknown; LastError: string | null }[]>(
            d.url,
            d.token,
            'GET',
            `/hooks/${h.body.Id}/deliveries`,
          );
          return l.body.length === 1 && l.body[0]!.Status !== 'pending' && l.body;
        },
        { ms: 30_000 },
      );
      assert.equal(delivery!.Status, 'succeeded', `${delivery!.LastError} ${stderr}`);
      // Signed as hookd signs with this hook's secret: as sent it is taken, changed it is not.
      const body = JSON.stringify({ written: 'by the test' });
      const signed = signWithHookd(body, { secret: secret.body.Secret, schemes: ['v1'] });
      const post = (b: string) =>
        fetch(`http://127.0.0.1:${port}/hooks`, {
          method: 'POST',
          headers: { ...signed.headers, 'content-type': 'application/json' },
          body: b,
        }).then((r) => r.status);
      assert.equal(await post(body), 204);
      assert.equal(await post(body.replace('test', 'tset')), 401, 'a changed body');
      child.kill();
      await api(d.url, d.token, 'DELETE', `/hooks/${h.body.Id}`);
    });
  }
});

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { api, startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { requireOrSkip } from '../helpers/require.js';
import { type Receiver, startReceiver } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { assertBuilt, cleanEnv, HOOKCTL_BIN, hookctl } from './helpers.js';
import { hookctlPty, plain, ptyUnavailable } from './pty.js';

// What hookctl says is true: the real hookctl binary against a real hookd, piped (stdout a pipe)
// and on a real pseudo-terminal (pty.ts).

let daemon: TestDaemon;
let env: NodeJS.ProcessEnv;
let dir: string;
let receiver: Receiver;
let n = 0;

/** A fresh path pattern per hook, so firings of one test never reach another's hook. */
function hookDoc(extra: Record<string, unknown> = {}): Record<string, unknown> {
  n++;
  return {
    PathPattern: `/t${n}/repositories/*/timeseries/(*)`,
    Methods: ['GET'],
    Callback: `${receiver.url}/cb${n}`,
    ...extra,
  };
}

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

async function create(doc: Record<string, unknown>): Promise<string> {
  const r = await hookctl(['create', '-f', '-'], { env, input: JSON.stringify(doc) });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

/** Fires the hooks of `pattern`'s first segment as if the upstream answered `status`. */
async function report(path: string, status: number): Promise<void> {
  const r = await api(daemon.url, daemon.token, 'POST', '/_hookd/report', {
    Method: 'GET',
    Path: path,
    StatusCode: status,
    Phase: 'after',
  });
  assert.equal(r.status, 202, r.text);
}

async function deliveriesOf(id: string): Promise<{ Id: string; Status: string }[]> {
  const r = await api<{ Id: string; Status: string }[]>(
    daemon.url,
    daemon.token,
    'GET',
    `/hooks/${id}/deliveries`,
  );
  return r.body;
}

async function settled(id: string, count: number): Promise<void> {
  await until(
    `deliveries of ${id} to settle`,
    () => deliveriesOf(id),
    (list) => list.length >= count && list.every((d) => d.Status !== 'pending'),
    { ms: 20_000, every: 100 },
  );
}

function skipWithoutPty(t: { skip: (m: string) => void }): boolean {
  const why = ptyUnavailable();
  if (why) requireOrSkip(t, why);
  return why !== undefined;
}

before(async () => {
  assertBuilt();
  receiver = await startReceiver();
  daemon = await startHookd();
  dir = tempDir('hookctl-i15-');
  env = cleanEnv({ HOOKD_URL: daemon.url, HOOKD_TOKEN: daemon.token });
});

after(async () => {
  await daemon.close();
  await receiver.close();
});

describe('1. redeliver --hook without filters: every delivery, confirmed', () => {
  let id: string;
  let path: string;
  before(async () => {
    const doc = hookDoc();
    id = await create(doc);
    path = `/t${n}/repositories/r1/timeseries/ts1`;
    await report(path, 200);
    await report(path, 404);
    await settled(id, 2);
  });

  it('piped, without --yes or a filter, it is refused (exit 2) and queues nothing', async () => {
    const r = await hookctl(['redeliver', '--hook', id], { env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /every delivery of .* confirm with --yes/);
    assert.ok((await deliveriesOf(id)).every((d) => d.Status !== 'pending'));
  });

  it('queued 0 says why: nothing matches the filter', async () => {
    const r = await hookctl(['redeliver', '--hook', id, '--status', 'failed'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`queued 0 deliveries of ${id} again: no delivery of ${id} is in state failed`),
    );
  });

  it('queued 0 says why: the hook has no deliveries', async () => {
    const empty = await create(hookDoc());
    const r = await hookctl(['redeliver', '--hook', empty, '--yes'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /has no deliveries yet/);
  });

  it('--yes queues every delivery (the succeeded ones too), as --help and the man page say', async () => {
    const before = receiver.calls.length;
    const r = await hookctl(['redeliver', '--hook', id, '--yes'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`queued 2 deliveries of ${id} again`));
    await receiver.waitFor(before + 2);
    await settled(id, 2);
    const help = await hookctl(['redeliver', '--help'], { env });
    const text = help.stdout.replace(/\s+/g, ' ');
    assert.match(text, /all of them, or those matching the filters/);
    assert.match(text, /takes every delivery of the hook/);
    const man = readFileSync(join(HOOKCTL_BIN, '..', '..', 'man', 'hookctl.1'), 'utf8').replaceAll(
      '\\-',
      '-',
    );
    assert.match(man, /every delivery of the hook/);
  });

  it('on a terminal it asks, stating the count; "y" queues them, "n" cancels (exit 1)', async (t) => {
    if (skipWithoutPty(t)) return;
    const no = await hookctlPty(['redeliver', '--hook', id], { env, input: 'n\n' });
    assert.equal(no.code, 1, no.screen);
    assert.match(plain(no.screen), new RegExp(`Redeliver all 2 deliveries of ${id}\\? \\[y/N\\]`));
    assert.match(no.screen, /cancelled: nothing was queued/);
    const calls = receiver.calls.length;
    const yes = await hookctlPty(['redeliver', '--hook', id], { env, input: 'y\n' });
    assert.equal(yes.code, 0, yes.screen);
    assert.match(yes.screen, new RegExp(`queued 2 deliveries of ${id} again`));
    await receiver.waitFor(calls + 2);
    await settled(id, 2);
  });

  it('the API: no filter means all; dryRun counts without queueing', async () => {
    const dry = await api<{ queued: number; pending: number; dryRun: boolean }>(
      daemon.url,
      daemon.token,
      'POST',
      `/hooks/${id}/redeliver`,
      { dryRun: true },
    );
    assert.equal(dry.status, 200);
    assert.deepEqual(dry.body, { queued: 2, pending: 0, failed: 0, dryRun: true });
  });
});

describe('2. match without --status lists the hooks a status decides', () => {
  let id: string;
  let path: string;
  before(async () => {
    id = await create(hookDoc({ StatusCodeBlackList: [401] }));
    path = `/t${n}/repositories/r1/timeseries/ts1/attributes/color`;
  });

  it('piped: the hook is listed with "any but 401 (needs --status)"', async () => {
    const r = await hookctl(['match', 'GET', path], { env });
    assert.equal(r.code, 0, r.stderr);
    const row = r.stdout.trim().split('\t');
    assert.equal(row[0], id);
    assert.equal(row[2], 'any but 401 (needs --status)');
  });

  it('with --status as before: 200 fires, 401 does not', async () => {
    const ok = await hookctl(['match', 'GET', path, '--status', '200'], { env });
    assert.equal(ok.stdout.trim().split('\t')[2], 'any but 401');
    const no = await hookctl(['match', 'GET', path, '--status', '401'], { env });
    assert.equal(no.code, 0);
    assert.equal(no.stdout, '');
  });

  it('-o json marks it NeedsStatus with its lists', async () => {
    const r = await hookctl(['match', 'GET', path, '-o', 'json'], { env });
    const [m] = JSON.parse(r.stdout) as {
      HookId: string;
      NeedsStatus: boolean;
      StatusCodeBlackList: number[];
    }[];
    assert.equal(m!.HookId, id);
    assert.equal(m!.NeedsStatus, true);
    assert.deepEqual(m!.StatusCodeBlackList, [401]);
  });

  it('on a terminal: a STATUSES column and a line saying a status is needed', async (t) => {
    if (skipWithoutPty(t)) return;
    const r = await hookctlPty(['match', 'GET', path], { env });
    assert.equal(r.code, 0, r.screen);
    const screen = plain(r.screen);
    assert.match(screen, /HOOK\s+TYPE\s+STATUSES/);
    assert.match(screen, /any but 401 \(needs --status\)/);
    assert.match(screen, /give one with --status/);
  });
});

describe('3. one notation: GET /path [UPSTREAM] and <-- CALLBACK-STATUS', () => {
  let id: string;
  let path: string;
  before(async () => {
    id = await create(hookDoc());
    path = `/t${n}/repositories/r1/timeseries/ts1/data`;
    await report(path, 404);
    await settled(id, 1);
  });

  it('deliveries, piped: the trigger keeps the upstream 404, the answer is <-- 200', async () => {
    const r = await hookctl(['deliveries', id], { env });
    assert.equal(r.code, 0, r.stderr);
    const row = r.stdout.trim().split('\t');
    assert.equal(row[4], `GET ${path} [404]`);
    assert.equal(row[5], '<-- 200');
  });

  it('deliveries on a terminal, -o wide: the same, and --> for the callback', async (t) => {
    if (skipWithoutPty(t)) return;
    const r = await hookctlPty(['deliveries', id, '-o', 'wide'], { env, columns: 300 });
    const screen = plain(r.screen);
    assert.match(screen, /TRIGGER \[UPSTREAM\]\s+LAST ANSWER/);
    assert.ok(screen.includes(`GET ${path} [404]  <-- 200`), screen);
    assert.ok(screen.includes(`--> POST ${receiver.url}/cb`), screen);
  });

  it('tail, piped: tab-separated, with the upstream status and the callback answer', async () => {
    const child = spawn(process.execPath, [HOOKCTL_BIN, 'tail', '--hook', id], { env });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    await until('Ready! on stderr', () => /Ready!/.test(err)).catch(() => undefined);
    assert.match(err, /Ready!/);
    await report(path, 503);
    await until('a line on stdout', () => out.includes('\n')).catch(() => undefined);
    child.kill('SIGINT');
    const code = await new Promise((r) => child.on('close', r));
    assert.equal(code, 0);
    const fields = out.split('\n')[0]!.split('\t');
    assert.equal(fields[1], id);
    assert.equal(fields[2], `GET ${path} [503]`);
    assert.equal(fields[3], '<-- 200');
    assert.equal(fields[4], 'succeeded');
    assert.ok(!Number.isNaN(Date.parse(fields[0]!)), 'the full time');
  });

  it('tail on a terminal: one spaced line with [UPSTREAM] and <-- STATUS; Ctrl-C ends it', async (t) => {
    if (skipWithoutPty(t)) return;
    // Ctrl-C is typed once the terminal shows a callback's line; until then the path is
    // reported again and again (the tail may not be streaming yet when the first one fires).
    const running = hookctlPty(['tail', '--hook', id], { env, input: '\u0003', inputAfter: '<-- ' });
    let ended = false;
    void running.finally(() => {
      ended = true;
    });
    await until(
      'the tail to show a callback and end on Ctrl-C',
      async () => {
        if (!ended) await report(path, 404);
        return ended;
      },
      { ms: 30_000, every: 500 },
    );
    const r = await running;
    const screen = plain(r.screen);
    assert.equal(r.code, 0, screen);
    assert.match(screen, /Ready! Streaming callbacks/);
    assert.ok(screen.includes(`${id}  GET ${path} [404]  <-- 200`), screen);
    assert.doesNotMatch(screen, /\t/);
  });
});

describe('4. tail tells a wrong token and an unknown hook', () => {
  it('HOOKD_TOKEN=wrong: the token is not valid (exit 4), as list says', async () => {
    const bad = { ...env, HOOKD_TOKEN: 'wrong' };
    const tail = await hookctl(['tail'], { env: bad });
    const list = await hookctl(['list'], { env: bad });
    assert.equal(tail.code, 4);
    assert.equal(list.code, 4);
    assert.match(tail.stderr, /not valid/);
    assert.doesNotMatch(tail.stderr, /send Authorization/);
  });

  it('--hook hk_nope is refused at once (exit 1)', async () => {
    const r = await hookctl(['tail', '--hook', 'hk_nope'], { env, timeoutMs: 15000 });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no hook with Id "hk_nope"/);
  });
});

describe('5. template lint: errors and Warnings', () => {
  it('$3 beyond the captures is an error in create and validate (exit 1)', async () => {
    const doc = hookDoc({ CallbackContent: '{"p":"$3"}' });
    const f = file('capture.json', doc);
    for (const args of [
      ['create', '-f', f],
      ['validate', '-f', f],
    ]) {
      const r = await hookctl(args, { env });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /CallbackContent: \$3 refers to capture 3, but PathPattern .* has 1 capture/);
    }
  });

  it('a typo, an unquoted variable under JSON and a method GIT: created, with warnings', async () => {
    const doc = hookDoc({
      Methods: ['GIT'],
      CallbackContent: '{"p": $REQUEST_PATH, "q": "$REQEST_PATH"}',
    });
    const f = file('warn.json', doc);
    for (const args of [
      ['validate', '-f', f],
      ['create', '-f', f],
    ]) {
      const r = await hookctl(args, { env });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        /warning: .*Methods\[0\]: "GIT" is not a registered HTTP method.*did you mean GET\?/,
      );
      assert.match(r.stderr, /\$REQEST_PATH is not a template variable .*did you mean \$REQUEST_PATH\?/);
      assert.match(r.stderr, /\$REQUEST_PATH is outside a JSON string/);
    }
  });

  it('the API returns Warnings in the 201 and 200 bodies; the seed-style body stays valid', async () => {
    const doc = hookDoc({ CallbackContent: '$REQUEST_PATH', CallbackContentMediaType: 'application/json' });
    const created = await api<{ Id: string; Warnings: { Field: string; Message: string }[] }>(
      daemon.url,
      daemon.token,
      'POST',
      '/hooks',
      doc,
    );
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.Warnings.length, 1);
    assert.equal(created.body.Warnings[0]!.Field, 'CallbackContent');
    const replaced = await api<{ Warnings: unknown[] }>(
      daemon.url,
      daemon.token,
      'PUT',
      `/hooks/${created.body.Id}`,
      {
        ...doc,
        CallbackContent: '{"p":"$REQUEST_PATH"}',
      },
    );
    assert.equal(replaced.status, 200);
    assert.equal(replaced.body.Warnings, undefined, 'a clean hook has no Warnings');
    const invalid = await api<{ Warnings: { Message: string }[] }>(
      daemon.url,
      daemon.token,
      'POST',
      '/hooks',
      {
        ...hookDoc(),
        CallbackContent: '{"p": "$1",}',
      },
    );
    assert.match(invalid.body.Warnings[0]!.Message, /is not valid JSON/);
    const checked = await api<{ Methods: string[]; Warnings: { Field: string }[] }>(
      daemon.url,
      daemon.token,
      'POST',
      '/_hookd/validate',
      { ...hookDoc(), Methods: ['GIT'] },
    );
    assert.equal(checked.status, 200, checked.text);
    assert.deepEqual(
      checked.body.Warnings.map((w) => w.Field),
      ['Methods[0]'],
    );
    const refused = await api(daemon.url, daemon.token, 'POST', '/_hookd/validate', {
      ...hookDoc(),
      CallbackContent: '$2',
    });
    assert.equal(refused.status, 400);
  });
});

describe('6. safe replace: ETag, If-Match, foreign Id', () => {
  it('GET answers an ETag; PUT with a stale If-Match is 412 with the current ETag', async () => {
    const id = await create(hookDoc());
    const got = await api<{ Modified: string }>(daemon.url, daemon.token, 'GET', `/hooks/${id}`);
    const etag = got.headers.get('etag');
    assert.equal(etag, `"${got.body.Modified}"`);
    const ok = await api(daemon.url, daemon.token, 'PUT', `/hooks/${id}`, hookDoc(), { 'if-match': etag! });
    assert.equal(ok.status, 200, ok.text);
    assert.notEqual(ok.headers.get('etag'), etag);
    const stale = await api<{ code: string; detail: string }>(
      daemon.url,
      daemon.token,
      'PUT',
      `/hooks/${id}`,
      hookDoc(),
      { 'if-match': etag! },
    );
    assert.equal(stale.status, 412);
    assert.equal(stale.body.code, 'PRECONDITION_FAILED');
    assert.equal(stale.headers.get('etag'), ok.headers.get('etag'));
  });

  it('replace refuses a file holding another hook (exit 2); --force overrides', async () => {
    const a = await create(hookDoc());
    const b = await create(hookDoc());
    const fa = join(dir, 'a.json');
    const got = await hookctl(['get', a], { env });
    writeFileSync(fa, got.stdout);
    const r = await hookctl(['replace', b, '-f', fa], { env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, new RegExp(`is hook ${a}, not ${b}`));
    assert.match(r.stderr, /--force/);
    const forced = await hookctl(['replace', b, '-f', fa, '--force'], { env });
    assert.equal(forced.code, 0, forced.stderr);
  });

  it('a stale file does not overwrite a newer change (exit 1); --force does', async () => {
    const id = await create(hookDoc());
    const f = join(dir, 'stale.json');
    writeFileSync(f, (await hookctl(['get', id], { env })).stdout);
    // Someone else's change, from a copy that differs (the same file twice is a no-op).
    const other = join(dir, 'other.json');
    const doc = JSON.parse((await hookctl(['get', id], { env })).stdout) as { Persist: boolean };
    writeFileSync(other, JSON.stringify({ ...doc, Persist: !doc.Persist }));
    const first = await hookctl(['replace', id, '-f', other], { env });
    assert.equal(first.code, 0, first.stderr);
    const again = await hookctl(['replace', id, '-f', other], { env });
    assert.equal(again.code, 0, `the same file twice: ${again.stderr}`);
    const second = await hookctl(['replace', id, '-f', f], { env });
    assert.equal(second.code, 1);
    assert.match(second.stderr, new RegExp(`${id} was changed on the server after ${f} was read`));
    assert.match(second.stderr, /hookctl get/);
    const forced = await hookctl(['replace', id, '-f', f, '--force'], { env });
    assert.equal(forced.code, 0, forced.stderr);
  });
});

describe('7. get > file is ready to edit; hookctl edit', () => {
  const editor = (name: string, code: string) => {
    const path = join(dir, name);
    writeFileSync(path, code);
    return `${process.execPath} ${path}`;
  };

  it('-o json is indented when piped (and tail -o json stays one object per line)', async () => {
    const id = await create(hookDoc());
    const r = await hookctl(['get', id], { env });
    assert.ok(r.stdout.split('\n').length > 10, r.stdout);
    assert.match(r.stdout, /^ {2}"Id": /m);
    const list = await hookctl(['list', '-o', 'json'], { env });
    assert.match(list.stdout, /^\[\n {2}\{/);
  });

  it('an EDITOR that changes a field: the hook is replaced', async () => {
    const id = await create(hookDoc());
    const ed = editor(
      'persist.mjs',
      `import { readFileSync, writeFileSync } from 'node:fs';
const f = process.argv[2];
const text = readFileSync(f, 'utf8').split('\\n').filter((l) => !l.startsWith('#')).join('\\n');
const h = JSON.parse(text);
h.Persist = false;
writeFileSync(f, JSON.stringify(h, null, 2));`,
    );
    const r = await hookctl(['edit', id], { env: { ...env, EDITOR: ed } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), id);
    const got = JSON.parse((await hookctl(['get', id], { env })).stdout) as { Persist: boolean };
    assert.equal(got.Persist, false);
  });

  it('invalid JSON, then a fix: reopened with the error as a comment, then replaced', async () => {
    const id = await create(hookDoc());
    const state = join(dir, 'state');
    const ed = editor(
      'twice.mjs',
      `import { existsSync, readFileSync, writeFileSync } from 'node:fs';
const f = process.argv[2];
const text = readFileSync(f, 'utf8');
if (!existsSync(${JSON.stringify(state)})) {
  writeFileSync(${JSON.stringify(state)}, text);
  writeFileSync(f, '{ "PathPattern": ');
} else {
  writeFileSync(${JSON.stringify(state)} + '.2', text);
  const first = readFileSync(${JSON.stringify(state)}, 'utf8');
  const h = JSON.parse(first.split('\\n').filter((l) => !l.startsWith('#')).join('\\n'));
  h.Methods = ['POST'];
  writeFileSync(f, JSON.stringify(h));
}`,
    );
    const r = await hookctl(['edit', id], { env: { ...env, EDITOR: ed } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /1 problem; reopening the editor/);
    const second = readFileSync(`${state}.2`, 'utf8');
    assert.match(second, /^# error: .*: unexpected end of file/m, 'the error, as a comment');
    const got = JSON.parse((await hookctl(['get', id], { env })).stdout) as { Methods: string[] };
    assert.deepEqual(got.Methods, ['POST']);
  });

  it('a change on the server between get and save: 412, nothing overwritten, the copy kept', async () => {
    const id = await create(hookDoc());
    const ed = editor(
      'race.mjs',
      `import { readFileSync, writeFileSync } from 'node:fs';
const f = process.argv[2];
const h = JSON.parse(readFileSync(f, 'utf8').split('\\n').filter((l) => !l.startsWith('#')).join('\\n'));
const other = { PathPattern: h.PathPattern, Methods: ['DELETE'], Callback: h.Callback };
const res = await fetch(process.env.HOOKD_URL + '/hooks/' + h.Id, {
  method: 'PUT',
  headers: { authorization: 'Bearer ' + process.env.HOOKD_TOKEN, 'content-type': 'application/json' },
  body: JSON.stringify(other),
});
if (res.status !== 200) process.exit(9);
h.Methods = ['PATCH'];
writeFileSync(f, JSON.stringify(h));`,
    );
    const r = await hookctl(['edit', id], { env: { ...env, EDITOR: ed } });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`${id} was changed on the server after it was opened in the editor`));
    const kept = /kept in (\S+\.json)/.exec(r.stderr)?.[1];
    assert.ok(kept && existsSync(kept), r.stderr);
    const got = JSON.parse((await hookctl(['get', id], { env })).stdout) as { Methods: string[] };
    assert.deepEqual(got.Methods, ['DELETE'], 'the other change stands');
  });

  it('on a terminal, edit runs the editor there and replaces the hook', async (t) => {
    if (skipWithoutPty(t)) return;
    const id = await create(hookDoc());
    const ed = editor(
      'tty.mjs',
      `import { readFileSync, writeFileSync } from 'node:fs';
const f = process.argv[2];
if (!process.stdout.isTTY) process.exit(7);
const h = JSON.parse(readFileSync(f, 'utf8').split('\\n').filter((l) => !l.startsWith('#')).join('\\n'));
h.Type = 0;
writeFileSync(f, JSON.stringify(h));`,
    );
    const r = await hookctlPty(['edit', id], { env: { ...env, EDITOR: ed } });
    assert.equal(r.code, 0, r.screen);
    assert.match(r.screen, new RegExp(`replaced ${id}`));
    const got = JSON.parse((await hookctl(['get', id], { env })).stdout) as { Type: number };
    assert.equal(got.Type, 0);
  });
});

describe('8. secret get and rotate', () => {
  it('get prints the secret; rotate prints a new one; get then shows it', async () => {
    const id = await create(hookDoc());
    const got = await hookctl(['secret', 'get', id], { env });
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, /^whsec_\S+\n$/);
    const rotated = await hookctl(['secret', 'rotate', id], { env });
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stdout, /^whsec_\S+\n$/);
    assert.notEqual(rotated.stdout, got.stdout);
    assert.match(rotated.stderr, /previous one keeps signing too until/);
    assert.equal((await hookctl(['secret', 'get', id], { env })).stdout, rotated.stdout);
    const json = await hookctl(['secret', 'get', id, '-o', 'json'], { env });
    assert.match(json.stdout, /^\{\n {2}"Secret": "whsec_/);
  });

  it('an unknown hook is exit 1, pointing at hookctl list', async () => {
    const r = await hookctl(['secret', 'get', 'hk_nope'], { env });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /hookctl list/);
  });
});

describe('9. the smaller things', () => {
  it('bare hookctl prints the help and exits 0, piped and on a terminal', async (t) => {
    const r = await hookctl([], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Usage: hookctl/);
    if (skipWithoutPty(t)) return;
    const tty = await hookctlPty([], { env });
    assert.equal(tty.code, 0);
    assert.match(tty.screen, /Usage: hookctl/);
  });

  it('-o wide shows the status lists (piped and on a terminal)', async (t) => {
    const id = await create(hookDoc({ StatusCodeWhiteList: [200, 204], StatusCodeBlackList: [401] }));
    const r = await hookctl(['get', id, '-o', 'wide'], { env });
    const row = r.stdout.trim().split('\t');
    // Piped, NAME (empty here) is always the second column.
    assert.equal(row[7], '200,204');
    assert.equal(row[8], '401');
    if (skipWithoutPty(t)) return;
    const tty = await hookctlPty(['get', id, '-o', 'wide'], { env, columns: 300 });
    assert.match(plain(tty.screen), /STATE\s+WHITELIST\s+BLACKLIST\s+PERSIST/);
  });

  it('a validation error prints each field once, and points at hookctl commands', async () => {
    const r = await hookctl(['create', '-f', '-'], {
      env,
      input: JSON.stringify({ PathPattern: '/x', Methods: ['GET'], Callback: 'ftp://x', Type: 7 }),
    });
    assert.equal(r.code, 1);
    assert.equal(r.stderr.split('Callback: scheme "ftp"').length - 1, 1, r.stderr);
    assert.equal(r.stderr.split('Type: must be').length - 1, 1, r.stderr);
    assert.match(r.stderr, /^error: the hook has 2 errors$/m);
    assert.match(r.stderr, /hookctl types/);
  });

  it('read-only commands do not create ~/.config/hookctl', async () => {
    const clean = cleanEnv({ HOOKD_URL: daemon.url, HOOKD_TOKEN: daemon.token });
    for (const args of [['list'], ['types'], ['profile', 'list'], ['match', 'GET', '/x']]) {
      const r = await hookctl(args, { env: clean });
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    }
    assert.equal(existsSync(join(clean.XDG_CONFIG_HOME!, 'hookctl')), false);
  });

  it('https:// against the plain-HTTP daemon: a clear message, exit 3', async () => {
    const https = daemon.url.replace(/^http:/, 'https:');
    for (const args of [['list'], ['tail']]) {
      const r = await hookctl(args, { env: { ...env, HOOKD_URL: https } });
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, /answers plain HTTP, not HTTPS/);
      assert.match(r.stderr, new RegExp(`use ${daemon.url}`));
      assert.doesNotMatch(r.stderr, /SSL routines|ssl3_get_record/);
    }
  });
});

describe('on a terminal too (points 4, 5, 6, 8, 9)', () => {
  it('tail with a wrong token: exit 4, "not valid"', async (t) => {
    if (skipWithoutPty(t)) return;
    const r = await hookctlPty(['tail'], { env: { ...env, HOOKD_TOKEN: 'wrong' } });
    assert.equal(r.code, 4, r.screen);
    assert.match(r.screen, /not valid/);
  });

  it('create prints the warnings in colour on the terminal; $3 is an error there too', async (t) => {
    if (skipWithoutPty(t)) return;
    const warned = await hookctlPty(['create', '-f', file('tty-warn.json', hookDoc({ Methods: ['GIT'] }))], {
      env,
    });
    assert.equal(warned.code, 0, warned.screen);
    assert.match(warned.screen, /\u001b\[33mwarning:\u001b\[39m Methods\[0\]: "GIT"/);
    const refused = await hookctlPty(
      ['validate', '-f', file('tty-capture.json', hookDoc({ CallbackContent: '"$3"' }))],
      { env },
    );
    assert.equal(refused.code, 1);
    assert.match(plain(refused.screen), /\$3 refers to capture 3/);
  });

  it('a stale replace is refused on the terminal as well', async (t) => {
    if (skipWithoutPty(t)) return;
    const id = await create(hookDoc());
    const f = join(dir, 'tty-stale.json');
    const got = (await hookctl(['get', id], { env })).stdout;
    writeFileSync(f, got);
    const other = join(dir, 'tty-other.json');
    const doc = JSON.parse(got) as { Persist: boolean };
    writeFileSync(other, JSON.stringify({ ...doc, Persist: !doc.Persist }));
    assert.equal((await hookctl(['replace', id, '-f', other], { env })).code, 0);
    const r = await hookctlPty(['replace', id, '-f', f], { env });
    assert.equal(r.code, 1, r.screen);
    assert.match(plain(r.screen), /was changed on the server after/);
  });

  it('secret get prints the secret on the terminal', async (t) => {
    if (skipWithoutPty(t)) return;
    const id = await create(hookDoc());
    const r = await hookctlPty(['secret', 'get', id], { env });
    assert.equal(r.code, 0, r.screen);
    assert.match(r.screen, /^whsec_\S+$/m);
  });

  it('https:// against plain HTTP: the clear message, exit 3', async (t) => {
    if (skipWithoutPty(t)) return;
    const r = await hookctlPty(['list'], {
      env: { ...env, HOOKD_URL: daemon.url.replace(/^http:/, 'https:') },
    });
    assert.equal(r.code, 3, r.screen);
    assert.match(plain(r.screen), /answers plain HTTP, not HTTPS/);
  });
});

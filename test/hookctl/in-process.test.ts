import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { ANSI, cleanEnv, hookctlInProcess, hookFixtures, SAMPLE_HOOK } from './helpers.js';

// hookctl commands through their run seam (runCli(args, deps)), in this process, on a
// terminal and piped, against a real hookd. The spawned binary keeps its end-to-end tests in
// hookctl.test.ts; what only needs the commands runs here, without a process each.

const HOOK = SAMPLE_HOOK;

let daemon: TestDaemon;
let env: NodeJS.ProcessEnv;
let dir: string;

const hookctl = hookctlInProcess;

const { file, deleteAll, ...fixtures } = hookFixtures(
  hookctl,
  () => env,
  () => dir,
);
const createHook = (doc: unknown = HOOK) => fixtures.createHook(doc);

before(async () => {
  daemon = await startHookd();
  dir = tempDir('hookctl-files-');
  env = cleanEnv({ HOOKD_URL: daemon.url, HOOKD_TOKEN: daemon.token });
});

after(async () => {
  await daemon.close();
});

describe('hookctl in process', () => {
  it('list with no hooks: piped prints nothing, a terminal gets a hint on stderr; both exit 0', async () => {
    await deleteAll();
    const piped = await hookctl(['list'], { env });
    assert.deepEqual([piped.code, piped.stdout, piped.stderr], [0, '', '']);
    const tty = await hookctl(['list'], { env, tty: true });
    assert.equal(tty.code, 0);
    assert.equal(tty.stdout, '');
    assert.match(tty.stderr, /no hooks yet/);
  });

  it('create from stdin, then list: tab-separated when piped, JSON with -o json', async () => {
    await deleteAll();
    const hook = {
      PathPattern: '/in-process/*',
      Callback: 'http://127.0.0.1:9/cb',
      Methods: ['GET'],
      Persist: true,
    };
    const created = await hookctl(['create', '-f', '-'], { env, input: JSON.stringify(hook) });
    assert.equal(created.code, 0, created.stderr);
    const id = /hk_[0-9A-Z]{30}/.exec(created.stdout + created.stderr)?.[0];
    assert.ok(id, `an Id in: ${created.stdout}${created.stderr}`);
    const piped = await hookctl(['list'], { env });
    assert.equal(piped.code, 0, piped.stderr);
    const row = piped.stdout.split('\n').find((l) => l.startsWith(id));
    assert.ok(row?.includes('\t'), `a tab-separated row for ${id}: ${piped.stdout}`);
    const json = await hookctl(['list', '-o', 'json'], { env });
    const hooks = JSON.parse(json.stdout) as { Id: string; PathPattern: string }[];
    assert.deepEqual(
      hooks.map((h) => [h.Id, h.PathPattern]),
      [[id, hook.PathPattern]],
    );
  });

  it('a wrong token is exit 4 with a hint; an unknown command is a usage error (2)', async () => {
    const denied = await hookctl(['list'], { env: { ...env, HOOKD_TOKEN: 'hkd_wrong' } });
    assert.equal(denied.code, 4, denied.stderr);
    assert.match(denied.stderr, /hint:/);
    const usage = await hookctl(['frobnicate'], { env });
    assert.equal(usage.code, 2);
  });
});

describe('hookctl hooks (piped output)', () => {
  it('list: an empty list is a success with no output', async () => {
    await deleteAll();
    const r = await hookctl(['list'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    const json = await hookctl(['list', '-o', 'json'], { env });
    assert.equal(json.code, 0);
    assert.equal(json.stdout, '[]\n');
  });

  it('-o wide adds the status lists, PERSIST, MODIFIED and CALLBACK METHOD; hooks list and ls are the same command', async () => {
    await deleteAll();
    const id = await createHook({
      ...HOOK,
      Type: 0,
      Methods: ['get', 'post'],
      Persist: false,
      CallbackMethod: 'PUT',
    });
    const wide = await hookctl(['hooks', 'list', '-o', 'wide'], { env });
    assert.equal(wide.code, 0, wide.stderr);
    const cells = wide.stdout.trim().split('\t');
    // Piped, NAME (empty: this hook has none) is always the second column.
    assert.equal(cells.length, 12);
    assert.deepEqual(cells.slice(0, 4), [id, '', 'BeforeCompletion', 'GET,POST']);
    assert.deepEqual([cells[7], cells[8], cells[9], cells[11]], ['', '', 'false', 'PUT']);
    assert.match(cells[10]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    const ls = await hookctl(['-o', 'wide', 'ls'], { env });
    assert.equal(ls.stdout, wide.stdout);
  });

  it('list -o json is indented JSON holding every hook, also when piped', async () => {
    await deleteAll();
    const a = await createHook();
    const b = await createHook({ ...HOOK, PathPattern: '/other' });
    const r = await hookctl(['list', '-o', 'json'], { env });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^\[\n {2}\{\n {4}"Id": /, 'indented');
    const hooks = JSON.parse(r.stdout) as { Id: string }[];
    assert.deepEqual(hooks.map((h) => h.Id).sort(), [a, b].sort());
  });

  it('create -f - reads the hook from standard input; -o json prints the stored hook', async () => {
    const r = await hookctl(['create', '-f', '-', '-o', 'json'], { env, input: JSON.stringify(HOOK) });
    assert.equal(r.code, 0, r.stderr);
    const hook = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.equal(hook.PathPattern, HOOK.PathPattern);
    assert.equal(hook.Owner, 'admin');
    assert.equal(hook.Persist, true);
  });

  it('get prints the hook as JSON; get → edit → replace round-trips', async () => {
    const id = await createHook();
    const got = await hookctl(['get', id], { env });
    assert.equal(got.code, 0, got.stderr);
    assert.ok(got.stdout.trim().split('\n').length > 10, 'indented JSON when piped, ready to edit');
    const hook = JSON.parse(got.stdout) as Record<string, unknown>;
    assert.equal(hook.Id, id);

    // Edit the very document get printed, read-only fields and all, and send it back.
    const edited = { ...hook, Methods: ['GET', 'PUT'], Persist: false, Headers: { 'X-Team': 'data' } };
    const path = file('edited.json', edited);
    const replaced = await hookctl(['replace', id, '-f', path], { env });
    assert.equal(replaced.code, 0, replaced.stderr);
    assert.equal(replaced.stdout.trim(), id);

    const again = JSON.parse((await hookctl(['hooks', 'get', id, '-o', 'json'], { env })).stdout) as Record<
      string,
      unknown
    >;
    assert.deepEqual(again.Methods, ['GET', 'PUT']);
    assert.equal(again.Persist, false);
    assert.deepEqual(again.Headers, { 'X-Team': 'data' });
    assert.equal(again.Id, id);
  });

  it('replace -f - reads standard input; fields left out take their defaults', async () => {
    const id = await createHook({ ...HOOK, Persist: false, CallbackMethod: 'PATCH' });
    const r = await hookctl(['hooks', 'replace', id, '-f', '-', '-o', 'json'], {
      env,
      input: JSON.stringify(HOOK),
    });
    assert.equal(r.code, 0, r.stderr);
    const hook = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.equal(hook.Persist, true);
    assert.equal(hook.CallbackMethod, 'POST');
  });

  it('get -o table prints the hook as a row', async () => {
    const id = await createHook();
    const r = await hookctl(['get', id, '-o', 'table'], { env });
    assert.equal(r.code, 0);
    assert.equal(r.stdout.split('\t')[0], id);
  });

  it('delete with an unknown Id among others: the rest are deleted, exit 1', async () => {
    const a = await createHook();
    const r = await hookctl(['hooks', 'rm', 'hk_doesnotexist', a], { env });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: no hook with Id "hk_doesnotexist"$/m);
    assert.match(r.stderr, new RegExp(`^deleted ${a}$`, 'm'));
    assert.equal((await hookctl(['get', a], { env })).code, 1);
  });

  it('types lists the hook types as rows and as JSON', async () => {
    const r = await hookctl(['types'], { env });
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t').slice(0, 2));
    assert.deepEqual(rows, [
      ['0', 'BeforeCompletion'],
      ['1', 'AfterCompletion'],
    ]);
    const json = JSON.parse((await hookctl(['types', '-o', 'json'], { env })).stdout) as {
      Type: number;
      Name: string;
    }[];
    assert.deepEqual(
      json.map((t) => [t.Type, t.Name]),
      [
        [0, 'BeforeCompletion'],
        [1, 'AfterCompletion'],
      ],
    );
  });

  it('match asks the server which hooks a request would fire', async () => {
    await deleteAll();
    const id = await createHook();
    const r = await hookctl(['match', 'get', '/repositories/r1/timeseries/ts1/data', '-o', 'json'], { env });
    assert.equal(r.code, 0, r.stderr);
    const matches = JSON.parse(r.stdout) as { HookId: string; Captures: string[] }[];
    assert.deepEqual(
      matches.map((m) => [m.HookId, m.Captures]),
      [[id, ['ts1']]],
    );
    const none = await hookctl(['match', 'GET', '/elsewhere'], { env });
    assert.equal(none.code, 0);
    assert.equal(none.stdout, '');
  });
});

describe('hookctl hooks on a terminal', () => {
  it('delete says "deleted ID" on stderr and nothing on stdout, as when piped', async () => {
    const a = await createHook();
    const b = await createHook();
    const r = await hookctl(['delete', a, b], { env, tty: true });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `deleted ${a}\ndeleted ${b}\n`);
    const gone = await hookctl(['get', a], { env, tty: true });
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /no hook with Id/);
  });

  it('get -o table is a table with a header; get alone is indented JSON', async () => {
    const id = await createHook();
    const table = await hookctl(['get', id, '-o', 'table'], { env, tty: true });
    assert.equal(table.code, 0, table.stderr);
    const [header, row] = table.stdout.replace(new RegExp(ANSI.source, 'g'), '').split('\n');
    assert.match(header!, /^ID\s+TYPE\s+METHODS\s+PATTERN/);
    assert.ok(row!.startsWith(id), row);
    const json = await hookctl(['get', id], { env, tty: true });
    assert.equal((JSON.parse(json.stdout) as { Id: string }).Id, id);
    assert.match(json.stdout, /^\{\n {2}"/);
  });

  it('types is a table with a header and the type names in bold', async () => {
    const r = await hookctl(['types'], { env, tty: true });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    const plain = lines.map((l) => l.replace(new RegExp(ANSI.source, 'g'), ''));
    assert.deepEqual(plain[0]!.trim().split(/\s{2,}/), ['TYPE', 'NAME', 'DESCRIPTION']);
    assert.deepEqual(
      plain.slice(1).map((l) =>
        l
          .trim()
          .split(/\s{2,}/)
          .slice(0, 2),
      ),
      [
        ['0', 'BeforeCompletion'],
        ['1', 'AfterCompletion'],
      ],
    );
    assert.match(lines[1]!, ANSI, 'colour on a terminal');
    const noColor = await hookctl(['types'], { env: { ...env, NO_COLOR: '1' }, tty: true });
    assert.doesNotMatch(noColor.stdout, ANSI);
  });

  it('create prints the Id on stdout; -o json the stored hook', async () => {
    const r = await hookctl(['create', '-f', '-'], { env, input: JSON.stringify(HOOK), tty: true });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^hk_[A-Za-z0-9]+\n$/);
    const json = await hookctl(['create', '-f', '-', '-o', 'json'], {
      env,
      input: JSON.stringify(HOOK),
      tty: true,
    });
    assert.equal((JSON.parse(json.stdout) as { PathPattern: string }).PathPattern, HOOK.PathPattern);
  });
});

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hookctl } from '../helpers/cli.js';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';

// Issue 27: hookctl commands through their run seam (runCli(args, deps)), in this process, on a
// terminal and piped, against a real hookd; the spawned end-to-end tests stay for the binary.

let d: TestDaemon;
let home: string;
let env: NodeJS.ProcessEnv;
before(async () => {
  d = await startHookd();
  home = mkdtempSync(join(tmpdir(), 'hookctl-home-'));
  env = { HOOKD_URL: d.url, HOOKD_TOKEN: d.token };
});
after(async () => {
  await d.close();
  rmSync(home, { recursive: true, force: true });
});

const hook = {
  PathPattern: '/in-process/*',
  Callback: 'http://127.0.0.1:9/cb',
  Methods: ['GET'],
  Persist: true,
};

describe('hookctl in process', () => {
  it('list with no hooks: piped prints nothing, a terminal gets a hint on stderr; both exit 0', async () => {
    const piped = await hookctl(['list'], { env, home });
    assert.deepEqual([piped.code, piped.stdout, piped.stderr], [0, '', '']);
    const tty = await hookctl(['list'], { env, home, tty: true });
    assert.equal(tty.code, 0);
    assert.equal(tty.stdout, '');
    assert.match(tty.stderr, /no hooks yet/);
  });

  it('create from stdin, then list: tab-separated when piped, JSON with -o json', async () => {
    const created = await hookctl(['create', '-f', '-'], { env, home, stdin: JSON.stringify(hook) });
    assert.equal(created.code, 0, created.stderr);
    const id = /hk_[0-9A-Z]{30}/.exec(created.stdout + created.stderr)?.[0];
    assert.ok(id, `an Id in: ${created.stdout}${created.stderr}`);
    const piped = await hookctl(['list'], { env, home });
    assert.equal(piped.code, 0, piped.stderr);
    const row = piped.stdout.split('\n').find((l) => l.startsWith(id));
    assert.ok(row?.includes('\t'), `a tab-separated row for ${id}: ${piped.stdout}`);
    const json = await hookctl(['list', '-o', 'json'], { env, home });
    const hooks = JSON.parse(json.stdout) as { Id: string; PathPattern: string }[];
    assert.deepEqual(
      hooks.map((h) => [h.Id, h.PathPattern]),
      [[id, hook.PathPattern]],
    );
  });

  it('a wrong token is exit 4 with a hint; an unknown command is a usage error (2)', async () => {
    const denied = await hookctl(['list'], { env: { ...env, HOOKD_TOKEN: 'hkd_wrong' }, home });
    assert.equal(denied.code, 4, denied.stderr);
    assert.match(denied.stderr, /hint:/);
    const usage = await hookctl(['frobnicate'], { env, home });
    assert.equal(usage.code, 2);
  });
});

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { HOOKD_BIN, tempDir } from '../helpers/hookd.js';
import { runProcess } from '../hookctl/helpers.js';

/**
 * `hookd user|token …` find the store as the daemon does (`--config`, `$STATE_DIRECTORY`, …),
 * refuse a data dir that does not exist unless `--init`, make it 0700, and each `--help` shows
 * only the command's own options (not the daemon's flags).
 */
describe('hookd user and token: the data dir', () => {
  const root = tempDir('hookd-admin-');
  after(() => rmSync(root, { recursive: true, force: true }));
  /** A clean environment: no HOOKD_* or STATE_DIRECTORY of the machine running the tests. */
  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: join(root, 'home'),
    ...extra,
  });
  const hookd = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    runProcess(process.execPath, [HOOKD_BIN, ...args], { env: env(extra) });

  it('user add with a data dir that does not exist fails, naming the dir and the flag, and creates nothing', async () => {
    const missing = join(root, 'typo', 'hookd');
    const r = await hookd(['user', 'add', 'bob', '--data-dir', missing]);
    assert.equal(r.code, 2, r.stderr);
    assert.ok(r.stderr.includes(missing), r.stderr);
    assert.match(r.stderr, /--data-dir/);
    assert.match(r.stderr, /--init/);
    assert.equal(existsSync(missing), false);
    assert.equal(existsSync(join(root, 'typo')), false);
  });

  it('token create and user list refuse it too', async () => {
    const missing = join(root, 'nowhere');
    for (const args of [
      ['token', 'create', 'bob'],
      ['user', 'list'],
      ['token', 'list'],
    ]) {
      const r = await hookd([...args, '--data-dir', missing]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.ok(r.stderr.includes(missing), r.stderr);
    }
  });

  it('--init creates the data dir with mode 0700, and the user gets the default scopes', async () => {
    const dir = join(root, 'fresh', 'state');
    const r = await hookd(['user', 'add', 'bob', '--data-dir', dir, '--init']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /added user bob \(scopes: own\)/);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    const list = await hookd(['user', 'list', '--data-dir', dir]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^bob\t\S+\town$/m);
  });

  it('user add --scope grants paths', async () => {
    const dir = join(root, 'scoped');
    mkdirSync(dir, { mode: 0o700 });
    const r = await hookd([
      'user',
      'add',
      'carol',
      '--scope',
      '/repositories/carol',
      '--scope',
      'own',
      '--data-dir',
      dir,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const list = await hookd(['user', 'list', '--data-dir', dir]);
    assert.match(list.stdout, /^carol\t\S+\t\/repositories\/carol,own$/m);
    const bad = await hookd(['user', 'add', 'dave', '--scope', 'repositories', '--data-dir', dir]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /Scopes/);
  });

  it('takes the data dir from $STATE_DIRECTORY, as the systemd unit sets it', async () => {
    const dir = join(root, 'var-lib-hookd');
    const missing = await hookd(['user', 'add', 'bob'], { STATE_DIRECTORY: dir });
    assert.equal(missing.code, 2);
    assert.ok(missing.stderr.includes(dir), missing.stderr);
    mkdirSync(dir, { mode: 0o700 });
    const r = await hookd(['user', 'add', 'bob'], { STATE_DIRECTORY: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(join(dir, 'hookd.db')));
  });

  it('takes the data dir from --config and from HOOKD_CONFIG, as the daemon does', async () => {
    const dir = join(root, 'from-config');
    mkdirSync(dir, { mode: 0o700 });
    const config = join(root, 'hookd.json');
    writeFileSync(config, JSON.stringify({ dataDir: dir, logLevel: 'warn' }));
    const r = await hookd(['user', 'add', 'erin', '--config', config]);
    assert.equal(r.code, 0, r.stderr);
    const list = await hookd(['user', 'list'], { HOOKD_CONFIG: config });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^erin\t/m);
  });

  it("each subcommand --help shows its own options, not the daemon's", async () => {
    for (const [args, own] of [
      [
        ['token', 'create'],
        ['--label', '--data-dir', '--config', '--database-url', '--init'],
      ],
      [
        ['user', 'add'],
        ['--scope', '--data-dir', '--init'],
      ],
      [['user', 'list'], ['--data-dir']],
      [['token', 'revoke'], ['--data-dir']],
    ] as const) {
      const r = await hookd([...args, '--help']);
      assert.equal(r.code, 0, r.stderr);
      for (const o of own) assert.ok(r.stdout.includes(o), `${args.join(' ')} --help lists ${o}`);
      for (const daemonOnly of [
        '--listen',
        '--upstream',
        '--retry-schedule',
        '--trusted-proxy',
        '--no-events',
      ])
        assert.ok(
          !r.stdout.includes(daemonOnly),
          `${args.join(' ')} --help lists ${daemonOnly}:\n${r.stdout}`,
        );
    }
  });
});

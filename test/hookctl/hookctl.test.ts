import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { requireOrSkip } from '../helpers/require.js';
import {
  ANSI,
  assertBuilt,
  cleanEnv,
  closedPort,
  HOOKCTL_BIN,
  hookctl,
  hookFixtures,
  ROOT,
  runProcess,
  SAMPLE_HOOK,
} from './helpers.js';

// The real binary (node bin/hookctl.js, i.e. dist/) as a child process against a real hookd.
// stdout is a pipe here, so every listing is the piped form: tab-separated, no header; JSON indented.
// What only needs a command (its requests, its output, server and token resolution, profiles,
// validate) runs through the run seam in in-process.test.ts and in-process-commands.test.ts.

const HOOK = SAMPLE_HOOK;

let daemon: TestDaemon;
let env: NodeJS.ProcessEnv;
let dir: string;

const { file, deleteAll, ...fixtures } = hookFixtures(
  hookctl,
  () => env,
  () => dir,
);
const createHook = (doc: unknown = HOOK) => fixtures.createHook(doc);

before(async () => {
  assertBuilt();
  daemon = await startHookd();
  dir = tempDir('hookctl-files-');
  env = cleanEnv({ HOOKD_URL: daemon.url, HOOKD_TOKEN: daemon.token });
});

after(async () => {
  await daemon.close();
});

describe('hookctl hooks (piped output)', () => {
  it('create -f FILE prints the new Id; list prints tab-separated rows without a header', async () => {
    await deleteAll();
    const r = await hookctl(['create', '-f', file('h.json', HOOK)], { env });
    assert.equal(r.code, 0, r.stderr);
    const id = r.stdout.trim();
    assert.match(id, /^hk_[A-Za-z0-9]+$/);
    const list = await hookctl(['list'], { env });
    assert.equal(list.code, 0);
    assert.deepEqual(list.stdout.split('\n'), [
      // NAME (empty here) is always the second column when piped: the shape never changes.
      [id, '', 'AfterCompletion', 'GET', HOOK.PathPattern, HOOK.Callback, 'active'].join('\t'),
      '',
    ]);
  });
});

describe('hookctl exit codes', () => {
  it('1: an unknown hook Id', async () => {
    const r = await hookctl(['get', 'hk_nope'], { env });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: no hook with Id "hk_nope"/m);
    assert.match(r.stderr, /^hint: /m);
  });

  it('2: a hook file that is not valid JSON, with FILE:LINE:COLUMN', async () => {
    const path = file(
      'broken.json',
      '{\n  "PathPattern": "/x",\n  "Methods": ["GET"]\n  "Callback": "http://127.0.0.1:9/"\n}\n',
    );
    const r = await hookctl(['create', '-f', path], { env });
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      new RegExp(`^error: ${path.replaceAll('/', '\\/')}:4:3: expected ',' or '}'`, 'm'),
    );

    const trailing = await hookctl(['replace', 'hk_x', '-f', '-'], { env, input: '{"Methods": ["GET",]}' });
    assert.equal(trailing.code, 2);
    assert.match(trailing.stderr, /<stdin>:1:20: /);
  });

  it('2: usage errors from the command line (the full list runs in-process in usage.test.ts)', async () => {
    const cases: string[][] = [
      ['frobnicate'],
      ['create'],
      ['list', '-o', 'yaml'],
      ['match', 'GET', '/x', '--status', '99'],
    ];
    for (const args of cases) {
      const r = await hookctl(args, { env });
      assert.equal(r.code, 2, `hookctl ${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^error: /m, `hookctl ${args.join(' ')} explains itself`);
      assert.equal(r.stdout, '');
    }
  });

  it('3: the daemon is unreachable; the message names the address', async () => {
    const port = await closedPort();
    const r = await hookctl(['list'], { env: { ...env, HOOKD_URL: `http://127.0.0.1:${port}` } });
    assert.equal(r.code, 3);
    assert.match(
      r.stderr,
      new RegExp(`^error: cannot reach hookd at http://127\\.0\\.0\\.1:${port}: connection refused`, 'm'),
    );
    assert.match(r.stderr, /^hint: is hookd running\?/m);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });

  it('3: unreachable wins over a missing token (the daemon being down is the real problem)', async () => {
    const port = await closedPort();
    const r = await hookctl(['types'], { env: cleanEnv({ HOOKD_URL: `http://127.0.0.1:${port}` }) });
    assert.equal(r.code, 3, r.stderr);
  });

  it('4: a token the server refuses', async () => {
    const r = await hookctl(['list'], { env: { ...env, HOOKD_TOKEN: 'hkd_not_a_real_token' } });
    assert.equal(r.code, 4);
    assert.match(r.stderr, /^error: .*token.*\(token from HOOKD_TOKEN\)$/m);
    assert.match(r.stderr, /^hint: .*hookctl login/m);
  });

  it('4: no token anywhere, saying where it looked', async () => {
    const empty = tempDir('hookctl-nodata-');
    const r = await hookctl(['list'], { env: cleanEnv({ HOOKD_URL: daemon.url, HOOKD_DATA_DIR: empty }) });
    assert.equal(r.code, 4);
    assert.match(r.stderr, /HOOKD_TOKEN is not set/);
    assert.match(r.stderr, /no profile in .*config\.json/);
    assert.ok(r.stderr.includes(join(empty, 'admin.token')), r.stderr);
  });

  it('--debug shows the stack trace that is otherwise hidden', async () => {
    const port = await closedPort();
    const r = await hookctl(['--debug', 'list'], { env: { ...env, HOOKD_URL: `http://127.0.0.1:${port}` } });
    assert.equal(r.code, 3);
    assert.match(r.stderr, /^\[debug\] > GET /m);
    assert.match(r.stderr, /\n\s+at /);
    assert.doesNotMatch(r.stderr, new RegExp(daemon.token), 'the token is never logged');
  });

  it('0: --help and --version', async () => {
    const help = await hookctl(['--help'], { env });
    assert.equal(help.code, 0);
    for (const c of [
      'hooks',
      'list',
      'get',
      'create',
      'replace',
      'delete',
      'types',
      'tail',
      'login',
      'profile',
      'validate',
      'completion',
    ]) {
      assert.match(help.stdout, new RegExp(`^ {2}${c}\\b`, 'm'), `--help lists ${c}`);
    }
    const sub = await hookctl(['create', '--help'], { env });
    assert.equal(sub.code, 0);
    assert.match(sub.stdout, /Examples:/);
    assert.match(sub.stdout, /--server/, 'global options are shown in command help');
    // Where the hook's fields are documented, and the places it names exist.
    for (const args of [
      ['create', '--help'],
      ['replace', '--help'],
    ]) {
      const h = args[0] === 'create' ? sub : await hookctl(args, { env });
      const text = h.stdout.replace(/\s+/g, ' ');
      const section = /docs\/guides\/hooks\.md, "([^"]+)"/.exec(text)?.[1];
      assert.ok(section, `${args[0]} --help names the README section of the hook's fields: ${h.stdout}`);
      assert.match(
        readFileSync(join(ROOT, 'docs', 'guides', 'hooks.md'), 'utf8'),
        new RegExp(`^#+ ${section}$`, 'm'),
      );
      assert.match(text, /schema\/hook\.schema\.json/);
      assert.ok(existsSync(join(ROOT, 'schema', 'hook.schema.json')));
    }
    const v = await hookctl(['--version'], { env });
    assert.equal(v.code, 0);
    assert.match(v.stdout, /^\d+\.\d+\.\d+/);
  });
});

describe('hookctl login and profiles', () => {
  it('login reads the token from stdin, checks it, and saves a 0600 profile that later commands use', async () => {
    const base = cleanEnv({ HOOKD_DATA_DIR: tempDir('hookctl-nodata-') });
    const r = await hookctl(['login', '--server', daemon.url], { env: base, input: `${daemon.token}\n` });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    const path = join(base.XDG_CONFIG_HOME!, 'hookctl', 'config.json');
    assert.ok(r.stderr.includes(path), r.stderr);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(
      statSync(join(base.XDG_CONFIG_HOME!, 'hookctl')).mode & 0o077,
      0,
      'directory closed to others',
    );
    const saved = JSON.parse(readFileSync(path, 'utf8')) as {
      current: string;
      profiles: Record<string, { server: string; token: string }>;
    };
    assert.equal(saved.current, 'default');
    assert.deepEqual(saved.profiles.default, { server: daemon.url, token: daemon.token });

    // No HOOKD_URL/HOOKD_TOKEN and no admin.token: server and token come from the profile.
    const list = await hookctl(['list'], { env: base });
    assert.equal(list.code, 0, list.stderr);

    const profiles = await hookctl(['profile', 'list'], { env: base });
    assert.equal(profiles.code, 0);
    assert.equal(profiles.stdout, `*\tdefault\t${daemon.url}\tset\n`);
    assert.doesNotMatch(
      profiles.stdout + profiles.stderr,
      new RegExp(daemon.token),
      'tokens are never printed',
    );
  });

  it('login with a refused token exits 4 and saves nothing', async () => {
    const base = cleanEnv();
    const r = await hookctl(['login', '--server', daemon.url], { env: base, input: 'hkd_wrong\n' });
    assert.equal(r.code, 4);
    assert.match(r.stderr, /refused the token; nothing was saved/);
    assert.equal(existsSync(join(base.XDG_CONFIG_HOME!, 'hookctl', 'config.json')), false);
  });

  it('login with nothing on stdin is a usage error', async () => {
    const r = await hookctl(['login', '--server', daemon.url], { env: cleanEnv(), input: '' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no token given on standard input/);
  });
});

describe('hookctl colour', () => {
  const failing = () => ({ ...env, HOOKD_TOKEN: 'hkd_wrong' });

  it('FORCE_COLOR colours the error prefix even when piped (the control for the tests below)', async () => {
    const r = await hookctl(['list'], { env: { ...failing(), FORCE_COLOR: '1' } });
    assert.match(r.stderr, ANSI);
  });

  it('NO_COLOR wins over FORCE_COLOR', async () => {
    const r = await hookctl(['list'], { env: { ...failing(), FORCE_COLOR: '1', NO_COLOR: '1' } });
    assert.equal(r.code, 4);
    assert.doesNotMatch(r.stderr, ANSI);
  });

  it('--no-color wins over FORCE_COLOR', async () => {
    const r = await hookctl(['--no-color', 'list'], { env: { ...failing(), FORCE_COLOR: '1' } });
    assert.doesNotMatch(r.stderr, ANSI);
  });

  it('piped output has no colour by default', async () => {
    await createHook();
    const r = await hookctl(['list'], { env });
    assert.doesNotMatch(r.stdout, ANSI);
    const e = await hookctl(['list'], { env: failing() });
    assert.doesNotMatch(e.stderr, ANSI);
  });
});

describe('hookctl completion', () => {
  const hasShell = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;

  for (const shell of ['bash', 'zsh', 'fish'] as const) {
    it(`completion ${shell} prints a script naming the commands`, async (t) => {
      const r = await hookctl(['completion', shell], { env });
      assert.equal(r.code, 0, r.stderr);
      for (const word of ['hooks', 'create', 'deliveries', 'redeliver', 'tail', '--output']) {
        assert.ok(
          r.stdout.includes(shell === 'fish' ? word.replace(/^--/, '') : word),
          `${shell} script mentions ${word}`,
        );
      }
      if (!hasShell(shell))
        return requireOrSkip(t, `${shell} is not installed (apt-get install ${shell}): syntax not checked`);
      // From a file: fish -n does not read a script from a pipe.
      const file = join(tempDir('hookctl-completion-'), `hookctl.${shell}`);
      writeFileSync(file, r.stdout);
      const check = spawnSync(shell, ['-n', file], { encoding: 'utf8' });
      assert.equal(check.status, 0, check.stderr);
      // The check can fail: the same script with an unclosed `if` at its end is refused.
      writeFileSync(file, `${r.stdout}\nif true; then\n`);
      assert.notEqual(spawnSync(shell, ['-n', file]).status, 0, `${shell} -n refuses a broken script`);
    });
  }

  it('the bash script completes commands, options, option values and hook Ids', async (t) => {
    if (!hasShell('bash')) return requireOrSkip(t, 'bash is not installed');
    const id = await createHook();
    const script = (await hookctl(['completion', 'bash'], { env })).stdout;
    const bin = tempDir('hookctl-bin-');
    writeFileSync(join(bin, 'hookctl'), `#!/bin/sh\nexec "${process.execPath}" "${HOOKCTL_BIN}" "$@"\n`, {
      mode: 0o755,
    });
    const complete = async (words: string[]) => {
      const program = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _hookctl; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const r = await runProcess('bash', ['-c', program], { env: { ...env, PATH: `${bin}:${env.PATH}` } });
      return r.stdout.split('\n').filter(Boolean);
    };
    assert.deepEqual(await complete(['hookctl', 'hooks', '']), [
      'list',
      'get',
      'create',
      'replace',
      'edit',
      'delete',
      'enable',
    ]);
    assert.deepEqual(await complete(['hookctl', '-o', '']), ['table', 'wide', 'json']);
    assert.deepEqual(await complete(['hookctl', 'tail', '--st']), ['--status']);
    assert.deepEqual(await complete(['hookctl', 'comp']), ['completion']);
    assert.ok((await complete(['hookctl', 'get', ''])).includes(id), 'hook Ids come from hookctl list');
  });
});

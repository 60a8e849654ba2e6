import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { REPO_ROOT, tempDir } from '../helpers/hookd.js';
import { type ChildResult, npmFreeEnv, runChild } from '../helpers/run-child.js';
import { type Receiver, sleep, startReceiver, startUpstream, type Upstream } from '../helpers/servers.js';
import { cleanEnv, runProcess } from '../hookctl/helpers.js';

// The production install (docs/guides/operators/install.md): the release tarball is
// built by one command (`npm pack`) from a copy of the source, installed into a temp prefix the
// way an operator installs it globally (`npm install -g`, so devDependencies absent and no build
// step), and the installed `hookd` and `hookctl` are driven: --version, a daemon on a temp data
// dir, create, list, and a tail that shows one callback. The install fetches the dependencies
// (from npm's cache when it has them) and may compile better-sqlite3: minutes on a busy machine.

const INSTALL_TIMEOUT_MS = 15 * 60_000;
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;

/** Runs `npm ARGS` in `cwd`, without the `npm test` run's own settings. */
function npm(args: string[], cwd: string, timeoutMs: number): Promise<ChildResult> {
  return runChild('npm', args, { cwd, env: npmFreeEnv(), timeoutMs });
}

let work = '';
let prefix = '';
let tarball = '';
let bin = '';

before(
  async () => {
    work = tempDir('hookd-release-');
    // A copy of the source with the clone's node_modules (the build needs the devDependencies);
    // packing there leaves this checkout's dist/, which the other tests run from, untouched.
    const src = join(work, 'src');
    cpSync(REPO_ROOT, src, {
      recursive: true,
      filter: (p) => !/\/(node_modules|dist|\.git)$/.test(p) && !p.endsWith('.tgz'),
    });
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(src, 'node_modules'));
    const pack = await npm(['pack', '--pack-destination', work], src, 5 * 60_000);
    assert.equal(pack.code, 0, `npm pack failed:\n${pack.stderr}`);
    tarball = join(work, `hookd-${VERSION}.tgz`);
    assert.ok(existsSync(tarball), `no ${tarball}: ${readdirSync(work).join(', ')}`);

    prefix = join(work, 'prefix');
    const started = Date.now();
    const install = await npm(
      ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball],
      work,
      INSTALL_TIMEOUT_MS,
    );
    assert.equal(install.code, 0, `npm install -g failed:\n${install.stderr}`);
    console.log(`# npm install -g of the tarball took ${Math.round((Date.now() - started) / 1000)} s`);
    bin = join(prefix, 'bin');
  },
  { timeout: INSTALL_TIMEOUT_MS + 6 * 60_000 },
);

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the release tarball', () => {
  it('carries the built dist/, the binaries, man pages, unit and install script; no sources or tests', () => {
    const listing = readdirSync(join(prefix, 'lib', 'node_modules', 'hookd'), { recursive: true }).map(
      String,
    );
    for (const f of [
      'dist/src/hookd-cli/main.js',
      'dist/src/hookctl/main.js',
      'bin/hookd.js',
      'bin/hookctl.js',
      'man/hookd.8',
      'man/hookctl.1',
      'contrib/systemd/hookd.service',
      'contrib/hookd.example.json',
      'scripts/install.sh',
      'schema/hook.schema.json',
    ])
      assert.ok(listing.includes(f), `the installed package lacks ${f}`);
    assert.equal(
      // src/console/assets (the console's static files) ship as they are; TypeScript sources do not.
      listing.some(
        (f) =>
          (f.startsWith('src/') && f.endsWith('.ts')) || f.startsWith('test/') || f.startsWith('dist/test/'),
      ),
      false,
      'sources or tests shipped',
    );
  });

  it('installs without the devDependencies', () => {
    const modules = join(prefix, 'lib', 'node_modules', 'hookd', 'node_modules');
    // Not the whole @types scope: mqtt.js depends on @types/readable-stream and @types/ws (and
    // through them @types/node) at run time; the type packages only hookd itself uses stay out.
    for (const dev of ['typescript', '@biomejs', 'tsx', '@types/pg', '@types/better-sqlite3'])
      assert.equal(existsSync(join(modules, dev)), false, `${dev} was installed`);
    assert.ok(existsSync(join(modules, 'better-sqlite3')), 'better-sqlite3 is there');
  });

  it('puts hookd, hookctl and the man pages under the prefix', () => {
    assert.ok(existsSync(join(bin, 'hookd')));
    assert.ok(existsSync(join(bin, 'hookctl')));
    assert.ok(existsSync(join(prefix, 'share', 'man', 'man8', 'hookd.8')), 'man 8 hookd');
    assert.ok(existsSync(join(prefix, 'share', 'man', 'man1', 'hookctl.1')), 'man 1 hookctl');
  });

  it('the installed hookd --version and -V print the version', async () => {
    for (const flag of ['--version', '-V']) {
      const r = await runProcess(join(bin, 'hookd'), [flag], { env: npmFreeEnv() });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), VERSION);
    }
  });
});

describe('the installed hookd driven by the installed hookctl', () => {
  let upstream: Upstream;
  let receiver: Receiver;
  let daemon: ChildProcess;
  let url = '';
  let opsUrl = '';
  let env: NodeJS.ProcessEnv;
  const lines: string[] = [];

  before(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver();
    const dataDir = tempDir('hookd-release-data-');
    daemon = spawn(
      join(bin, 'hookd'),
      [
        '--data-dir',
        dataDir,
        '--listen',
        '127.0.0.1:0',
        '--console-listen',
        '127.0.0.1:0',
        '--ops-listen',
        '127.0.0.1:0',
        '--upstream',
        upstream.url,
        '--allow-callback-net',
        '127.0.0.0/8',
      ],
      { env: npmFreeEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start-up line: ${lines.join('\n')}`)), 30_000);
      createInterface({ input: daemon.stdout! }).on('line', (line) => {
        lines.push(line);
        const rec = JSON.parse(line) as { msg?: string; url?: string; opsUrl?: string };
        if (rec.msg === 'listening' && rec.url) {
          opsUrl = rec.opsUrl ?? '';
          clearTimeout(timer);
          resolve(rec.url);
        }
      });
      daemon.once('exit', (code) => reject(new Error(`hookd exited ${code}: ${lines.join('\n')}`)));
    });
    const token = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
    env = cleanEnv({ HOOKD_URL: url, HOOKD_TOKEN: token, PATH: npmFreeEnv().PATH });
  });

  after(async () => {
    if (daemon && daemon.exitCode === null) {
      daemon.kill('SIGKILL');
      await new Promise((r) => daemon.once('exit', r));
    }
    await receiver?.close();
    await upstream?.close();
  });

  it('create, list, and tail shows the callback of a proxied request', async () => {
    const hookFile = join(work, 'hook.json');
    writeFileSync(
      hookFile,
      JSON.stringify({ PathPattern: '/orders/(*)', Methods: ['POST'], Callback: `${receiver.url}/cb` }),
    );
    const created = await runProcess(join(bin, 'hookctl'), ['create', '-f', hookFile, '-o', 'json'], { env });
    assert.equal(created.code, 0, created.stderr);
    const id = (JSON.parse(created.stdout) as { Id: string }).Id;
    assert.match(id, /^hk_/);

    const list = await runProcess(join(bin, 'hookctl'), ['list'], { env });
    assert.equal(list.code, 0, list.stderr);
    assert.ok(list.stdout.includes(id), list.stdout);

    // The tail first, then the request: the callback shows up in it.
    const tail = spawn(join(bin, 'hookctl'), ['tail', '-o', 'json'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tailLines: string[] = [];
    let tailErr = '';
    createInterface({ input: tail.stdout! }).on('line', (l) => tailLines.push(l));
    tail.stderr!.on('data', (d: Buffer) => {
      tailErr += d.toString();
    });
    try {
      // Connected once the operations listener counts one tail client.
      const clients = async () => {
        const text = await (await fetch(`${opsUrl}/metrics`)).text();
        return /^hookd_tail_clients 1$/m.test(text);
      };
      for (let waited = 0; !(await clients()); waited += 100) {
        if (waited > 20_000) assert.fail(`hookctl tail did not connect: ${tailErr}`);
        await sleep(100);
      }
      const r = await fetch(`${url}/orders/42`, { method: 'POST', body: '{}' });
      await r.text();
      await receiver.waitFor(1, 20_000);
      for (let waited = 0; !tailLines.some((l) => l.includes(id) && l.includes('attempt')); waited += 50) {
        if (waited > 20_000) assert.fail(`no attempt line in the tail:\n${tailLines.join('\n')}\n${tailErr}`);
        await sleep(50);
      }
      const attempt = tailLines
        .map((l) => JSON.parse(l) as { kind: string; HookId: string; Outcome?: string })
        .find((e) => e.kind === 'attempt' && e.HookId === id);
      assert.equal(attempt?.Outcome, 'succeeded');
    } finally {
      tail.kill('SIGINT');
    }
  });

  it('stops on SIGTERM with exit code 0', async () => {
    const exited = new Promise<number | null>((r) => daemon.once('exit', (code) => r(code)));
    daemon.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
});

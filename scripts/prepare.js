#!/usr/bin/env node
// The `prepare` script. `npm install` in a clone and `npm pack` (the release tarball): build dist/
// (TypeScript is a devDependency, so it is there). Where the devDependencies are absent
// (`npm install -g .` of a fresh clone) there is nothing to build with: say so and succeed, rather
// than fail with `tsc: not found`. The tarball carries dist/ and installs with no build step and no
// devDependencies. README "Installing for production". First, on a Node older than hookd's
// floor, it brings a supported Node for the clone's npm scripts (scripts/node-runtime.js).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureRuntime } from './node-runtime.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const packing = process.env.npm_command === 'pack' || process.env.npm_command === 'publish';
if (!existsSync(join(root, 'node_modules', 'typescript'))) {
  if (packing) {
    console.error('hookd: npm pack builds dist/ and needs the devDependencies: run npm install first.');
    process.exit(1);
  }
  console.error(
    'hookd: devDependencies are not installed, so dist/ is not built here. For a production install use the release tarball: npm pack, then npm install -g ./hookd-VERSION.tgz (README "Installing for production").',
  );
  process.exit(0);
}
try {
  ensureRuntime(root);
} catch (e) {
  console.error(`hookd: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
const npm = process.env.npm_execpath;
const r = npm
  ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' })
  : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: true });
process.exit(r.status ?? 1);

#!/usr/bin/env node
// Runs every compiled test file with Node's own test runner. Node 20's `--test` takes no globs,
// so the files are collected here; arguments narrow the run to files whose path contains them.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../dist/test', import.meta.url).pathname;
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.js')) files.push(p);
  }
};
walk(root);
const filters = process.argv.slice(2);
const selected = filters.length ? files.filter((f) => filters.some((x) => f.includes(x))) : files;
if (selected.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const r = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--test', '--test-concurrency=2', '--test-reporter=spec', ...selected.sort()],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);

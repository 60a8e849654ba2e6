#!/usr/bin/env node
// Runs every compiled test file with Node's own test runner. Node 20's `--test` takes no globs,
// so the files are collected here; arguments narrow the run to files whose path contains them.
// The runner's summary is read back to print the skip count last; with HOOKD_REQUIRE_ALL=1 (CI)
// any skipped test fails the run (docs/DECISIONS.md "The suite cannot stay green by skipping").
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
// --test-force-exit: a test file whose `before` failed may leave a server listening that its
// `after` never reaches; without the flag that file's process, and so the whole run, waits forever.
// The flag loses a file's last results unless that process's stdout blocks (test-child-stdout.mjs).
// The runner's own report can lose its tail the same way when the runner is force-exited while
// its reporter still holds lines for stdout (seen on a machine running two suites at once); a
// file destination is flushed before that exit, so the counts and failures are read from a second
// copy of the report written to a file, and stdout is for reading along.
const reportDir = mkdtempSync(join(tmpdir(), 'hookd-test-report-'));
const reportFile = join(reportDir, 'spec.txt');
const child = spawn(
  process.execPath,
  [
    '--enable-source-maps',
    '--import',
    new URL('./test-child-stdout.mjs', import.meta.url).href,
    '--test',
    '--test-force-exit',
    '--test-concurrency=2',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=spec',
    `--test-reporter-destination=${reportFile}`,
    ...selected.sort(),
  ],
  { stdio: ['inherit', 'pipe', 'inherit'] },
);
// The summary lines (`ℹ pass N`, …) are read as they pass, wherever they stand: after a failing
// run the runner prints the failures again below them. Its `skipped` counts tests only; a skipped
// suite (describe with `skip`) shows as a `﹣` line, as a skipped test does, so those lines are
// counted as they pass.
const summary = {};
let skipLines = 0;
// The runner repeats each failure below `✖ failing tests:` as `test at FILE:LINE:COL` and then
// `✖ NAME (…ms)`; they are gathered so that the last lines name every failing test, since the
// failures themselves can be thousands of lines up.
const failures = [];
let inFailures = false;
let failedAt = '';
const read = (raw) => {
  const line = raw.replace(/\u001b\[[0-9;]*m/g, '');
  if (/^\s*﹣ /.test(line)) skipLines++;
  if (/^✖ failing tests:/.test(line)) inFailures = true;
  else if (inFailures) {
    const at = /^test at (.+)$/.exec(line);
    if (at) failedAt = at[1];
    const name = /^✖ (.+?)(?: \([\d.]+m?s\))?$/.exec(line);
    if (name) {
      failures.push(failedAt ? `${name[1]} (${failedAt})` : name[1]);
      failedAt = '';
    }
  }
  const m = /^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)\s*$/.exec(line);
  if (m) summary[m[1]] = Number(m[2]);
};
child.stdout.on('data', (chunk) => process.stdout.write(chunk));
const status = await new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
let report = '';
try {
  report = readFileSync(reportFile, 'utf8');
} catch {
  // No report at all: said below as "no summary".
}
rmSync(reportDir, { recursive: true, force: true });
for (const line of report.split('\n')) read(line);
const { pass, fail, cancelled, skipped: skippedTests, todo } = summary;
// Every skipped test and suite, whichever way the runner counted it.
const skipped = skippedTests === undefined ? undefined : Math.max(skippedTests, skipLines);
if (skipped === undefined) {
  console.log('\nhookd tests: no summary from the test runner');
  process.exit(status === 0 ? 1 : status);
}
if (failures.length > 0) {
  console.log(`\nfailing tests (${failures.length}):`);
  for (const f of failures) console.log(`  ✖ ${f}`);
}
console.log(
  `\nhookd tests: ${pass} passed, ${(fail ?? 0) + (cancelled ?? 0)} failed, ${skipped} skipped, ${todo ?? 0} todo`,
);
if (process.env.HOOKD_REQUIRE_ALL === '1' && skipped + (todo ?? 0) > 0) {
  console.log(
    `HOOKD_REQUIRE_ALL=1: ${skipped} skipped test(s); every test must run (grep the output for "# SKIP")`,
  );
  process.exit(status === 0 ? 1 : status);
}
process.exit(status);

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// scripts/run-tests.js is what CI reads: after a failing run its last lines name every failing
// test with its place, and it exits non-zero; the failures themselves can be far up the output.
const here = dirname(fileURLToPath(import.meta.url));
const ROOT = [join(here, '..', '..'), join(here, '..', '..', '..')].find((d) =>
  existsSync(join(d, 'scripts', 'run-tests.js')),
)!;

function runIn(files: Record<string, string>): { status: number | null; lines: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-run-tests-'));
  try {
    mkdirSync(join(dir, 'scripts'));
    mkdirSync(join(dir, 'dist', 'test'), { recursive: true });
    for (const f of ['run-tests.js', 'test-child-stdout.mjs'])
      copyFileSync(join(ROOT, 'scripts', f), join(dir, 'scripts', f));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'dist', 'test', name), text);
    const env = { ...process.env };
    delete env.HOOKD_REQUIRE_ALL;
    delete env.NODE_TEST_CONTEXT;
    const r = spawnSync(process.execPath, [join(dir, 'scripts', 'run-tests.js')], {
      cwd: dir,
      env,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return { status: r.status, lines: r.stdout.trimEnd().split('\n') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('scripts/run-tests.js', () => {
  it('counts every result of files that end by the forced exit, however much they wrote', () => {
    // Long names fill the pipe of each file's process; the open interval makes the runner's
    // forced exit end it. Without blocking stdout in those processes the last results are lost.
    const file = `import { it } from 'node:test';
setInterval(() => {}, 60_000);
for (let i = 0; i < 150; i++) it(\`t\${i} \${'x'.repeat(2000)}\`, () => {});
`;
    const { status, lines } = runIn({ 'a.test.js': file, 'b.test.js': file, 'c.test.js': file });
    assert.equal(status, 0, lines.slice(-5).join('\n'));
    // The count the run prints last, read from the report file that the runner flushes.
    assert.equal(lines.at(-1), 'hookd tests: 450 passed, 0 failed, 0 skipped, 0 todo');
  });

  it('loads the stdout preload into each test file process', () => {
    const { status, lines } = runIn({
      'p.test.js': `import { it } from 'node:test';
import assert from 'node:assert/strict';
it('sees it', () => assert.equal(globalThis[Symbol.for('hookd.test.stdoutBlocking')], true));
`,
    });
    assert.equal(status, 0, lines.slice(-8).join('\n'));
  });

  it('names every failing test, with its file and line, in its last lines and exits non-zero', () => {
    const { status, lines } = runIn({
      'a.test.js': `import { describe, it } from 'node:test';
import assert from 'node:assert';
describe('suite A', () => { it('fails in a suite', () => assert.equal(1, 2)); it('passes', () => {}); });
`,
      'b.test.js': `import { it } from 'node:test';
it('fails at the top', () => { throw new Error('boom'); });
it('passes too', () => {});
`,
    });
    assert.notEqual(status, 0);
    const tail = lines.slice(-6).join('\n');
    assert.match(tail, /failing tests \(2\):/);
    assert.match(tail, /✖ fails in a suite \(dist\/test\/a\.test\.js:3:\d+\)/);
    assert.match(tail, /✖ fails at the top \(dist\/test\/b\.test\.js:2:\d+\)/);
    assert.equal(lines.at(-1), 'hookd tests: 2 passed, 2 failed, 0 skipped, 0 todo');
  });

  it('ends a file that leaves a server listening after its before failed, rather than waiting forever', () => {
    const started = Date.now();
    const { status, lines } = runIn({
      'd.test.js': `import { after, before, it } from 'node:test';
import { createServer } from 'node:http';
let server;
let daemon;
before(async () => {
  server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  throw new Error('the daemon did not start');
});
after(async () => {
  await daemon.stop();
  server.close();
});
it('needs the daemon', () => {});
`,
    });
    assert.notEqual(status, 0);
    assert.ok(Date.now() - started < 60_000);
    assert.match(lines.at(-1) ?? '', /^hookd tests: 0 passed, [1-9]\d* failed/);
  });

  it('prints no failure list after a passing run, and exits 0', () => {
    const { status, lines } = runIn({
      'c.test.js': `import { it } from 'node:test';\nit('passes', () => {});\n`,
    });
    assert.equal(status, 0);
    assert.ok(!lines.some((l) => l.startsWith('failing tests')));
    assert.equal(lines.at(-1), 'hookd tests: 1 passed, 0 failed, 0 skipped, 0 todo');
  });
});

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// Node's runner may finish a test file while its top-level code still awaits: suites declared
// after such an await then never run, and nothing counts them as skipped. So a test file awaits
// (a broker or PostgreSQL probe for its skip reasons) before it declares its first suite.
const here = dirname(fileURLToPath(import.meta.url));
const ROOT = [here, join(here, '..', '..', '..')].find((d) =>
  existsSync(join(d, 'src', 'daemon', 'hookd.ts')),
)!;
const TEST = join(ROOT, 'test');

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return testFiles(p);
    return name.endsWith('.test.ts') ? [p] : [];
  });
}

const SUITE = /^(describe|it|test|suite)(\.\w+)?\(/;
const AWAIT = /^(?:(?:const|let|var)\s[^=]+=\s*\(?\s*)?await\s/;

/** The line number (1-based) of the first top-level `await` below a top-level suite or test. */
function lateAwait(lines: readonly string[]): number | undefined {
  let declared = false;
  // Lines inside a template literal (a script a test writes) are text, not the file's code.
  let inTemplate = false;
  for (const [i, line] of lines.entries()) {
    if (!inTemplate && SUITE.test(line)) declared = true;
    else if (!inTemplate && declared && AWAIT.test(line)) return i + 1;
    if ((line.replace(/\\./g, '').match(/`/g)?.length ?? 0) % 2 === 1) inTemplate = !inTemplate;
  }
  return undefined;
}

describe('test files', () => {
  it('declare every suite after their last top-level await', () => {
    const late = testFiles(TEST).flatMap((f) => {
      const at = lateAwait(readFileSync(f, 'utf8').split('\n'));
      return at === undefined ? [] : [`${relative(ROOT, f)}:${at}`];
    });
    assert.deepEqual(late, []);
  });

  it('the check finds an await between two suites, and none before the first', () => {
    const between = [
      "describe('a', () => {});",
      'const skip = await probe();',
      "describe('b', { skip }, () => {});",
    ];
    assert.equal(lateAwait(between), 2);
    assert.equal(lateAwait([between[1]!, between[0]!, between[2]!]), undefined);
    assert.equal(lateAwait([between[0]!, 'const script = `', between[1]!, '`;']), undefined);
  });
});

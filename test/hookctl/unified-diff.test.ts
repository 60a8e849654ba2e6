import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unifiedDiff } from '../../src/hookctl/hook-set/index.js';

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    assert.equal(unifiedDiff('a\nb\n', 'a\nb\n', 'x', 'y'), '');
  });

  it('prints one hunk with 3 lines of context, removals before additions', () => {
    const a = ['1', '2', '3', '4', '5', '6', '7', '8', '9'].join('\n');
    const b = ['1', '2', '3', '4', 'five', '6', '7', '8', '9'].join('\n');
    assert.equal(
      unifiedDiff(a, b, 'live', 'file'),
      '--- live\n+++ file\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n',
    );
  });

  it('a creation is a diff from nothing, a prune a diff to nothing', () => {
    assert.equal(
      unifiedDiff('', 'a\nb\n', '/dev/null', 'f'),
      '--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n+a\n+b\n',
    );
    assert.equal(unifiedDiff('a\n', '', 'l', '/dev/null'), '--- l\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-a\n');
  });

  it('keeps far-apart changes in separate hunks', () => {
    const a = Array.from({ length: 20 }, (_, i) => String(i)).join('\n');
    const b = a.replace(/^1$/m, 'one').replace(/^18$/m, 'eighteen');
    assert.equal((unifiedDiff(a, b, 'l', 'f').match(/^@@/gm) ?? []).length, 2);
  });
});

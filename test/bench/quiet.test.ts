import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitForQuiet } from '../../bench/lib/quiet.js';
import { parseBenchArgs } from '../../bench/run.js';

// A full bench run waits for a quiet machine before its first section and says what it found.

describe('bench: waiting for a quiet machine', () => {
  it('goes on at once when the load is under the threshold', async () => {
    const lines: string[] = [];
    const w = await waitForQuiet(Number.POSITIVE_INFINITY, 60, (l) => lines.push(l), 10);
    assert.equal(w.quiet, true);
    assert.equal(w.waitedSeconds, 0);
    assert.equal(w.before.length, 3);
    assert.deepEqual(lines, [], 'nothing to announce');
  });

  it('gives up at its deadline and reports the machine as busy', async () => {
    // No load average is below 0: the wait runs to its deadline.
    const lines: string[] = [];
    const started = Date.now();
    const w = await waitForQuiet(0, 0.3, (l) => lines.push(l), 20);
    assert.ok(Date.now() - started >= 300, 'waited until the deadline');
    assert.equal(w.quiet, false);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /waiting for the load average to fall below 0 \(now [\d.]+ [\d.]+ [\d.]+\)/);
  });

  it('takes --quiet-wait in seconds, 0 for no wait, and refuses anything else', () => {
    assert.equal(parseBenchArgs([]).quietWaitSeconds, 600);
    assert.equal(parseBenchArgs(['--quiet-wait', '0']).quietWaitSeconds, 0);
    assert.equal(parseBenchArgs(['--quiet-wait', '90']).quietWaitSeconds, 90);
    assert.throws(() => parseBenchArgs(['--quiet-wait', 'soon']), /--quiet-wait is a number of seconds/);
    assert.throws(() => parseBenchArgs(['--quiet-wait', '-1']), /--quiet-wait is a number of seconds/);
  });
});

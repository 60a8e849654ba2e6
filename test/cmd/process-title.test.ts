import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { spawnHookd } from '../helpers/hookd.js';

// What ps and top show for a running daemon: the kernel's command name (/proc/PID/comm, ps's
// COMMAND column) and the argument line (ps -f, top -c).
describe('the process title', () => {
  it('a running hookd is called hookd in ps, not MainThread', async (t) => {
    if (process.platform !== 'linux') return t.skip('reads /proc');
    const hookd = await spawnHookd();
    try {
      const pid = hookd.proc.pid!;
      assert.equal(readFileSync(`/proc/${pid}/comm`, 'utf8').trim(), 'hookd');
      assert.match(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), /^hookd/);
    } finally {
      await hookd.kill();
    }
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { spawnHookd } from '../helpers/hookd.js';
import { skipReason } from '../helpers/require.js';

// What ps and top show for a running daemon: the kernel's command name (/proc/PID/comm, ps's
// COMMAND column) and the argument line (ps -f, top -c).
describe('the process title', { skip: skipReason(process.platform !== 'linux' && 'reads /proc') }, () => {
  it('a running hookd is called hookd in ps, not MainThread', async () => {
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

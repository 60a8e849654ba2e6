import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/hookd.js';

// The README's quick start starts example servers in "terminal 1": an upstream and a callback
// receiver. Copied as they are, they must not listen on every interface of the reader's machine.

const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

describe("the README's example servers", () => {
  it('terminal 1 binds the upstream and the receiver to 127.0.0.1', () => {
    const start = readme.indexOf('# terminal 1');
    assert.notEqual(start, -1, 'the README has a terminal 1 block');
    const block = readme.slice(start, readme.indexOf('```', start));
    const servers = block.split('\n').filter((l) => /http\.server|createServer/.test(l));
    assert.equal(servers.length, 2, block);
    for (const line of servers) {
      if (line.includes('http.server')) assert.match(line, /--bind 127\.0\.0\.1\b/, line);
      else assert.match(line, /\.listen\(\d+, *['"]127\.0\.0\.1['"]\)/, line);
    }
  });
});

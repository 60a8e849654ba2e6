import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { brokenLinks, markdownFiles } from '../../scripts/docs/index.js';
import { REPO_ROOT } from '../helpers/hookd.js';

/**
 * Guides other branches are adding: linked from the README's map and the guides index already,
 * not yet here. Once one exists this test says so, and the entry goes.
 */
const EXPECTED_LATER: string[] = [];

describe('links in README.md, CONTRIBUTING.md and docs/', () => {
  it('every relative link names a file, and every #fragment a heading of it', () => {
    const files = markdownFiles(REPO_ROOT);
    assert.ok(files.length > 10, `Markdown files: ${files.length}`);
    const broken = brokenLinks(REPO_ROOT, files, EXPECTED_LATER);
    assert.deepEqual(
      broken.map((b) => `${b.file}:${b.line}: ${b.target}: ${b.why}`),
      [],
    );
  });

  it('the expected-later guides are still missing (when one lands, remove it from EXPECTED_LATER)', () => {
    for (const path of EXPECTED_LATER) assert.ok(!existsSync(join(REPO_ROOT, path)), `${path} exists now`);
  });

  it('finds a missing file, a missing heading and ignores links inside code', () => {
    const root = mkdtempSync(join(tmpdir(), 'hookd-links-'));
    try {
      mkdirSync(join(root, 'docs'));
      writeFileSync(join(root, 'docs', 'a.md'), '# A page\n\n## Two words\n\n## Two words\n');
      writeFileSync(
        join(root, 'README.md'),
        [
          '[ok](docs/a.md#two-words) [dup](docs/a.md#two-words-1) [self](#top) [web](https://example.com/x)',
          '[gone](docs/b.md) [no heading](docs/a.md#three)',
          '`[in code](docs/c.md)`',
          '```',
          '[in a fence](docs/d.md)',
          '```',
          '# Top',
        ].join('\n'),
      );
      const broken = brokenLinks(root, markdownFiles(root), []);
      assert.deepEqual(
        broken.map((b) => [b.line, b.target]),
        [
          [2, 'docs/b.md'],
          [2, 'docs/a.md#three'],
        ],
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/hookd.js';

// docs/architecture.md's folder map is read against src/: a folder missing from the map, or a
// map entry with no folder behind it, fails. One folder per hookctl command (src/hookctl/commands/*)
// is the hookctl reference's business, not the map's.

const SRC = join(REPO_ROOT, 'src');

function folders(dir: string, depth: number): string[] {
  if (depth === 0) return [];
  return readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isDirectory())
    .flatMap((name) => {
      const rel = `${dir === SRC ? '' : `${dir.slice(SRC.length + 1)}/`}${name}`;
      const below = rel === 'hookctl/commands' ? [] : folders(join(dir, name), depth - 1);
      return [`src/${rel}/`, ...below];
    });
}

function mapped(): string[] {
  const page = readFileSync(join(REPO_ROOT, 'docs', 'architecture.md'), 'utf8');
  const start = page.indexOf('## Folder map');
  assert.ok(start >= 0, 'docs/architecture.md has a "Folder map" section');
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^\| `(src\/[^`]+\/)` \|/gm)].map((m) => m[1]!);
}

describe("docs/architecture.md's folder map", () => {
  it('names every folder of src/, and no folder that is not there', () => {
    const actual = folders(SRC, 3).sort();
    const map = mapped();
    assert.ok(actual.length > 40, `folders: ${actual.length}`);
    assert.deepEqual(
      actual.filter((f) => !map.includes(f)),
      [],
      'folders of src/ missing from the map',
    );
    assert.deepEqual(
      map.filter((f) => !actual.includes(f)),
      [],
      'map entries with no such folder',
    );
    assert.equal(new Set(map).size, map.length, 'a folder listed twice');
  });
});

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// Comments say why the code is as it is, in the present tense; which ticket asked for it belongs in
// the commit message and the decision record (docs/DECISIONS.md). Every line of src/, test/, bench/
// and scripts/ is read, strings included: a string served to users (the OpenAPI document) is
// documentation too.
const here = dirname(fileURLToPath(import.meta.url));
const ROOT = [join(here, '..', '..'), join(here, '..', '..', '..')].find((d) =>
  existsSync(join(d, 'src', 'errors', 'catalog.ts')),
)!;
const TREES = ['src', 'test', 'bench', 'scripts'];

/** A ticket number after the word, as `grep -rnE '\b[Ii]ssue [0-9]+'` finds them. */
const CITES_ISSUE = /\b[Ii]ssue [0-9]+/;

const TEXT = /\.(ts|js|mjs|cjs|css|html|sh|json|md|sql|yaml|yml)$/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p);
    return TEXT.test(name) ? [p] : [];
  });
}

function citations(root: string): string[] {
  const found: string[] = [];
  for (const tree of TREES) {
    const top = join(root, tree);
    if (!existsSync(top)) continue;
    for (const file of files(top)) {
      const rel = relative(root, file).split(sep).join('/');
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (CITES_ISSUE.test(line)) found.push(`${rel}:${i + 1}: ${line.trim()}`);
        });
    }
  }
  return found;
}

describe('no source line cites an issue number', () => {
  it('finds a citation where there is one', () => {
    const phrase = ['Issue', '22'].join(' ');
    assert.ok(CITES_ISSUE.test(`// ${phrase} (src/loops/): hookd's own requests fire nothing`));
    assert.ok(CITES_ISSUE.test(`'… has not agreed yet (${phrase.toLowerCase()})'`));
    assert.ok(!CITES_ISSUE.test('// reissue 22 tokens'), 'a word ending in "issue" is no citation');
    assert.ok(!CITES_ISSUE.test('// GitHub issues are linked from the decision records'));
  });

  it('src/, test/, bench/ and scripts/ cite none', () => {
    const found = citations(ROOT);
    assert.deepEqual(found, [], `say why instead of citing an issue:\n${found.join('\n')}`);
  });
});

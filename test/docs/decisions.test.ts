import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/hookd.js';

// Decisions are records under docs/decisions/. A section appended to docs/DECISIONS.md (as a
// branch may do) waits for scripts/split-decisions.js to move it; this says so until it has.
// Every record reads the same way: what made the question (Context), what hookd does (Decision),
// what follows from it (Consequences), and the measurements behind it (Figures) when it has some.

const DIR = join(REPO_ROOT, 'docs', 'decisions');

describe('the decision records', () => {
  it('docs/DECISIONS.md holds no section waiting to be moved into a record', () => {
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts', 'split-decisions.js'), '--check'], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
  });

  it('both indexes list every record, and every record starts with its number and title', () => {
    const records = readdirSync(DIR).filter((f) => /^\d{4}-[a-z0-9-]+\.md$/.test(f));
    assert.ok(records.length > 50, `records: ${records.length}`);
    const index = readFileSync(join(DIR, 'README.md'), 'utf8');
    const short = readFileSync(join(REPO_ROOT, 'docs', 'DECISIONS.md'), 'utf8');
    for (const file of records) {
      assert.match(readFileSync(join(DIR, file), 'utf8'), new RegExp(`^# ${file.slice(0, 4)}\\. \\S`), file);
      assert.ok(index.includes(`](${file})`), `docs/decisions/README.md lists ${file}`);
      assert.ok(short.includes(`](decisions/${file})`), `docs/DECISIONS.md lists ${file}`);
    }
  });

  it('every record has Context, Decision and Consequences, in that order, and Figures only last', () => {
    const records = readdirSync(DIR).filter((f) => /^\d{4}-[a-z0-9-]+\.md$/.test(f));
    const wrong: string[] = [];
    for (const file of records) {
      const text = readFileSync(join(DIR, file), 'utf8').replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
      const sections = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]!.trim());
      const expected = ['Context', 'Decision', 'Consequences'];
      const shape = sections.filter((s) => s !== 'Figures');
      const figuresLast = !sections.includes('Figures') || sections.at(-1) === 'Figures';
      const empty = sections.filter((s) => {
        const at = text.indexOf(`\n## ${s}\n`);
        const next = text.indexOf('\n## ', at + 1);
        return text.slice(at + s.length + 5, next < 0 ? undefined : next).trim() === '';
      });
      if (JSON.stringify(shape) !== JSON.stringify(expected) || !figuresLast || empty.length > 0)
        wrong.push(
          `${file}: ${sections.join(', ') || 'no sections'}${empty.length ? ` (empty: ${empty.join(', ')})` : ''}`,
        );
    }
    assert.deepEqual(wrong, [], 'records without the Context / Decision / Consequences shape');
  });
});

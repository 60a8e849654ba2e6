import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { metricsOf } from '../../scripts/docs/catalogs.js';
import { generatedPages } from '../../scripts/docs/index.js';
import { optionsMarkdown } from '../../scripts/docs/options.js';
import { ALL_OPTIONS } from '../../src/config/index.js';
import { REPO_ROOT, startHookd } from '../helpers/hookd.js';

// The reference pages are made from the code (scripts/docs/); a page on disk that differs from
// what the code makes now is stale, and this names it with its first differing line.

function firstDifference(want: string, have: string): string {
  const a = want.split('\n');
  const b = have.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i])
      return `line ${i + 1}: the code makes\n  ${a[i] ?? '(nothing)'}\nthe page has\n  ${b[i] ?? '(nothing)'}`;
  }
  return 'no difference';
}

describe('the generated reference pages', () => {
  for (const page of generatedPages(REPO_ROOT)) {
    it(`${page.path} is what the code makes (else: npm run docs)`, () => {
      const file = join(REPO_ROOT, page.path);
      assert.ok(existsSync(file), `${page.path} is missing: run npm run docs`);
      const have = readFileSync(file, 'utf8');
      const want = page.render(have);
      assert.ok(want === have, `${page.path} is stale (run npm run docs): ${firstDifference(want, have)}`);
    });
  }

  it('a changed default makes the options page stale', () => {
    const page = optionsMarkdown();
    const changed = ALL_OPTIONS.map((o) => (o.key === 'listen' ? { ...o, default: '127.0.0.1:9999' } : o));
    const other = optionsMarkdown(changed);
    assert.notEqual(other, page);
    assert.match(other, /`127\.0\.0\.1:9999`/);
  });

  it('every option of the table has its section, variable, key and rule on the page', () => {
    const page = readFileSync(join(REPO_ROOT, 'docs', 'reference', 'options.md'), 'utf8');
    for (const o of ALL_OPTIONS) {
      const at = page.indexOf(`## \`${o.flag}\``);
      assert.ok(at > 0, `no section for ${o.flag}`);
      const end = page.indexOf('\n## ', at + 1);
      const section = page.slice(at, end < 0 ? undefined : end);
      assert.ok(section.includes(`\`${o.env}\``), `${o.flag}: ${o.env}`);
      assert.ok(section.includes(`\`${o.fileKey}\``), `${o.flag}: ${o.fileKey}`);
      assert.match(section, /\| Rule \| \S/, `${o.flag}: a rule`);
    }
  });

  it('the metrics page has every hookd metric a running daemon serves', async () => {
    const declared = new Set(metricsOf(REPO_ROOT).map((m) => m.name));
    const d = await startHookd();
    try {
      const text = await (await fetch(`${d.opsUrl}/metrics`)).text();
      const served = [...text.matchAll(/^# TYPE (hookd_\S+)/gm)].map((m) => m[1]!);
      // prom-client's own process and Node.js metrics carry the prefix too; the page names them as a group.
      const ours = served.filter((n) => !/^hookd_(process_|nodejs_)/.test(n));
      assert.ok(ours.length > 15, `metrics served: ${ours.join(' ')}`);
      const missing = ours.filter((n) => !declared.has(n));
      assert.deepEqual(missing, [], 'served but not found in src/ by the generator');
    } finally {
      await d.close();
    }
  });
});

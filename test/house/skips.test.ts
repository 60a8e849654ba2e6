import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { required, requiredError, requireOrSkip, skipReason } from '../helpers/require.js';

// The suite's skip policy (docs/DECISIONS.md "The suite cannot stay green by skipping"): a test
// skips only through test/helpers/require.ts, which turns every skip into a failure under
// HOOKD_REQUIRE_ALL=1. A skip written any other way would stay quiet in CI: this finds one.
const here = dirname(fileURLToPath(import.meta.url));
const ROOT = [join(here, '..', '..'), join(here, '..', '..', '..')].find((d) =>
  existsSync(join(d, 'test', 'helpers', 'require.ts')),
)!;
const TEST = join(ROOT, 'test');
const HELPER = join(TEST, 'helpers', 'require.ts');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') ? [p] : [];
  });
}

/** Ways to skip that bypass the helper: `t.skip(…)`, `.skip(…)`, `.todo(…)`, a literal `skip:` or `todo:`. */
const BYPASS = [
  /\bt\.skip\(/,
  /\.(skip|todo)\(/,
  /\bskip:\s*(['"`]|!|true\b|[^,}\s]+\s*\?)/,
  /\btodo:/,
  /console\.log\(`# SKIPPED/,
];

describe('the skip policy', () => {
  it('no test skips except through test/helpers/require.ts', () => {
    const found: string[] = [];
    for (const file of sources(TEST)) {
      if (file === HELPER || relative(TEST, file) === join('house', 'skips.test.ts')) continue;
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (line.trim().startsWith('//') || line.trim().startsWith('*')) return;
        if (BYPASS.some((re) => re.test(line)))
          found.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    assert.deepEqual(found, [], 'skip through skipReason or requireOrSkip (test/helpers/require.ts)');
  });

  it('under HOOKD_REQUIRE_ALL=1 a skip is a failure naming the reason; without it, a skip with the reason', () => {
    const saved = { all: process.env.HOOKD_REQUIRE_ALL, pg: process.env.HOOKD_REQUIRE_POSTGRES };
    try {
      process.env.HOOKD_REQUIRE_ALL = '1';
      assert.equal(required(), true);
      assert.throws(() => skipReason('zsh is not installed'), /zsh is not installed \(HOOKD_REQUIRE_ALL=1/);
      assert.throws(() => requireOrSkip({ skip: () => undefined }, 'no root'), /no root/);
      assert.equal(skipReason(undefined), undefined, 'nothing missing: no skip, no failure');
      delete process.env.HOOKD_REQUIRE_ALL;
      process.env.HOOKD_REQUIRE_POSTGRES = '1';
      assert.equal(required('postgres'), true);
      assert.equal(required('tool'), false, 'the PostgreSQL flag alone lets other tools skip');
      assert.match(requiredError('PostgreSQL not reachable', 'postgres').message, /HOOKD_REQUIRE_POSTGRES=1/);
      delete process.env.HOOKD_REQUIRE_POSTGRES;
      let skipped = '';
      requireOrSkip(
        {
          skip: (m?: string) => {
            skipped = m ?? '';
          },
        },
        'groff is not installed',
      );
      assert.equal(skipped, 'groff is not installed');
      assert.equal(skipReason('(a missing tool, for this check)'), '(a missing tool, for this check)');
    } finally {
      for (const [k, v] of [
        ['HOOKD_REQUIRE_ALL', saved.all],
        ['HOOKD_REQUIRE_POSTGRES', saved.pg],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

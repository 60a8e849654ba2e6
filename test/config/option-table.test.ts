import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { HookdConfig } from '../../src/config/config.js';
import { IDENTITY_OPTIONS } from '../../src/config/identity-options.js';
import { loadConfig } from '../../src/config/load-config.js';
import { ALL_OPTIONS } from '../../src/config/options.js';
import { buildHookdCommand } from '../../src/daemon/main.js';
import { diffConfig, HOT_KEYS, RESTART_KEYS } from '../../src/daemon/reload.js';
import { packageInfo } from '../../src/util/package-info.js';

// Issue 27: the option table is the one place an option is declared; what is derived from it or
// written beside it (reload classes, --help, the README's option table) is checked against it.

const ROOT = packageInfo().root;
const base = (): HookdConfig => loadConfig({ flags: { dataDir: '/tmp/hookd-option-table' }, env: {} });

describe('the option table', () => {
  it('every config key has exactly one reload class', () => {
    const keys = new Set<string>([...ALL_OPTIONS.map((o) => o.key), ...Object.keys(base())]);
    keys.delete('configFile');
    keys.delete('config');
    for (const k of keys) {
      const hot = (HOT_KEYS as readonly string[]).includes(k);
      const restart = (RESTART_KEYS as readonly string[]).includes(k);
      assert.ok(hot !== restart, `${k}: hot ${hot}, restart ${restart}`);
    }
    for (const k of Object.keys(base())) {
      if (k === 'configFile') continue;
      assert.ok(
        ALL_OPTIONS.some((o) => o.key === k),
        `${k} is a config key no option declares`,
      );
    }
  });

  it('a reload tells the truth for every key: idempotencyTtl and tracing need a restart', () => {
    const before = base();
    const after: HookdConfig = {
      ...before,
      idempotencyTtlMs: before.idempotencyTtlMs + 1000,
      tracing: !before.tracing,
      tracingEndpoint: 'http://127.0.0.1:4318/v1/traces',
      logLevel: 'debug',
    };
    const r = diffConfig(before, after);
    assert.deepEqual(r.applied, ['logLevel']);
    assert.deepEqual([...r.restartRequired].sort(), ['idempotencyTtlMs', 'tracing', 'tracingEndpoint']);
  });

  it('hookd --help lists every option', () => {
    const help = buildHookdCommand().helpInformation();
    for (const o of ALL_OPTIONS) assert.ok(help.includes(o.flag.split(' ')[0]!), o.flag);
  });

  it("the README's option table agrees with it, and has a row for every option but identity's", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Configuration'));
    const rows = section
      .slice(0, section.indexOf('\n\n', section.indexOf('| Flag |')))
      .split('\n')
      .filter((l) => l.startsWith('| `--'));
    assert.ok(rows.length > 20, `README option rows: ${rows.length}`);
    const listed = new Set<string>();
    for (const row of rows) {
      const [flagCell, envCell, keyCell] = row.split(' | ');
      const flag = /`(--[a-z-]+)/.exec(flagCell!)![1]!;
      const o = ALL_OPTIONS.find((x) => x.flag.split(' ')[0] === flag);
      assert.ok(o, `README lists ${flag}, which is no option`);
      assert.ok(envCell!.includes(`\`${o.env}`), `${flag}: README says ${envCell}, the table ${o.env}`);
      assert.ok(
        keyCell!.includes(`\`${o.fileKey}\``),
        `${flag}: README says ${keyCell}, the table ${o.fileKey}`,
      );
      listed.add(flag);
    }
    const documentedElsewhere = new Set(IDENTITY_OPTIONS.map((o) => o.flag.split(' ')[0]!));
    for (const o of ALL_OPTIONS) {
      const flag = o.flag.split(' ')[0]!;
      if (documentedElsewhere.has(flag)) continue;
      assert.ok(listed.has(flag), `README's option table has no row for ${flag}`);
    }
  });
});

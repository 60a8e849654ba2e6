import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pino, { type Logger } from 'pino';
import type { HookdConfig } from '../../src/config/config.js';
import { loadConfig } from '../../src/config/load-config.js';
import { ALL_OPTIONS, IDENTITY_OPTIONS, type NamedOption } from '../../src/config/options.js';
import { configReloader, diffConfig, HOT_KEYS, RESTART_KEYS } from '../../src/daemon/reload.js';
import { RuntimeSettings } from '../../src/daemon/runtime-settings.js';
import { DEFAULT_AUTO_DISABLE } from '../../src/delivery/auto-disable.js';
import { DEFAULT_LIMITS } from '../../src/delivery/fairness.js';
import { DEFAULT_FAULT_BUFFER } from '../../src/delivery/group-commit.js';
import { STANDARD_WEBHOOKS_SCHEDULE } from '../../src/delivery/retry-policy.js';
import { buildHookdCommand } from '../../src/hookd-cli/main.js';
import {
  DEFAULT_FORWARD_TIMEOUT_MS,
  DEFAULT_FORWARD_TTL_MS,
  DEFAULT_FORWARD_USER_HEADER,
} from '../../src/identity/forward-auth-provider.js';
import { DEFAULT_SOCKET_MODE } from '../../src/ops/listen.js';
import { packageInfo } from '../../src/util/package-info.js';

// The option table is the one place an option is declared; what is derived from it or
// written beside it (reload classes, --help, the README's option table) is checked against it.

const ROOT = packageInfo().root;
/** A row of the option reference's summary table (docs/reference/options.md, generated). */
const OPTION_ROW = /^\| \[?`--/;
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

  it("the option reference's table agrees with it, and has a row for every option but identity's", () => {
    const readme = readFileSync(join(ROOT, 'docs', 'reference', 'options.md'), 'utf8');
    const section = readme.slice(readme.indexOf('# Options of hookd'));
    const rows = section
      .slice(0, section.indexOf('\n\n', section.indexOf('| Flag |')))
      .split('\n')
      .filter((l) => OPTION_ROW.test(l));
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

/** How the docs state an option's default: its `shownDefault`, else its `default` as written. */
function shownDefault(o: NamedOption): string | undefined {
  if (o.shownDefault !== undefined) return o.shownDefault;
  if (Array.isArray(o.default)) return o.default.length > 0 ? o.default.join(',') : undefined;
  return o.default === undefined || typeof o.default === 'function' ? undefined : String(o.default);
}

/** The paragraph of hookd.8's OPTIONS section that describes `flag` (roff's `\-` undone). */
function manParagraph(flag: string): string | undefined {
  const page = readFileSync(join(ROOT, 'man', 'hookd.8'), 'utf8').replaceAll('\\-', '-');
  const options = page.slice(page.indexOf('\n.SH OPTIONS'), page.indexOf('\n.SH COMMANDS'));
  return options
    .split('\n.TP\n')
    .find((p) => new RegExp(`^\\.B[IR]? ${flag}(\\s|$)`).test(p))
    ?.replace(/\n\.[A-Z]+ ?/g, ' ');
}

describe('defaults in the option table', () => {
  it('an option left out gets its default, passed through its own rule', () => {
    const cfg = loadConfig({ env: {} }) as unknown as Record<string, unknown>;
    for (const o of ALL_OPTIONS) {
      if (o.default === undefined) {
        assert.equal(cfg[o.key], undefined, `${o.key} has no default, so it stays out of the config`);
      } else {
        const written = typeof o.default === 'function' ? o.default({}) : o.default;
        assert.deepEqual(cfg[o.key], o.parse(written), `${o.key}: the default as written, parsed`);
      }
    }
    // The identity tuning's defaults belong to its provider, so an unset key must stay unset.
    assert.ok(ALL_OPTIONS.filter((o) => o.default === undefined && o.shownDefault !== undefined).length > 5);
  });

  it("--help, the option reference's table and hookd.8 state each option's default", () => {
    const readme = readFileSync(join(ROOT, 'docs', 'reference', 'options.md'), 'utf8');
    const rows = readme.split('\n').filter((l) => OPTION_ROW.test(l));
    const help = buildHookdCommand().helpInformation().replace(/\s+/g, ' ');
    let checked = 0;
    const missing: string[] = [];
    for (const o of ALL_OPTIONS) {
      const shown = shownDefault(o);
      const flag = o.flag.split(' ')[0]!;
      // A switch (--no-events, --console-on-proxy) states its default by its name.
      if (shown === undefined || typeof o.default === 'boolean') continue;
      if (!help.includes(shown)) missing.push(`hookd --help does not give ${flag}'s default ${shown}`);
      const row = rows.find((r) => new RegExp(`^\\| \\[?\`${flag}[ \`]`).test(r));
      if (row !== undefined) {
        const cell = row.split(' | ')[3]!;
        if (!cell.includes(shown))
          missing.push(`README gives ${flag}'s default as ${cell}, the table ${shown}`);
      }
      if (!manParagraph(flag)?.includes(shown))
        missing.push(`hookd.8 does not give ${flag}'s default ${shown}`);
      checked++;
    }
    assert.deepEqual(missing, []);
    assert.ok(checked > 25, `defaults checked: ${checked}`);
  });
});

/**
 * What each hot key does to the running daemon, read back from the parts a reload changes: a
 * key the table marks hot must have a probe here, and the probe must see the new value.
 */
const HOT_PROBES: Record<
  string,
  { value: unknown; seen(s: RuntimeSettings, cfg: HookdConfig, log: Logger): boolean }
> = {
  eventsEnabled: { value: false, seen: (s) => s.eventsEnabled === false },
  allowCallbackNets: { value: ['10.9.0.0/16'], seen: (s) => s.policy.check('10.9.8.7').allowed },
  publicBaseUrl: {
    value: 'https://hooks.example',
    seen: (s) => s.reportBase('x') === 'https://hooks.example',
  },
  trustedProxies: { value: ['10.7.0.1'], seen: (s) => s.trusts('10.7.0.1') },
  logLevel: { value: 'debug', seen: (_s, _c, log) => log.level === 'debug' },
  // Read by close() from the reloader's current configuration.
  shutdownTimeoutMs: { value: 1234, seen: (_s, cfg) => cfg.shutdownTimeoutMs === 1234 },
  redactQueryParams: {
    value: ['code'],
    seen: (s) => s.redactUri('/a?code=1&token=2') === '/a?code=REDACTED&token=2',
  },
};

describe('a reload tells the truth for every key', () => {
  for (const o of ALL_OPTIONS) {
    it(`${o.key} (${o.reload ?? 'restart'})`, async () => {
      const before = base();
      const probe = HOT_PROBES[o.key];
      if (o.reload === 'hot') assert.ok(probe, `hot key ${o.key} has no probe in HOT_PROBES`);
      // A restart key's new value only has to differ: a reload must not read it.
      const value = probe?.value ?? { changed: o.key };
      const after = { ...before, [o.key]: value } as HookdConfig;
      const settings = new RuntimeSettings(before);
      const log = pino({ level: before.logLevel });
      const reloader = configReloader(before, settings, log, () => after);
      const r = await reloader.reload();
      if (o.reload === 'hot') {
        assert.deepEqual(r, { applied: [o.key], restartRequired: [] });
        assert.deepEqual(reloader.current()[o.key as keyof HookdConfig], value);
        assert.ok(
          probe!.seen(settings, reloader.current(), log),
          `${o.key}: the running daemon does not use it`,
        );
      } else {
        assert.deepEqual(r, { applied: [], restartRequired: [o.key] });
        assert.deepEqual(
          reloader.current()[o.key as keyof HookdConfig],
          before[o.key as keyof HookdConfig],
          `${o.key}: kept at its running value`,
        );
      }
    });
  }
});

describe('hookd.8 lists every option as an item of its own', () => {
  it('in ENVIRONMENT and CONFIGURATION FILE, each variable and key starts an item (.TP)', () => {
    const page = readFileSync(join(ROOT, 'man', 'hookd.8'), 'utf8');
    const section = (name: string) =>
      page.slice(page.indexOf(`\n.SH ${name}`), page.indexOf('\n.SH ', page.indexOf(`\n.SH ${name}`) + 4));
    const env = section('ENVIRONMENT');
    const file = section('CONFIGURATION FILE');
    const missing: string[] = [];
    for (const o of ALL_OPTIONS) {
      // Without .TP the entry is run into the one before it, and groff does not warn.
      if (!env.includes(`\n.TP\n.B ${o.env}\n`)) missing.push(`ENVIRONMENT ${o.env}`);
      if (!file.includes(`\n.TP\n.B ${o.fileKey}\n`)) missing.push(`CONFIGURATION FILE ${o.fileKey}`);
    }
    assert.deepEqual(missing, []);
  });
});

/**
 * The defaults features apply to a key left out of the config (so that "not given" stays
 * visible), in the config's form: the table's `shownDefault` must be the same value.
 */
const FEATURE_DEFAULTS: Record<string, unknown> = {
  retrySchedule: STANDARD_WEBHOOKS_SCHEDULE.delaysMs.map((ms) => ms / 1000),
  autoDisableAfterMs: DEFAULT_AUTO_DISABLE.periodMs,
  autoDisableFailures: DEFAULT_AUTO_DISABLE.minFailures,
  deliveryConcurrency: DEFAULT_LIMITS.concurrency,
  deliveryPerHost: DEFAULT_LIMITS.perHost,
  deliveryPerEndpoint: DEFAULT_LIMITS.perEndpoint,
  storeFaultBuffer: DEFAULT_FAULT_BUFFER,
  // Written inline where they are applied (jwt-provider.ts, verification/wiring.ts).
  identityJwtUserClaim: 'sub',
  callbackVerification: 'off',
  identityForwardUserHeader: DEFAULT_FORWARD_USER_HEADER,
  identityForwardTtlMs: DEFAULT_FORWARD_TTL_MS,
  identityForwardTimeoutMs: DEFAULT_FORWARD_TIMEOUT_MS,
  listenMode: DEFAULT_SOCKET_MODE,
};

describe('defaults a feature applies', () => {
  it("are the ones the table shows (read as a user's text, through the option's rule)", () => {
    const applied = ALL_OPTIONS.filter((o) => o.default === undefined && o.shownDefault !== undefined);
    assert.deepEqual(applied.map((o) => o.key).sort(), Object.keys(FEATURE_DEFAULTS).sort());
    for (const o of applied) {
      assert.deepEqual(o.parse(o.fromText(o.shownDefault!)), FEATURE_DEFAULTS[o.key], o.key);
    }
  });
});

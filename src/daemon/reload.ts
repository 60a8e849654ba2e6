import type { Logger } from 'pino';
import type { HookdConfig } from '../config/index.js';
import { ALL_OPTIONS } from '../config/index.js';
import { HookdError } from '../errors/index.js';
import { CidrError } from '../policy/index.js';
import type { RuntimeSettings } from './runtime-settings.js';

/**
 * Options a running hookd applies on reload; every other key needs a restart (they built a part:
 * a socket, a file, a pool). Both lists come from the option table (config/options.ts `reload`),
 * so a key's reload class is declared where the key is.
 */
export const HOT_KEYS: readonly (keyof HookdConfig)[] = ALL_OPTIONS.filter((o) => o.reload === 'hot').map(
  (o) => o.key as keyof HookdConfig,
);

export const RESTART_KEYS: readonly (keyof HookdConfig)[] = ALL_OPTIONS.filter(
  (o) => o.reload !== 'hot' && o.key !== 'config',
).map((o) => o.key as keyof HookdConfig);

export interface ReloadResult {
  /** Keys whose new value is now in force. */
  applied: string[];
  /** Keys that changed but only take effect after a restart. */
  restartRequired: string[];
}

/** Which keys differ between two configurations, split by whether they can be applied live. */
export function diffConfig(before: HookdConfig, after: HookdConfig): ReloadResult {
  const same = (k: keyof HookdConfig) => JSON.stringify(before[k]) === JSON.stringify(after[k]);
  // A key in no list (none today; the option-table test keeps it so) would be reported as needing
  // a restart rather than silently recorded as in force.
  const listed = new Set<string>([...HOT_KEYS, ...RESTART_KEYS, 'configFile']);
  const unlisted = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (k) => !listed.has(k),
  );
  return {
    applied: HOT_KEYS.filter((k) => !same(k)),
    restartRequired: [...RESTART_KEYS, ...(unlisted as (keyof HookdConfig)[])].filter((k) => !same(k)),
  };
}

/**
 * The reload of a running daemon (SIGHUP, `POST /reload`): reads the configuration again, applies
 * the hot keys and keeps the running value of the others, so that `config` says what is in force.
 */
export function configReloader(
  initial: HookdConfig,
  settings: RuntimeSettings,
  log: Logger,
  readConfig?: () => HookdConfig,
  /** Told of a configuration once the settings took it (parts that keep a copy of a hot key). */
  applied?: (next: HookdConfig) => void,
): { current(): HookdConfig; reload(): Promise<ReloadResult> } {
  let current = initial;
  const reload = async (): Promise<ReloadResult> => {
    try {
      const next = (readConfig ?? (() => current))();
      settings.apply(next);
      applied?.(next);
      log.level = next.logLevel;
      const result = diffConfig(current, next);
      // Keys that need a restart keep their running value, so `config` says what is in force.
      const kept = Object.fromEntries(
        result.restartRequired.map((k) => [k, current[k as keyof HookdConfig]]),
      );
      current = { ...next, ...kept };
      log.info(result, 'configuration reloaded');
      return result;
    } catch (err) {
      const message = err instanceof CidrError ? `allowCallbackNets: ${err.message}` : (err as Error).message;
      log.warn({ err: message }, 'reload refused; the running configuration is kept');
      throw new HookdError(
        'BAD_REQUEST',
        `the new configuration is invalid, so the running one is kept: ${message}`,
      );
    }
  };
  return { current: () => current, reload };
}

import type { Logger } from 'pino';
import type { HookdConfig } from '../config/config.js';
import { HookdError } from '../errors/catalog.js';
import { CidrError } from '../policy/address-policy.js';
import type { RuntimeSettings } from './runtime-settings.js';

/** Options a running hookd applies on reload; the others need a restart (they own sockets or files). */
export const HOT_KEYS = [
  'eventsEnabled',
  'allowCallbackNets',
  'publicBaseUrl',
  'trustedProxies',
  'logLevel',
  'shutdownTimeoutMs',
  'redactQueryParams',
] as const satisfies readonly (keyof HookdConfig)[];

export const RESTART_KEYS = [
  'listen',
  'dataDir',
  'upstream',
  'apiBase',
  'bodyLimit',
  'upstreamTimeoutMs',
  'retrySchedule',
  'databaseUrl',
  'clusterLeaseMs',
  'identityJwtJwksUrl',
  'identityJwtKeyFile',
  'identityJwtIssuer',
  'identityJwtAudience',
  'identityJwtUserClaim',
  'identityJwtScopesClaim',
  'identityHeader',
  'identityForwardUrl',
  'identityForwardUserHeader',
  'identityForwardTtlMs',
  'identityForwardTimeoutMs',
  'identityRefuseUnknownUsers',
  'deliveryConcurrency',
  'deliveryPerHost',
  'deliveryPerEndpoint',
  'storeFaultBuffer',
  'autoDisableAfterMs',
  'autoDisableFailures',
  'consoleEnabled',
  'opsListen',
  'logFormat',
] as const satisfies readonly (keyof HookdConfig)[];

export interface ReloadResult {
  /** Keys whose new value is now in force. */
  applied: string[];
  /** Keys that changed but only take effect after a restart. */
  restartRequired: string[];
}

/** Which keys differ between two configurations, split by whether they can be applied live. */
export function diffConfig(before: HookdConfig, after: HookdConfig): ReloadResult {
  const same = (k: keyof HookdConfig) => JSON.stringify(before[k]) === JSON.stringify(after[k]);
  return {
    applied: HOT_KEYS.filter((k) => !same(k)),
    restartRequired: RESTART_KEYS.filter((k) => !same(k)),
  };
}

/**
 * The reload of a running daemon (SIGHUP, `POST /reload`): reads the configuration again, applies
 * the hot keys and keeps the running value of the others, so that `config` says what is in force.
 * Moved out of createHookd (issue 27).
 */
export function configReloader(
  initial: HookdConfig,
  settings: RuntimeSettings,
  log: Logger,
  readConfig?: () => HookdConfig,
): { current(): HookdConfig; reload(): Promise<ReloadResult> } {
  let current = initial;
  const reload = async (): Promise<ReloadResult> => {
    try {
      const next = (readConfig ?? (() => current))();
      settings.apply(next);
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

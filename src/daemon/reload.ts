import type { HookdConfig } from '../config/config.js';

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
  'callbackProxy',
  'callbackProxyCredentialsFile',
  'callbackVerification',
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

import type { OptionValues } from './options.js';

export { DEFAULT_CLUSTER_LEASE_MS } from './options/cluster.js';
export { DEFAULT_LISTEN } from './options/core.js';
export { DEFAULT_CONSOLE_LISTEN, DEFAULT_IDEMPOTENCY_TTL_MS, DEFAULT_OPS_LISTEN } from './options/ops.js';
export type { ListenAddress } from './options/values.js';

/**
 * The daemon's configuration after flags, `HOOKD_*` variables, the config file and defaults are
 * merged: one field per option of the table (src/config/options/, where each field is documented),
 * present when given or when the option has a default.
 */
export type HookdConfig = OptionValues & {
  /** The config file these values came from, if any (reloads read it again). */
  configFile?: string;
  /**
   * How long an early answer reads the body its client is still sending (src/linger/); not an
   * option: hookd's own bounds, shortened only by tests. Absent: 30 s in all, 5 s of silence.
   */
  linger?: { totalMs: number; silenceMs: number };
};

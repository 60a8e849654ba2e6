import { CALLBACK_CHECKS, CALLBACK_OPTIONS } from './options/callbacks.js';
import { CLUSTER_OPTIONS, DELIVERY_OPTIONS } from './options/cluster.js';
import { CORE_OPTIONS } from './options/core.js';
import { FILTER_OPTIONS } from './options/filters.js';
import { IDENTITY_CHECKS, IDENTITY_OPTIONS as IDENTITY_TABLE } from './options/identity.js';
import { OPERATOR_OPTIONS, OPS_CHECKS, OPS_OPTIONS } from './options/ops.js';
import { PORTAL_OPTIONS } from './options/portal.js';
import type { ConfigOf, CrossCheck, NamedOption, OptionSpec } from './options/spec.js';

export type { CrossCheck, NamedOption, OptionSpec } from './options/spec.js';

/**
 * The option table: every daemon option once, by area (src/config/options/). Its order is the
 * order of `hookd --help`.
 */
export const OPTION_TABLE = {
  ...CORE_OPTIONS,
  ...CLUSTER_OPTIONS,
  ...DELIVERY_OPTIONS,
  ...IDENTITY_TABLE,
  ...OPERATOR_OPTIONS,
  ...OPS_OPTIONS,
  ...PORTAL_OPTIONS,
  ...CALLBACK_OPTIONS,
  ...FILTER_OPTIONS,
} as const;

/** The config's values as the table makes them (config.ts adds what is not an option). */
export type OptionValues = ConfigOf<typeof OPTION_TABLE>;

const named = (table: Record<string, OptionSpec>): readonly NamedOption[] =>
  Object.entries(table).map(([key, spec]) => ({ key, ...spec }));

/** Every daemon option: what flags, `HOOKD_*` variables and config file keys are read from (man hookd lists them all). */
export const ALL_OPTIONS: readonly NamedOption[] = named(OPTION_TABLE);

/** The identity options (documented in the README's identity section rather than its option table). */
export const IDENTITY_OPTIONS: readonly NamedOption[] = named(IDENTITY_TABLE);

/** The checks between options, run once each option is parsed. */
export const CROSS_CHECKS: readonly CrossCheck[] = [...OPS_CHECKS, ...IDENTITY_CHECKS, ...CALLBACK_CHECKS];

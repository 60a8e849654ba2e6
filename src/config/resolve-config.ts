import type { HookdConfig } from './config.js';
import { ConfigError } from './config-error.js';
import { Refused } from './options/spec.js';
import { ALL_OPTIONS, CROSS_CHECKS, type NamedOption } from './options.js';

/** Values as given, by file key, with where each came from (a flag, a variable, the file's key). */
export type RawValues = Record<string, { value: unknown; from: string }>;

const BY_KEY = new Map<string, NamedOption>(ALL_OPTIONS.map((o) => [o.key, o]));

/**
 * Checks and merges the values through the option table: each given value passes its option's
 * rule, each option not given gets its default (passed through the same rule), then the checks
 * between options run. Every problem is added to `problems` (the caller throws them all at once);
 * a refused value falls back to its default so that the other keys are still checked.
 */
export function resolveConfig(raw: RawValues, env: NodeJS.ProcessEnv, problems: string[]): HookdConfig {
  const out: Record<string, unknown> = {};
  const refused = new Set<string>();
  const sourceOf = (key: string) => raw[BY_KEY.get(key)?.fileKey ?? key]?.from;
  const problem = (key: string, rule: string) =>
    problems.push(`${sourceOf(key) ?? BY_KEY.get(key)?.fileKey ?? key}: ${rule}`);
  for (const o of ALL_OPTIONS) {
    const given = raw[o.fileKey];
    if (given !== undefined) {
      try {
        out[o.key] = o.parse(given.value);
        continue;
      } catch (e) {
        if (!(e instanceof Refused)) throw e;
        problem(o.key, e.rule);
        refused.add(o.key);
      }
    }
    if (o.default !== undefined) out[o.key] = o.parse(defaultOf(o, env));
  }
  const fatal = (message: string): never => {
    throw new ConfigError(message);
  };
  for (const check of CROSS_CHECKS)
    check(out, { given: sourceOf, refused: (k) => refused.has(k), problem, fatal });
  return out as HookdConfig;
}

/** An option's default as a user would write it (some depend on the environment). */
export function defaultOf(o: NamedOption, env: NodeJS.ProcessEnv): unknown {
  return typeof o.default === 'function'
    ? (o.default as (env: NodeJS.ProcessEnv) => unknown)(env)
    : o.default;
}

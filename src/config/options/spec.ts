/**
 * One daemon option, declared once: its config-file key, flag, `HOOKD_*` variable, help, how to
 * read it from text, its rule and default, and its reload class. Flags, environment, config file,
 * the config's type (config.ts), `--help`, the reload classes and the docs' checks all follow from
 * the table made of these (docs/DECISIONS.md "Option table").
 */
export interface OptionSpec<V = unknown> {
  /** Key in the JSON config file (dotted for nesting). */
  fileKey: string;
  flag: string;
  env: string;
  /** The `--help` text; it names the default (a test checks it does). */
  description: string;
  /** Turns a value given as text (flag or variable) into the file's JSON form. */
  fromText: (text: string) => unknown;
  repeatable?: boolean;
  /**
   * Whether a reload (SIGHUP, `POST /reload`) applies a new value to the running daemon ('hot'),
   * or it only takes effect at the next start (the default: the value was used to build a part).
   */
  reload?: 'hot';
  /**
   * Checks a given value (in the file's JSON form) and turns it into the config's; throws
   * `Refused` with the rule it breaks (the loader prefixes where the value came from).
   */
  parse: (value: unknown) => V;
  /**
   * The value in force when the option is not given, written as a user would write it; the loader
   * passes it through `parse`, so it obeys the option's own rule. A function when it depends on
   * the environment. Without one, the key stays out of the config when not given.
   */
  default?: unknown;
  /**
   * How the README, the man page and `--help` state the default when it is not `default` itself
   * (it depends on the environment), or when the feature applies it to an absent key (so that it
   * can tell "not given" apart, e.g. identity tuning only with its provider).
   */
  shownDefault?: string;
}

/** An option with its config key, as flags, variables and reload read the table. */
export interface NamedOption extends OptionSpec {
  key: string;
}

/** The problem of a value an option refuses: the rule, without the source. */
export class Refused extends Error {
  constructor(readonly rule: string) {
    super(rule);
    this.name = 'Refused';
  }
}

export function refuse(rule: string): never {
  throw new Refused(rule);
}

/**
 * Checks between options (a socket mode needs a socket, one identity provider at most), run once
 * every option is parsed. `given` says where a key's value came from (undefined: not given).
 */
export type CrossCheck = (config: Readonly<Record<string, unknown>>, at: CrossCheckContext) => void;
export interface CrossCheckContext {
  given(key: string): string | undefined;
  refused(key: string): boolean;
  problem(key: string, rule: string): void;
  /** A problem that makes the others moot: reported alone. */
  fatal(problem: string): never;
}

/**
 * The config values of one area's table: a key with a default is always there, a key without
 * one only when given.
 */
export type ConfigOf<T extends Record<string, OptionSpec>> = {
  -readonly [K in keyof T as T[K] extends { default: unknown } ? K : never]: ReturnType<T[K]['parse']>;
} & {
  -readonly [K in keyof T as T[K] extends { default: unknown } ? never : K]?: ReturnType<T[K]['parse']>;
};

export const asList = (t: string): string[] =>
  t
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
export const asBool = (t: string): unknown => {
  const v = t.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  return t;
};
export const asNumber = (t: string): unknown => (/^\s*\d+\s*$/.test(t) ? Number(t) : t);
export const asText = (t: string): unknown => t;

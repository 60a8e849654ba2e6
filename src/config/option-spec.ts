import type { HookdConfig } from './config.js';

/**
 * Every daemon option once: its config-file key, flag and `HOOKD_*` variable, how to read it
 * from text and how to check it. Flags, environment and file are all driven by this table, so an
 * option cannot exist in one place and be missing in another.
 */
export interface OptionSpec {
  key: keyof HookdConfig | 'listen' | 'config';
  /** Key in the JSON config file (dotted for nesting). */
  fileKey: string;
  flag: string;
  env: string;
  description: string;
  /** Parses a value given as text (flag or env) into the file's JSON form. */
  fromText: (text: string) => unknown;
  repeatable?: boolean;
  /**
   * Whether a reload (SIGHUP, `POST /reload`) applies a new value to the running daemon ('hot'),
   * or it only takes effect at the next start (the default: the value was used to build a part).
   */
  reload?: 'hot';
}

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

import { didYouMean } from '../../util/index.js';
import { refuse } from './spec.js';

/** The rules options share; each returns the config's value or throws `Refused` with the rule. */

export const text = (v: unknown): string => (typeof v === 'string' ? v : refuse('must be a string'));

export const wholeNumber =
  (min: number, max: number) =>
  (v: unknown): number =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
      ? v
      : refuse(`must be a whole number from ${min} to ${max}`);

export const trueOrFalse =
  (rule = 'must be true or false') =>
  (v: unknown): boolean =>
    typeof v === 'boolean' ? v : refuse(rule);

export const stringList = (v: unknown): string[] => {
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.some((x) => typeof x !== 'string')) refuse('must be a list of strings');
  return [...(list as string[])];
};

export const oneOf =
  <T extends string>(values: readonly T[]) =>
  (v: unknown): T => {
    const s = text(v);
    return (values as readonly string[]).includes(s)
      ? (s as T)
      : refuse(`must be one of ${values.join(', ')}${didYouMean(s, values)}`);
  };

export function isHttpUrl(s: string): boolean {
  if (!URL.canParse(s)) return false;
  const u = new URL(s);
  return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
}

/** An absolute http(s) URL; `rule` may quote the value. */
export const httpUrl =
  (rule: string | ((s: string) => string) = 'must be an absolute http:// or https:// URL') =>
  (v: unknown): string => {
    const s = text(v);
    return isHttpUrl(s) ? s : refuse(typeof rule === 'string' ? rule : rule(s));
  };

export const UNIT_SECONDS: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86400 };

/** Seconds of `30`, `5m`, `2h`, `1d` (NaN for anything else). */
export function durationSeconds(v: unknown): number {
  const m = typeof v === 'string' ? /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(v.trim()) : null;
  return m ? Number(m[1]) * UNIT_SECONDS[m[2]!]! : Number.NaN;
}

/**
 * A duration given as seconds or `30s`, `15m`, `12h`, `5d`, from `min` to `max` seconds, in ms;
 * `rule` names the range when it is not.
 */
export const durationMs =
  (min: number, max: number, rule: string) =>
  (v: unknown): number => {
    const n = typeof v === 'number' || typeof v === 'string' ? durationSeconds(String(v)) : Number.NaN;
    return n >= min && n <= max ? Math.round(n * 1000) : refuse(rule);
  };

/** Where hookd listens: a TCP address, or a unix socket whose peers are trusted as the front proxy. */
export type ListenAddress = { host: string; port: number } | { path: string };

export function parseListen(text: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  const host = m[1] ?? (m[2] || '0.0.0.0');
  return { host, port };
}

/** Values that switch a side listener (operations, console) off. */
const OFF = new Set(['off', 'none', 'false', '0', '']);

/** A side listener's address, or off (`false` in the file too). */
export const listenerOrOff =
  (example: string) =>
  (v: unknown): { host: string; port: number } | false => {
    if (v === false) return false;
    const s = text(v);
    if (OFF.has(s.trim().toLowerCase())) return false;
    return parseListen(s) ?? refuse(`"${s}" is not HOST:PORT (e.g. ${example}), or off to disable it`);
  };

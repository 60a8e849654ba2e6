import { setTimeout as sleep } from 'node:timers/promises';

/** How long to keep polling, in ms, or that and how often. */
export type Patience = number | { ms?: number; every?: number };

type Truthy<T> = Exclude<T, undefined | null | false | 0 | ''>;

/**
 * The one polling helper of the tests. `until(what, check, patience?)` polls `check` until it
 * returns something truthy and returns that; `until(what, read, ok, patience?)` polls `read` until
 * `ok` holds for its value and returns the value (a timeout then names the last value). Throws
 * naming `what` after `ms` (20 s unless told): a guard against a hanging test, not a measurement.
 */
export function until<T>(
  what: string,
  read: () => T | Promise<T>,
  ok: (v: T) => boolean,
  patience?: Patience,
): Promise<T>;
export function until<T>(what: string, check: () => T | Promise<T>, patience?: Patience): Promise<Truthy<T>>;
export async function until<T>(
  what: string,
  read: () => T | Promise<T>,
  okOrPatience?: ((v: T) => boolean) | Patience,
  patience?: Patience,
): Promise<T> {
  const ok = typeof okOrPatience === 'function' ? okOrPatience : (v: T) => Boolean(v);
  const p = (typeof okOrPatience === 'function' ? patience : okOrPatience) ?? {};
  const { ms = 20_000, every = 10 } = typeof p === 'number' ? { ms: p } : p;
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) {
      const last = typeof okOrPatience === 'function' ? `: still ${JSON.stringify(v)}` : '';
      throw new Error(`timed out waiting for ${what}${last} after ${ms} ms`);
    }
    await sleep(every);
  }
}

/** One labelled value of a Prometheus counter from an ops listener's /metrics; 0 when absent. */
export async function counter(opsUrl: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

/** A counter summed over all its labels (e.g. hookd_hooks_fired_total of both phases); 0 when absent. */
export async function counterSum(opsUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

import { sleep } from './servers.js';

/** Polls `read` until `ok` holds (every 25 ms); throws naming `what` after `ms`. */
export async function until<T>(
  what: string,
  read: () => T | Promise<T>,
  ok: (v: T) => boolean,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)} after ${ms} ms`);
    await sleep(25);
  }
}

/** One labelled value of a Prometheus counter from an ops listener's /metrics; 0 when absent. */
export async function counter(opsUrl: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

import { createHash } from 'node:crypto';
import type { TransportContext } from '../transport.js';
import { failureVerdict, type Verdict } from './failure.js';
import { BrokerLink, type LinkSpec } from './link.js';

/**
 * Every link of one transport instance, one per broker, credentials and whatever else selects a
 * connection (a vhost, a database). Two passwords for one user are two links (one may be wrong);
 * the password is only ever kept as a hash in the key.
 */
export class BrokerLinks<C> {
  readonly #links = new Map<string, BrokerLink<C>>();
  #closed = false;

  constructor(private readonly ctx: TransportContext) {}

  /** The link for `key` and `password`, made from `spec()` on first use. */
  link(key: string, password: string, spec: () => LinkSpec<C>): BrokerLink<C> {
    const full = `${key}\n${createHash('sha256').update(password).digest('base64')}`;
    let link = this.#links.get(full);
    if (link === undefined) {
      link = new BrokerLink(spec(), this.ctx);
      if (this.#closed) void link.close();
      else this.#links.set(full, link);
    }
    return link;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const links = [...this.#links.values()];
    this.#links.clear();
    await Promise.all(links.map((l) => l.close()));
  }
}

/**
 * The connection an attempt sends on, or its verdict when there is none (nothing was sent): the
 * link's failure, or the attempt's end (its time limit or shutdown) while it was connecting, so
 * that an attempt already answered never publishes late.
 */
export async function connectFor<C>(
  link: BrokerLink<C>,
  live: () => boolean,
): Promise<{ conn: C } | { verdict: Verdict }> {
  let conn: C;
  try {
    conn = await link.get();
  } catch (err) {
    return { verdict: failureVerdict(err) };
  }
  if (!live()) return { verdict: { kind: 'retry', text: 'not sent: the attempt ended while connecting' } };
  return { conn };
}

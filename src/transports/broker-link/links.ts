import { createHash } from 'node:crypto';
import type { TransportContext } from '../transport.js';
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

/**
 * The transports hookd knows, by scheme. A new transport is a folder of its own plus one line in
 * `builtinTransports`.
 */
import { amqpTransport } from './amqp/index.js';
import { httpTransport } from './http/http-transport.js';
import { mqttTransport } from './mqtt/index.js';
import { natsTransport } from './nats/index.js';
import { redisTransport } from './redis/index.js';
import type { TransportModule } from './transport.js';

/** Every transport module built in, in the order `--callback-schemes` lists them. */
export const builtinTransports: readonly TransportModule[] = [
  httpTransport,
  amqpTransport,
  mqttTransport,
  natsTransport,
  redisTransport,
];

/** Looks transport modules up by scheme. */
export class TransportRegistry {
  readonly #byScheme = new Map<string, TransportModule>();

  constructor(modules: readonly TransportModule[] = builtinTransports) {
    for (const m of modules) {
      for (const s of m.schemes) {
        if (this.#byScheme.has(s)) throw new Error(`two transports claim the scheme ${s}`);
        this.#byScheme.set(s, m);
      }
    }
  }

  /** The module for a URL's scheme (`amqp:` or `amqp`), or undefined. */
  forScheme(scheme: string): TransportModule | undefined {
    return this.#byScheme.get(scheme.endsWith(':') ? scheme.slice(0, -1) : scheme);
  }

  /**
   * How template values are escaped in a Callback URL of this scheme; undefined when its
   * transport takes none (HTTP) or no transport serves it. `callback` is the URL as written.
   */
  escapeFor(callback: string): ((value: string) => string) | undefined {
    const colon = callback.indexOf(':');
    if (colon <= 0) return undefined;
    const m = this.forScheme(callback.slice(0, colon).toLowerCase());
    return m?.escapeValue === undefined ? undefined : (v) => m.escapeValue!(v);
  }

  /**
   * The transport family of a Callback URL for metrics' `transport` label: its module's first
   * scheme (`https:` and `http:` are both `http`, `amqps:` is `amqp`); `other` when none serves it.
   */
  family(callback: string): string {
    const colon = callback.indexOf(':');
    const m = colon > 0 ? this.forScheme(callback.slice(0, colon).toLowerCase()) : undefined;
    return m?.schemes[0] ?? 'other';
  }

  /** Every scheme served, in registration order. */
  get schemes(): string[] {
    return [...this.#byScheme.keys()];
  }
}

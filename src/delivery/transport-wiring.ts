/**
 * The pipeline's side of the transports: the live transports made with the pipeline's limits and
 * policy, and what a transport's "connection is back" means for the deliveries of that receiver.
 */
import type { Logger } from 'pino';
import { TransportRegistry, TransportSet } from '../transports/index.js';
import type { Delivery } from './delivery.js';
import type { DeliveryLimits } from './limits.js';
import type { SendContext } from './pipeline-options.js';

/** The transports of a pipeline; `onReconnect` is told a receiver key whose connection is back. */
export function transportsOf(
  send: SendContext,
  limits: DeliveryLimits,
  logger: () => Logger,
  onReconnect: (receiverKey: string) => void,
): { registry: TransportRegistry; transports: TransportSet } {
  const registry = send.transports ?? new TransportRegistry();
  const transports = new TransportSet(registry, {
    ...{ policy: send.policy, lookup: send.lookup, perReceiver: limits.perHost },
    ...{ timeoutMs: limits.timeoutMs, connectTimeoutMs: limits.connectTimeoutMs },
    ...(send.tunnel && { tunnel: send.tunnel }),
    log: (level, msg, fields) => logger()[level](fields ?? {}, msg),
    onReconnect,
  });
  return { registry, transports };
}

/**
 * Receivers whose connection is back, as the transports tell it (`told`): the transports are made
 * before the parts that act on it, which listen until the pipeline's lifecycle ends.
 */
export class Reconnects {
  readonly #target = new EventTarget();

  readonly told = (receiverKey: string): void => {
    this.#target.dispatchEvent(new CustomEvent<string>('reconnect', { detail: receiverKey }));
  };

  listen(to: (receiverKey: string) => void, signal: AbortSignal): void {
    this.#target.addEventListener('reconnect', (e) => to((e as CustomEvent<string>).detail), { signal });
  }
}

/**
 * The deliveries of a receiver that its open circuit held back, to go now rather than at their
 * next retry: a broker back within seconds is delivered to within them.
 */
export function* heldByCircuit(
  live: Iterable<Delivery>,
  receiverKey: string,
  shed: (d: Delivery) => boolean,
): Generator<Delivery> {
  for (const d of live) {
    if (d.origin === receiverKey && !d.active && d.status === 'pending' && shed(d)) yield d;
  }
}

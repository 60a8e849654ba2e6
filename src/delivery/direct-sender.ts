import type { Logger } from 'pino';
import { type Dispatcher, request } from 'undici';
import type { FiredEvent, FiredEventSink } from '../engine/fired-event.js';

/** Sends each fired callback once, straight away, through the pinned (SSRF-checked) dispatcher. */
export class DirectSender implements FiredEventSink {
  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly log: Logger,
    private readonly timeoutMs = 15_000,
  ) {}

  accept(events: FiredEvent[]): void {
    for (const e of events) {
      request(e.request.url, {
        method: e.request.method,
        headers: e.request.headers,
        body: e.request.body ?? null,
        dispatcher: this.dispatcher,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      }).then(
        async (res) => {
          await res.body.dump();
          this.log.info({ hookId: e.hookId, status: res.statusCode }, 'callback sent');
        },
        (err: Error) => this.log.warn({ hookId: e.hookId, err: err.message }, 'callback failed'),
      );
    }
  }
}

/**
 * Client certificates (a hook's `Tls`) that end soon: the `hookd_client_certificate_expiry_seconds`
 * gauge for every hook with one, and a `hook.certificate_expiring` notification once per hook and
 * certificate when it is within 14 days of its end: when the hook is saved, at start-up, and daily.
 */
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { clientCertificateOf, EXPIRY_WARNING_MS } from '../client-tls/index.js';
import type { Hook } from '../hook/index.js';
import type { Notifier } from './notifier.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface CertificateExpiryOptions {
  /** The hooks in force (the match engine's): read at scrape time and by the daily check. */
  hooks: () => Iterable<Hook>;
  notifier: Notifier;
  registry: Registry;
  log: Logger;
}

export class CertificateExpiry {
  /** `hookId fingerprint` of the certificates announced already: one notification each. */
  private readonly announced = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: CertificateExpiryOptions) {
    const hooks = opts.hooks;
    new Gauge({
      name: 'hookd_client_certificate_expiry_seconds',
      help: "Seconds until a hook's client certificate (Tls) ends; negative once it has ended",
      labelNames: ['hook'],
      registers: [opts.registry],
      // Every instance sees the same hooks: merged, one value per hook.
      aggregator: 'first',
      collect() {
        this.reset();
        const now = Date.now();
        for (const h of hooks()) {
          const c = h.Tls && clientCertificateOf(h.Tls);
          if (c) this.set({ hook: h.Id }, Math.round((c.notAfterMs - now) / 1000));
        }
      },
    });
  }

  /** Checks every hook now, then once a day. */
  start(): void {
    this.sweep();
    this.timer = setInterval(() => this.sweep(), DAY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** A hook was created or replaced: a certificate near its end is announced now. */
  check(hook: Hook, now: number = Date.now()): void {
    const c = hook.Tls && clientCertificateOf(hook.Tls);
    if (!c || c.notAfterMs - now > EXPIRY_WARNING_MS) return;
    const key = `${hook.Id} ${c.Sha256Fingerprint}`;
    if (this.announced.has(key)) return;
    this.announced.add(key);
    this.opts.log.warn(
      { hookId: hook.Id, owner: hook.Owner, notAfter: c.NotAfter },
      'client certificate expiring',
    );
    void this.opts.notifier
      .publish('hook.certificate_expiring', new Set([hook.Owner]), () => ({
        HookId: hook.Id,
        Owner: hook.Owner,
        Callback: hook.Callback,
        Subject: c.Subject,
        Sha256Fingerprint: c.Sha256Fingerprint,
        NotAfter: c.NotAfter,
        Expired: c.notAfterMs <= now,
      }))
      .catch((err: unknown) =>
        this.opts.log.error({ err }, 'queueing a hook.certificate_expiring notification failed'),
      );
  }

  /** A hook was deleted: its certificates are forgotten. */
  forget(hookId: string): void {
    for (const key of this.announced) if (key.startsWith(`${hookId} `)) this.announced.delete(key);
  }

  private sweep(): void {
    const now = Date.now();
    for (const h of this.opts.hooks()) this.check(h, now);
  }
}

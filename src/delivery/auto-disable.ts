/**
 * Auto-disable on sustained failure: a hook whose every attempt has failed for at least
 * `periodMs` AND at least `minFailures` attempts is disabled (`State: "disabled"` with a
 * `DisabledReason` and `DisabledAt`), like a receiver's 410 Gone disables it at once. It listens
 * to the pipeline's attempt events (delivery-events.ts), so the pipeline itself knows nothing of
 * it; docs/DECISIONS.md "Auto-disable and operational notifications" gives the defaults' reasons.
 */
import type { AttemptMessage } from './delivery-events.js';

export interface AutoDisableOptions {
  /** How long every attempt must have failed, ms; 0 turns auto-disable off (default 5 days). */
  periodMs: number;
  /** How many failed attempts at least, within that streak (default 10). */
  minFailures: number;
}

export const DEFAULT_AUTO_DISABLE: AutoDisableOptions = Object.freeze({
  periodMs: 5 * 24 * 3600 * 1000,
  minFailures: 10,
});

/** Why a hook was disabled: its receiver answered 410 Gone, or it kept failing. */
export type DisableCause = 'gone' | 'failing';

export interface DisableRequest {
  hookId: string;
  cause: DisableCause;
  /** For a person: goes to the hook's `DisabledReason`. */
  reason: string;
  /** `failing`: when the streak began and how many attempts failed in it. */
  failingSince?: number;
  failedAttempts?: number;
}

export interface AutoDisableDeps {
  options: AutoDisableOptions;
  /** False for ids that are not hooks (notification endpoints): they are not tracked. */
  tracks(hookId: string): boolean;
  /**
   * When the hook's newest successful delivery last succeeded, as the (shared) delivery log says,
   * or undefined: asked once before disabling, so that in a cluster a success seen by another
   * instance keeps the hook enabled.
   */
  lastSuccess(hookId: string): Promise<number | undefined>;
  disable(request: DisableRequest): Promise<void>;
  onError?(err: unknown, hookId: string): void;
  now?: () => number;
}

interface Streak {
  since: number;
  failures: number;
  checking: boolean;
}

/** Counts each hook's run of failed attempts and disables the hook once it is long enough. */
export class AutoDisable {
  private readonly streaks = new Map<string, Streak>();
  private readonly now: () => number;

  constructor(private readonly deps: AutoDisableDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Hooks with a failure streak under way (for tests and metrics). */
  get failing(): number {
    return this.streaks.size;
  }

  /** Feeds one attempt (the pipeline's `attempt` event). */
  readonly observe = (m: AttemptMessage): void => {
    const { periodMs, minFailures } = this.deps.options;
    if (periodMs <= 0 || !this.deps.tracks(m.HookId)) return;
    if (m.Outcome === 'succeeded') {
      this.streaks.delete(m.HookId);
      return;
    }
    // Not sent at all (an open circuit, hookd's own failure): says nothing about the receiver.
    if (m.StatusCode === null && m.Error?.startsWith('not sent:')) return;
    // 410 Gone disables through the pipeline at once.
    if (m.StatusCode === 410) return;
    const now = this.now();
    let s = this.streaks.get(m.HookId);
    if (s === undefined) {
      s = { since: Date.parse(m.Time) || now, failures: 0, checking: false };
      this.streaks.set(m.HookId, s);
    }
    s.failures++;
    if (s.checking || s.failures < minFailures || now - s.since < periodMs) return;
    s.checking = true;
    void this.check(m.HookId, s);
  };

  /** The hook was re-enabled, replaced or deleted: its streak starts again. */
  forget(hookId: string): void {
    this.streaks.delete(hookId);
  }

  private async check(hookId: string, s: Streak): Promise<void> {
    try {
      const success = await this.deps.lastSuccess(hookId);
      if (success !== undefined && success >= s.since) {
        // Another instance saw it succeed: the streak restarts from that success.
        s.since = success;
        s.failures = 0;
        return;
      }
      if (this.streaks.get(hookId) !== s) return;
      this.streaks.delete(hookId);
      await this.deps.disable({
        hookId,
        cause: 'failing',
        reason: `every attempt failed for ${duration(this.now() - s.since)} (${s.failures} failed attempts since ${new Date(s.since).toISOString()}); auto-disabled`,
        failingSince: s.since,
        failedAttempts: s.failures,
      });
    } catch (err) {
      this.deps.onError?.(err, hookId);
    } finally {
      s.checking = false;
    }
  }
}

/** `5d 2h`, `3m 10s`, `800 ms`: a duration for a person. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  const parts: string[] = [];
  let rest = ms;
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${name}`);
    rest -= n * size;
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

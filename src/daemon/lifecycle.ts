import type { Logger } from 'pino';

type Stop = () => unknown;

/**
 * The one cleanup list of a running hookd (Caddy's `context.OnCancel`): the code that makes a part
 * registers how to stop it, at once. Shutdown and the rollback of a failed start run the same list
 * in reverse, so that no part is stopped by one and forgotten by the other.
 */
export class Lifecycle {
  private readonly stops: { name: string; stop: Stop }[] = [];
  private deadline = Number.POSITIVE_INFINITY;
  private stopping: Promise<void> | undefined;

  constructor(private readonly log?: Logger) {}

  /** Registers how to stop a part just made; parts stop in the reverse order of their making. */
  defer(name: string, stop: Stop): void {
    if (this.stopping) throw new Error(`${name}: made after shutdown began`);
    this.stops.push({ name, stop });
  }

  /** Milliseconds left of the drain deadline of the stop under way (0 once it has passed). */
  remaining(): number {
    return Math.max(0, this.deadline - Date.now());
  }

  /**
   * Runs every stop once, newest first, each after the previous one settled. A stop that fails is
   * logged and the rest still run (a half-stopped daemon would keep database connections open);
   * the first failure is thrown at the end. `drainMs` is the time the parts share (`remaining()`).
   */
  stop(drainMs: number): Promise<void> {
    this.stopping ??= this.run(drainMs);
    return this.stopping;
  }

  private async run(drainMs: number): Promise<void> {
    this.deadline = Date.now() + drainMs;
    let first: unknown;
    for (const { name, stop } of this.stops.reverse()) {
      try {
        await stop();
      } catch (err) {
        this.log?.warn({ err, part: name }, 'stopping a part failed');
        first ??= err;
      }
    }
    this.stops.length = 0;
    if (first !== undefined) throw first;
  }
}

/**
 * Who is told of changes to the engine's hook set (the workers' copies of the index follow the
 * primary's this way): one call per change as the caller made it, never one per hook of a load.
 */
import type { Hook } from '../hook/index.js';

export interface HookSetObserver {
  /** A hook was added or replaced. */
  saved(hook: Hook): void;
  /** A hook was removed. */
  deleted(id: string): void;
  /** The whole set was replaced (start-up, a resync). */
  loaded(): void;
}

export class HookSetObservers implements HookSetObserver {
  readonly #observers: HookSetObserver[] = [];

  /** Adds an observer; it is told of every later change. */
  observe(o: HookSetObserver): void {
    this.#observers.push(o);
  }

  saved(hook: Hook): void {
    for (const o of this.#observers) o.saved(hook);
  }

  deleted(id: string): void {
    for (const o of this.#observers) o.deleted(id);
  }

  loaded(): void {
    for (const o of this.#observers) o.loaded();
  }
}

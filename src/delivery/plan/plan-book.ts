/**
 * Plans compiled once per version of their subject: a hook's stored object is replaced, never
 * changed, when the hook is saved, so the object is the version and a plan is kept beside it
 * (weakly: an old version's plan goes with it). A subject disabled by a 410 is inactive here at
 * once, before its stored state says so.
 */
import { type DeliveryPlan, type DeliveryPlans, INACTIVE_PLAN } from './delivery-plan.js';

export interface PlanBookOptions<S extends object> {
  /** The subject as it is now (a hook, an endpoint); undefined when there is none. */
  current(subjectId: string): S | undefined;
  compile(subject: S): DeliveryPlan;
  /** Stores a subject's disabled state (410 Gone). */
  store(subjectId: string): Promise<void>;
  /** Told when storing the disabled state failed. */
  onStoreError?(subjectId: string, err: unknown): void;
}

export class PlanBook<S extends object> implements DeliveryPlans {
  readonly #plans = new WeakMap<S, DeliveryPlan>();
  /** Disabled here until the stored state says so itself. */
  readonly #gone = new Set<string>();

  constructor(private readonly opts: PlanBookOptions<S>) {}

  planOf(subjectId: string): DeliveryPlan {
    if (this.#gone.has(subjectId)) return INACTIVE_PLAN;
    const s = this.opts.current(subjectId);
    if (s === undefined) return INACTIVE_PLAN;
    return this.compiled(s);
  }

  /** The plan of this version of a subject, compiled on first use. */
  compiled(s: S): DeliveryPlan {
    let p = this.#plans.get(s);
    if (p === undefined) {
      p = this.opts.compile(s);
      this.#plans.set(s, p);
    }
    return p;
  }

  disable(subjectId: string): boolean {
    if (this.#gone.has(subjectId)) return false;
    this.#gone.add(subjectId);
    this.opts.store(subjectId).then(
      () => this.#gone.delete(subjectId),
      (err: unknown) => this.opts.onStoreError?.(subjectId, err),
    );
    return true;
  }
}

/**
 * Runs hooks' transforms: the event goes in as JSON, the checked outcome comes back. Failures
 * never throw; they say why, prefixed for the delivery log ("Transform: exceeded 50 ms").
 *
 * A transform that hit the time or memory limit runs apart from then on, on a thread of its own
 * (the quarantine), until a run of it succeeds: one hook's runaway function then costs the other
 * hooks' transforms nothing but a share of the machine, instead of a place behind it in the
 * queue at every request.
 */
import { DEFAULT_TRANSFORM_LIMITS, type TransformLimits } from './limits.js';
import { TransformPool } from './pool.js';
import { readOutput, type TransformOutcome } from './transform-output.js';

export interface TransformEvent {
  request: unknown;
  response?: unknown;
  captures: string[];
  hook: { Id: string; Name?: string };
  /** The rendered CallbackContent: JSON-parsed when it is JSON, else the text. */
  payload: unknown;
  callback: { url: string; method: string; headers: Record<string, string> };
}

export interface TransformerOptions {
  limits?: Partial<TransformLimits>;
  /** Threads transforms run in (default 1). */
  threads?: number;
}

/** How long a transform that hit a limit stays in the quarantine without a run that succeeds. */
const QUARANTINE_MS = 10 * 60_000;
/** Sources remembered there at most (the oldest leave first). */
const QUARANTINE_MAX = 1000;

export class Transformer {
  readonly limits: TransformLimits;
  #pool: TransformPool | undefined;
  #quarantine: TransformPool | undefined;
  /** Source text → when its quarantine ends. */
  readonly #suspects = new Map<string, number>();
  readonly #threads: number;

  constructor(opts: TransformerOptions = {}) {
    this.limits = { ...DEFAULT_TRANSFORM_LIMITS, ...opts.limits };
    this.#threads = opts.threads ?? 1;
  }

  async run(source: string, event: TransformEvent): Promise<TransformOutcome> {
    const apart = this.#suspect(source);
    const pool = apart ? this.#quarantinePool() : this.#mainPool();
    const r = await pool.run(source, JSON.stringify(event));
    if (!r.ok && (r.overran === true || r.error.startsWith('exceeded'))) {
      this.#suspects.delete(source);
      this.#suspects.set(source, Date.now() + QUARANTINE_MS);
      if (this.#suspects.size > QUARANTINE_MAX) this.#suspects.delete(this.#suspects.keys().next().value!);
    } else if (apart && r.ok) this.#suspects.delete(source);
    if (!r.ok) return { error: `Transform: ${r.error}` };
    const out = readOutput(r.json);
    return 'error' in out ? { error: `Transform: ${out.error}` } : out;
  }

  /** Whether the source runs in the quarantine (it hit a limit lately). */
  isQuarantined(source: string): boolean {
    return this.#suspect(source);
  }

  #mainPool(): TransformPool {
    this.#pool ??= new TransformPool(this.limits, this.#threads);
    return this.#pool;
  }

  #quarantinePool(): TransformPool {
    this.#quarantine ??= new TransformPool(this.limits, 1);
    return this.#quarantine;
  }

  #suspect(source: string): boolean {
    const until = this.#suspects.get(source);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.#suspects.delete(source);
    return false;
  }

  async close(): Promise<void> {
    await Promise.all([this.#pool?.close(), this.#quarantine?.close()]);
  }
}

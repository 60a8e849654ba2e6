/**
 * Runs hooks' transforms: the event goes in as JSON, the checked outcome comes back. Failures
 * never throw; they say why, prefixed for the delivery log ("Transform: exceeded 50 ms").
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

export class Transformer {
  readonly limits: TransformLimits;
  #pool: TransformPool | undefined;
  readonly #threads: number;

  constructor(opts: TransformerOptions = {}) {
    this.limits = { ...DEFAULT_TRANSFORM_LIMITS, ...opts.limits };
    this.#threads = opts.threads ?? 1;
  }

  async run(source: string, event: TransformEvent): Promise<TransformOutcome> {
    this.#pool ??= new TransformPool(this.limits, this.#threads);
    const r = await this.#pool.run(source, JSON.stringify(event));
    if (!r.ok) return { error: `Transform: ${r.error}` };
    const out = readOutput(r.json);
    return 'error' in out ? { error: `Transform: ${out.error}` } : out;
  }

  close(): Promise<void> {
    return this.#pool?.close() ?? Promise.resolve();
  }
}

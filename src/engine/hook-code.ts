/**
 * The parts of a hook that look inside the request: its Filter (CEL), compiled once per hook
 * version, and its Transform (JavaScript in a sandbox). Hooks that read a body (a filter on
 * `request.body`/`response.body`, or any Transform) sit in an index of their own, so that the
 * proxy asks about bodies only when such a hook exists and keeps a copy only for the requests
 * one of them matches by path and method.
 */
import {
  type CompiledFilter,
  compileFilter,
  type FilterInput,
  type FilterResponse,
  filterQuery,
  parseBody,
} from '../filter/index.js';
import type { Hook } from '../hook/index.js';
import { Transformer, type TransformerOptions, type TransformOutcome } from '../transform/index.js';
import { methodFires, storedPattern } from './compiled-hook.js';
import type { CallbackRequest, FiredEvent, FiredEventSink, Trigger } from './fired-event.js';
import { MatchIndex } from './match-index.js';

/** Which bodies the hooks that match a request by path and method read. */
export interface BodyNeeds {
  request: boolean;
  response: boolean;
}

export interface FilterError {
  At: string;
  Error: string;
}

export interface HookCodeOptions {
  /** Told of every evaluation error (the metric `hookd_filter_errors_total`). */
  onFilterError?: (hook: Hook, error: string) => void;
  transform?: TransformerOptions;
  now?: () => Date;
}

const REDACTED = 'REDACTED';

export class HookCode {
  readonly #filters = new WeakMap<Hook, CompiledFilter>();
  /** Hooks that read a body, by phase. */
  readonly #readers = { before: new MatchIndex<Hook>(), after: new MatchIndex<Hook>() };
  readonly #lastErrors = new Map<string, FilterError>();
  #errorCount = 0;
  #transformer: Transformer | undefined;

  constructor(private readonly opts: HookCodeOptions = {}) {}

  /** Compiles the hook's Filter; called when the hook enters the index. */
  added(hook: Hook, phase: 'before' | 'after'): void {
    if (hook.Filter === undefined && hook.Transform === undefined) return;
    let f: CompiledFilter | undefined;
    if (hook.Filter !== undefined) {
      const c = compileFilter(hook.Filter);
      // Stored hooks were validated on the way in; a failure here means a corrupt store row.
      if (!c.ok) throw new Error(`hook ${hook.Id}: stored Filter is invalid: ${c.message}`);
      f = c.filter;
      this.#filters.set(hook, f);
    }
    if (readsBody(hook, f)) this.#readers[phase].set(hook.Id, storedPattern(hook), hook);
  }

  removed(id: string): void {
    if (!this.#readers.before.delete(id)) this.#readers.after.delete(id);
    this.#lastErrors.delete(id);
  }

  cleared(): void {
    this.#readers.before.clear();
    this.#readers.after.clear();
  }

  /** Whether some hook reads a body at all: when not, the proxy does nothing more. */
  get anyReader(): boolean {
    return this.#readers.before.size > 0 || this.#readers.after.size > 0;
  }

  /** Which bodies of this request some matching hook reads, per phase; undefined: none. */
  bodyNeeds(method: string, path: string): { before: boolean; after: BodyNeeds } | undefined {
    if (!this.anyReader) return undefined;
    let before = false;
    const after: BodyNeeds = { request: false, response: false };
    if (this.#readers.before.size > 0)
      for (const m of this.#readers.before.match(path))
        if (methodFires(m.value, method)) {
          before = true;
          break;
        }
    if (this.#readers.after.size > 0)
      for (const m of this.#readers.after.match(path)) {
        const h = m.value;
        if (!methodFires(h, method)) continue;
        const f = this.#filters.get(h);
        if (h.Transform !== undefined || f?.readsRequestBody) after.request = true;
        if (h.Transform !== undefined || f?.readsResponseBody) after.response = true;
      }
    if (!before && !after.request && !after.response) return undefined;
    return { before, after };
  }

  /** A BeforeCompletion hook that waits for the request body (its filter reads it, or it transforms). */
  waitsForBody(hook: Hook): boolean {
    return hook.Transform !== undefined || this.#filters.get(hook)?.readsRequestBody === true;
  }

  /**
   * The hook's Filter as the dry run shows it: nothing counted or kept. A hook not in the index
   * (the editor's draft) has its Filter compiled for this one judgement.
   */
  judge(hook: Hook, input: FilterInput): { matched: boolean; error?: string } {
    let f = this.#filters.get(hook);
    if (f === undefined && hook.Filter !== undefined) {
      const c = compileFilter(hook.Filter);
      if (!c.ok) return { matched: false, error: c.message };
      f = c.filter;
    }
    return f === undefined ? { matched: true } : f.evaluate(input);
  }

  /**
   * Judges the hook's Filter; an evaluation error is no match, counted and kept as the hook's
   * LastFilterError. Hooks without a Filter pass.
   */
  passes(hook: Hook, input: () => FilterInput): { matched: boolean; error?: string } {
    const f = this.#filters.get(hook);
    if (f === undefined) return { matched: true };
    const v = f.evaluate(input());
    if (v.matched || v.error === undefined) return v;
    this.#errorCount++;
    this.#lastErrors.set(hook.Id, { At: (this.opts.now?.() ?? new Date()).toISOString(), Error: v.error });
    this.opts.onFilterError?.(hook, v.error);
    return v;
  }

  lastFilterError(id: string): FilterError | undefined {
    return this.#lastErrors.get(id);
  }

  /** Evaluation errors since start. */
  get filterErrors(): number {
    return this.#errorCount;
  }

  transform(hook: Hook, input: FilterInput, request: CallbackRequest): Promise<TransformOutcome> {
    this.#transformer ??= new Transformer(this.opts.transform);
    let payload: unknown = request.body ?? null;
    if (typeof payload === 'string' && /json/i.test(request.headers['content-type'] ?? '')) {
      try {
        payload = JSON.parse(payload);
      } catch {
        // Not JSON after all: the text.
      }
    }
    return this.#transformer.run(hook.Transform!, {
      ...input,
      hook: { Id: hook.Id, ...(hook.Name !== undefined && { Name: hook.Name }) },
      payload,
      callback: { url: request.url, method: request.method, headers: request.headers },
    });
  }

  close(): Promise<void> {
    return this.#transformer?.close() ?? Promise.resolve();
  }
}

function readsBody(hook: Hook, f: CompiledFilter | undefined): boolean {
  return hook.Transform !== undefined || f?.readsRequestBody === true || f?.readsResponseBody === true;
}

/** The variables of a filter (and a transform's event) for one trigger, its user known. */
export function filterInput(t: Trigger, uri: string, captures: string[], user: string): FilterInput {
  const headers = t.headers?.() ?? {};
  const { query, queryAll } = filterQuery(uri);
  // A redacted value is a credential the filter must not see, even as the word REDACTED.
  for (const [k, v] of Object.entries(query)) if (v === REDACTED) delete query[k];
  for (const [k, v] of Object.entries(queryAll)) {
    const kept = v.filter((x) => x !== REDACTED);
    if (kept.length === 0) delete queryAll[k];
    else queryAll[k] = kept;
  }
  const body = parseBody(t.requestBody, headers['content-type']);
  const input: FilterInput = {
    request: {
      method: t.method,
      path: t.path,
      uri,
      query,
      queryAll,
      headers,
      user: user === '' ? null : user,
      body: body.body,
      bodyTruncated: body.bodyTruncated,
    },
    captures,
  };
  if (t.statusCode !== undefined) {
    const rh = t.response?.headers() ?? {};
    const rb = parseBody(t.response?.body, rh['content-type']);
    const response: FilterResponse = {
      status: t.statusCode,
      headers: rh,
      body: rb.body,
      bodyTruncated: rb.bodyTruncated,
    };
    input.response = response;
  }
  return input;
}

/** A transform's outcome as the dry run shows it. */
export function previewOf(r: TransformOutcome): {
  payload?: string;
  headers: Record<string, string>;
  skip: boolean;
  error?: string;
} {
  if ('error' in r) return { headers: {}, skip: false, error: r.error };
  if (r.skip) return { headers: {}, skip: true };
  return { ...(r.payload !== undefined && { payload: r.payload }), headers: r.headers, skip: false };
}

/**
 * Hands a transformed callback to the sink once its Transform has run: a skip sends nothing, a
 * failure is recorded as a failed delivery saying why (`FiredEvent.failure`).
 */
export class TransformedSink {
  readonly #pending = new Set<Promise<void>>();

  constructor(
    private readonly sink: FiredEventSink,
    private readonly code: HookCode,
    private readonly opts: {
      onFired?: (phase: 'before' | 'after', count: number) => void;
      onSinkError?: (err: Error) => void;
    },
  ) {}

  send(h: Hook, e: FiredEvent, input: FilterInput): void {
    const done = this.code.transform(h, input, e.request).then((out) => {
      if ('error' in out) {
        e.failure = out.error;
        e.transformInput = input;
      } else if (out.skip) return;
      else {
        Object.assign(e.request.headers, out.headers);
        if (out.payload !== undefined && e.request.body !== undefined) e.request.body = out.payload;
      }
      try {
        this.sink.accept([e]);
        this.opts.onFired?.(e.hookType === 0 ? 'before' : 'after', 1);
      } catch (err) {
        this.opts.onSinkError?.(err as Error);
      }
    });
    this.#pending.add(done);
    void done.finally(() => this.#pending.delete(done));
  }

  settled(): Promise<void> {
    return this.#pending.size === 0
      ? Promise.resolve()
      : Promise.all([...this.#pending]).then(() => undefined);
  }
}

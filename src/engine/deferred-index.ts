/**
 * A match index whose bulk-loaded entries are compiled when first needed. Loading 100,000 stored
 * hooks at start-up spent most of its time compiling patterns and building the trie; here a
 * loaded entry is only filed under its pattern's first segment, and a bucket is compiled into
 * the trie when a request's path could reach it (its first segment names the bucket, or the
 * pattern starts with a wildcard or is empty: those are compiled with the first request).
 * Whatever no request asked for is compiled soon after, a slice per turn of the event loop, so
 * that the index is whole shortly after start-up and a request never waits for more than its
 * own bucket. Results keep the order of loading: each loaded entry reserves its place.
 */
import type { CompiledPattern } from '../hook/index.js';
import { firstRequestSegment } from '../hook/index.js';
import { type Match, MatchIndex } from './match-index.js';

interface Pending<T> {
  readonly key: string;
  readonly value: T;
  readonly seq: number;
  /** Deleted or replaced before its bucket was compiled. */
  gone: boolean;
}

/** The bucket of patterns that any path may match: a leading wildcard, `/`, `/$`. */
const ANY = '';
/** Entries compiled per turn of the event loop by the background completion. */
const SLICE = 2000;

/** The bucket of a stored pattern: its first segment, percent-decoded, or ANY. */
function bucketOf(source: string): string {
  const start = source.charCodeAt(0) === 0x2f ? 1 : 0;
  let end = source.indexOf('/', start);
  if (end === -1) end = source.length;
  const first = source.slice(start, end);
  if (first === '' || first === '$' || first === '*' || first === '(*)') return ANY;
  if (first.indexOf('%') === -1) return first;
  try {
    return decodeURIComponent(first);
  } catch {
    // Not a pattern the compiler accepts: compiled with the first request, which reports it.
    return ANY;
  }
}

/** A `MatchIndex` with `load` for entries compiled on first use; see the module comment. */
export class DeferredIndex<T> {
  readonly #index = new MatchIndex<T>();
  readonly #pending = new Map<string, Pending<T>>();
  readonly #buckets = new Map<string, Pending<T>[]>();
  #completing = false;

  /**
   * `patternOf` compiles an entry's pattern; `sourceOf` gives its text, to file it. A loaded
   * entry whose pattern does not compile is left out of the index and told to `uncompilable`: it
   * is compiled in a request or in the background, where a throw would fail a request or stop
   * the process for one stored hook.
   */
  constructor(
    private readonly patternOf: (value: T) => CompiledPattern,
    private readonly sourceOf: (value: T) => string,
    private readonly uncompilable: (value: T, err: Error) => void = () => undefined,
  ) {}

  get size(): number {
    return this.#index.size + this.#pending.size;
  }

  get(key: string): T | undefined {
    return this.#index.get(key) ?? this.#pending.get(key)?.value;
  }

  has(key: string): boolean {
    return this.#index.has(key) || this.#pending.has(key);
  }

  *keys(): IterableIterator<string> {
    yield* this.#index.keys();
    yield* this.#pending.keys();
  }

  /** Adds or replaces an entry whose pattern is compiled when a request may need it. */
  load(key: string, value: T): void {
    // A key loaded twice keeps its first place and its last value, as `set` does.
    const before = this.#pending.get(key);
    if (before !== undefined) before.gone = true;
    else if (this.#index.has(key)) this.#index.delete(key);
    const seq = before?.seq ?? this.#index.reserve();
    const p: Pending<T> = { key, value, seq, gone: false };
    this.#pending.set(key, p);
    const b = bucketOf(this.sourceOf(value));
    const bucket = this.#buckets.get(b);
    if (bucket === undefined) this.#buckets.set(b, [p]);
    else bucket.push(p);
    if (!this.#completing) {
      this.#completing = true;
      setImmediate(() => this.#completeSlice()).unref();
    }
  }

  /** Inserts or replaces an entry, compiled now; a replaced one keeps its place. */
  set(key: string, pattern: CompiledPattern, value: T): void {
    const p = this.#pending.get(key);
    if (p !== undefined) {
      p.gone = true;
      this.#pending.delete(key);
    }
    this.#index.set(key, pattern, value, p?.seq);
  }

  delete(key: string): boolean {
    const p = this.#pending.get(key);
    if (p === undefined) return this.#index.delete(key);
    p.gone = true;
    this.#pending.delete(key);
    return true;
  }

  clear(): void {
    for (const p of this.#pending.values()) p.gone = true;
    this.#pending.clear();
    this.#buckets.clear();
    this.#index.clear();
  }

  /** As `MatchIndex.match`, after compiling the buckets this path can reach. */
  match(path: string): Match<T>[] {
    if (this.#pending.size > 0) {
      this.#compile(ANY);
      const first = firstRequestSegment(path);
      if (first !== undefined && first !== ANY) this.#compile(first);
    }
    return this.#index.match(path);
  }

  #compile(bucket: string): void {
    const entries = this.#buckets.get(bucket);
    if (entries === undefined) return;
    this.#buckets.delete(bucket);
    for (const p of entries) this.#insert(p);
  }

  #insert(p: Pending<T>): void {
    if (p.gone) return;
    this.#pending.delete(p.key);
    p.gone = true;
    let pattern: CompiledPattern;
    try {
      pattern = this.patternOf(p.value);
    } catch (err) {
      this.uncompilable(p.value, err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.#index.set(p.key, pattern, p.value, p.seq);
  }

  /** The background completion: about SLICE entries, then the next turn, until none is left. */
  #completeSlice(): void {
    let done = 0;
    for (const [name, entries] of this.#buckets) {
      if (done >= SLICE) break;
      this.#buckets.delete(name);
      for (const p of entries) this.#insert(p);
      done += entries.length;
    }
    if (this.#buckets.size > 0) setImmediate(() => this.#completeSlice()).unref();
    else this.#completing = false;
  }
}

/**
 * The match index: every hook's PathPattern in one segment trie, so that a request is matched
 * against all hooks in one walk of its path instead of one test per hook (PERF-NOTES "Matching").
 *
 * A node's children are literal segments (a Map keyed by the decoded literal) and at most one
 * wildcard child shared by `*` and `(*)`; which wildcards capture is kept per entry, as segment
 * depths. Entries hang on the node their last segment leads to: an open entry (prefix semantics)
 * matches whenever the walk passes the node, an anchored one only when the path ends there.
 */
import type { CompiledPattern } from '../hook/index.js';
import { decodeRequestSegment } from '../hook/index.js';

/** One matching entry and the decoded segments its `(*)` groups captured (`$1` first). */
export interface Match<T> {
  value: T;
  captures: string[];
}

interface Entry<T> {
  value: T;
  /** Insertion order of the key; a replace keeps it, like `Map#set`. */
  seq: number;
  node: TrieNode<T>;
  anchored: boolean;
  /** Position in the node's entries when they are an array, for O(1) removal. */
  slot: number;
  /** Segment depths of the `(*)` wildcards, in order; shared between entries, never mutated. */
  captureDepths: readonly number[];
}

/**
 * The entries on one side of a node: most nodes hold exactly one (a hook's own pattern), and an
 * array costs an object and a backing store on top of the entry, so a lone entry is held directly.
 */
type Entries<T> = Entry<T> | Entry<T>[] | undefined;

class TrieNode<T> {
  /**
   * Literal children. Most nodes have exactly one (each hook's own literal tail), and a Map costs
   * about ten times a field, so a lone child is held directly (its `edge` says which literal leads
   * to it) and the Map is made only for the second one: at 100,000 hooks the nodes are most of the
   * index's memory, which is also why a node has no more fields than these five, and open and
   * anchored entries share one (each entry says which it is).
   */
  literals: TrieNode<T> | Map<string, TrieNode<T>> | undefined = undefined;
  wildcard: TrieNode<T> | undefined = undefined;
  entries: Entries<T> = undefined;
  constructor(
    readonly parent: TrieNode<T> | undefined,
    /** The literal leading here from the parent; undefined for the wildcard child and the root. */
    readonly edge: string | undefined,
  ) {}
}

// Capture depths are shared: a hook's own array would cost more than the entry itself, and
// patterns have few distinct capture layouts. Depths strictly increase, so below 30 a bit set is
// an exact key; deeper layouts (rare) are keyed by their text. Bounded, like the method sets of
// compiled-hook.ts: an unusual layout past the bound gets its own array.
const NO_CAPTURES: readonly number[] = Object.freeze([]);
const sharedDepths = new Map<number | string, readonly number[]>();
const MAX_SHARED_DEPTHS = 4096;

function internDepths(depths: number[]): readonly number[] {
  if (depths.length === 0) return NO_CAPTURES;
  let key: number | string = 0;
  for (const d of depths) {
    if (d >= 30) {
      key = depths.join(',');
      break;
    }
    key |= 1 << d;
  }
  let shared = sharedDepths.get(key);
  if (shared === undefined) {
    shared = Object.freeze(depths.slice());
    if (sharedDepths.size < MAX_SHARED_DEPTHS) sharedDepths.set(key, shared);
  }
  return shared;
}

function addEntry<T>(entries: Entries<T>, entry: Entry<T>): Entries<T> {
  if (entries === undefined) return entry;
  if (Array.isArray(entries)) {
    entry.slot = entries.length;
    entries.push(entry);
    return entries;
  }
  entries.slot = 0;
  entry.slot = 1;
  return [entries, entry];
}

function removeEntry<T>(entries: Entries<T>, entry: Entry<T>): Entries<T> {
  if (!Array.isArray(entries)) return undefined;
  const last = entries.pop()!;
  if (last !== entry) {
    entries[entry.slot] = last;
    last.slot = entry.slot;
  }
  return entries.length === 1 ? entries[0] : entries;
}

/** The entries that match where the walk is: all of them at the path's end, else the open ones. */
function pushEntries<T>(hits: Entry<T>[], entries: Entry<T> | Entry<T>[], atEnd: boolean): void {
  if (Array.isArray(entries)) {
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (atEnd || !e.anchored) hits.push(e);
    }
  } else if (atEnd || !entries.anchored) {
    hits.push(entries);
  }
}

// Literal segments are shared between nodes: the same words (`items`, `events`) recur under
// many parents, one copy per node otherwise. Bounded like the capture depths.
const sharedEdges = new Map<string, string>();
const MAX_SHARED_EDGES = 4096;

function internEdge(edge: string): string {
  const shared = sharedEdges.get(edge);
  if (shared !== undefined) return shared;
  if (sharedEdges.size < MAX_SHARED_EDGES) sharedEdges.set(edge, edge);
  return edge;
}

const SLASH = 0x2f;

const bySeq = (a: Entry<unknown>, b: Entry<unknown>): number => a.seq - b.seq;

/**
 * Every hook pattern, keyed (by hook id, say), answering "which entries match this path".
 * Results come in insertion order of their keys (a replace keeps the key's place). Not safe to
 * call from inside itself; it never calls out, so in Node that cannot happen.
 */
export class MatchIndex<T> {
  #root = new TrieNode<T>(undefined, undefined);
  #byKey = new Map<string, Entry<T>>();
  #nextSeq = 0;
  #nodes = 1;

  // Per-call scratch, reused so that a lookup that matches nothing allocates only the segment
  // strings it had to look up and an empty result; capture arrays are built only for hits.
  // Segment `d` is sliced and decoded once even when several branches reach it.
  #path = '';
  #end = 0;
  #segs: string[] = [];
  #nexts: number[] = [];
  #segCount = 0;
  #hits: Entry<T>[] = [];
  /** Scratch for `set`: the capture depths of the pattern being inserted. */
  #depths: number[] = [];

  /** Number of entries. */
  get size(): number {
    return this.#byKey.size;
  }

  /** The value of the entry with this key. */
  get(key: string): T | undefined {
    return this.#byKey.get(key)?.value;
  }

  has(key: string): boolean {
    return this.#byKey.has(key);
  }

  /** Every key, in insertion order. */
  keys(): IterableIterator<string> {
    return this.#byKey.keys();
  }

  /** Number of trie nodes, the root included; for diagnostics (an empty index has one). */
  get nodeCount(): number {
    return this.#nodes;
  }

  /**
   * A place in the insertion order, for an entry `set` later with it: a key whose pattern is
   * compiled on first use keeps the place it was loaded in.
   */
  reserve(): number {
    return this.#nextSeq++;
  }

  /**
   * Inserts an entry, or replaces the pattern and value of the entry with this key. A new key
   * takes the place `reserved` for it, or the next one.
   */
  set(key: string, pattern: CompiledPattern, value: T, reserved?: number): void {
    const old = this.#byKey.get(key);
    let seq: number;
    if (old !== undefined) {
      // Detach first: pruning the old place must not remove nodes the new place is about to use.
      this.#detach(old);
      seq = old.seq;
    } else {
      seq = reserved ?? this.#nextSeq++;
    }
    let node = this.#root;
    const depths = this.#depths;
    depths.length = 0;
    const segments = pattern.segments;
    for (let d = 0; d < segments.length; d++) {
      const s = segments[d]!;
      if (s.kind === 'literal') {
        node = this.#literalChild(node, s.value);
      } else {
        if (node.wildcard === undefined) {
          node.wildcard = new TrieNode<T>(node, undefined);
          this.#nodes++;
        }
        node = node.wildcard;
        if (s.capture) depths.push(d);
      }
    }
    const entry: Entry<T> = {
      value,
      seq,
      node,
      anchored: pattern.anchored,
      slot: 0,
      captureDepths: internDepths(depths),
    };
    node.entries = addEntry(node.entries, entry);
    this.#byKey.set(key, entry);
  }

  #literalChild(node: TrieNode<T>, edge: string): TrieNode<T> {
    const literals = node.literals;
    if (literals instanceof Map) {
      let child = literals.get(edge);
      if (child === undefined) {
        child = new TrieNode<T>(node, internEdge(edge));
        this.#nodes++;
        literals.set(child.edge!, child);
      }
      return child;
    }
    if (literals !== undefined && literals.edge === edge) return literals;
    const child = new TrieNode<T>(node, internEdge(edge));
    this.#nodes++;
    node.literals =
      literals === undefined
        ? child
        : new Map([
            [literals.edge!, literals],
            [child.edge!, child],
          ]);
    return child;
  }

  /** Removes the entry with this key; false when there was none. */
  delete(key: string): boolean {
    const entry = this.#byKey.get(key);
    if (entry === undefined) return false;
    this.#byKey.delete(key);
    this.#detach(entry);
    return true;
  }

  /** Removes every entry. */
  clear(): void {
    this.#root = new TrieNode<T>(undefined, undefined);
    this.#byKey.clear();
    this.#nodes = 1;
  }

  /**
   * Every entry whose pattern matches the path, with its captures, in insertion order of keys.
   * The query string and fragment are ignored; segments are compared percent-decoded.
   */
  match(path: string): Match<T>[] {
    let end = path.length;
    const q = path.indexOf('?');
    if (q !== -1) end = q;
    const h = path.indexOf('#');
    if (h !== -1 && h < end) end = h;
    const start = end > 0 && path.charCodeAt(0) === SLASH ? 1 : 0;
    this.#segCount = 0;
    if (start >= end) {
      this.#walk(this.#root, 0, -1);
    } else {
      // One trailing slash is ignored (`/a/` is `/a`); see splitRequestPath for the same rule.
      if (path.charCodeAt(end - 1) === SLASH) end--;
      this.#path = path;
      this.#end = end;
      this.#walk(this.#root, 0, start);
      this.#path = '';
    }
    const hits = this.#hits;
    const n = hits.length;
    if (n === 0) return [];
    if (n > 1) hits.sort(bySeq);
    const out: Match<T>[] = new Array(n);
    const segs = this.#segs;
    for (let i = 0; i < n; i++) {
      const e = hits[i]!;
      const depths = e.captureDepths;
      const captures: string[] = new Array(depths.length);
      for (let c = 0; c < depths.length; c++) captures[c] = segs[depths[c]!]!;
      out[i] = { value: e.value, captures };
    }
    hits.length = 0;
    return out;
  }

  /** `pos` is where segment `depth` starts in the path, or -1 when the path has no more segments. */
  #walk(node: TrieNode<T>, depth: number, pos: number): void {
    const entries = node.entries;
    if (entries !== undefined) pushEntries(this.#hits, entries, pos === -1);
    if (pos === -1) return;
    const literals = node.literals;
    const wildcard = node.wildcard;
    if (literals === undefined && wildcard === undefined) return;
    let seg: string;
    let next: number;
    if (depth < this.#segCount) {
      seg = this.#segs[depth]!;
      next = this.#nexts[depth]!;
    } else {
      const path = this.#path;
      const end = this.#end;
      let e = path.indexOf('/', pos);
      if (e === -1 || e >= end) {
        e = end;
        next = -1;
      } else {
        next = e + 1;
      }
      seg = path.slice(pos, e);
      if (seg.indexOf('%') !== -1) seg = decodeRequestSegment(seg);
      this.#segs[depth] = seg;
      this.#nexts[depth] = next;
      this.#segCount = depth + 1;
    }
    if (literals instanceof Map) {
      const child = literals.get(seg);
      if (child !== undefined) this.#walk(child, depth + 1, next);
    } else if (literals !== undefined && literals.edge === seg) {
      this.#walk(literals, depth + 1, next);
    }
    // `*` needs a non-empty segment; a literal is never empty, so `//` matches nothing here.
    if (wildcard !== undefined && seg.length !== 0) this.#walk(wildcard, depth + 1, next);
  }

  #detach(entry: Entry<T>): void {
    const node = entry.node;
    node.entries = removeEntry(node.entries, entry);
    this.#prune(node);
  }

  /** Removes the node and its ancestors while they hold neither entries nor children. */
  #prune(node: TrieNode<T>): void {
    let n = node;
    while (
      n.parent !== undefined &&
      n.entries === undefined &&
      n.wildcard === undefined &&
      n.literals === undefined
    ) {
      const parent = n.parent;
      const siblings = parent.literals;
      if (n.edge === undefined) {
        parent.wildcard = undefined;
      } else if (siblings === n) {
        parent.literals = undefined;
      } else if (siblings instanceof Map) {
        siblings.delete(n.edge);
        if (siblings.size === 0) parent.literals = undefined;
      }
      this.#nodes--;
      n = parent;
    }
  }
}

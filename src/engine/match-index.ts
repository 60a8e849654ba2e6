/**
 * The match index: every hook's PathPattern in one segment trie, so that a request is matched
 * against all hooks in one walk of its path instead of one test per hook (PERF-NOTES "Matching").
 *
 * A node's children are literal segments (a Map keyed by the decoded literal) and at most one
 * wildcard child shared by `*` and `(*)`; which wildcards capture is kept per entry, as segment
 * depths. Entries hang on the node their last segment leads to, in an open list (prefix
 * semantics: they match whenever the walk passes the node) or an anchored list (they match only
 * when the path ends at the node).
 */
import type { CompiledPattern } from '../hook/pattern.js';
import { decodeRequestSegment } from '../hook/pattern.js';

/** One matching entry and the decoded segments its `(*)` groups captured (`$1` first). */
export interface Match<T> {
  value: T;
  captures: string[];
}

interface Entry<T> {
  key: string;
  value: T;
  /** Insertion order of the key; a replace keeps it, like `Map#set`. */
  seq: number;
  node: TrieNode<T>;
  anchored: boolean;
  /** Position in the node's open or anchored list, for O(1) removal. */
  slot: number;
  /** Segment depths of the `(*)` wildcards, in order. */
  captureDepths: number[];
}

class TrieNode<T> {
  /**
   * Literal children. Most nodes have exactly one (each hook's own literal tail), and a Map costs
   * about ten times a field pair, so a lone child sits in `sole`/`soleEdge` and the Map is made
   * only for the second one: at 100,000 hooks that is most of the index's memory.
   */
  literals: Map<string, TrieNode<T>> | undefined = undefined;
  soleEdge: string | undefined = undefined;
  sole: TrieNode<T> | undefined = undefined;
  wildcard: TrieNode<T> | undefined = undefined;
  open: Entry<T>[] | undefined = undefined;
  anchored: Entry<T>[] | undefined = undefined;
  constructor(
    readonly parent: TrieNode<T> | undefined,
    /** The literal leading here from the parent; undefined for the wildcard child and the root. */
    readonly edge: string | undefined,
  ) {}
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

  /** Number of entries. */
  get size(): number {
    return this.#byKey.size;
  }

  /** Number of trie nodes, the root included; for diagnostics (an empty index has one). */
  get nodeCount(): number {
    return this.#nodes;
  }

  /** Inserts an entry, or replaces the pattern and value of the entry with this key. */
  set(key: string, pattern: CompiledPattern, value: T): void {
    const old = this.#byKey.get(key);
    let seq: number;
    if (old !== undefined) {
      // Detach first: pruning the old place must not remove nodes the new place is about to use.
      this.#detach(old);
      seq = old.seq;
    } else {
      seq = this.#nextSeq++;
    }
    let node = this.#root;
    const captureDepths: number[] = [];
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
        if (s.capture) captureDepths.push(d);
      }
    }
    let list: Entry<T>[];
    if (pattern.anchored) {
      node.anchored ??= [];
      list = node.anchored;
    } else {
      node.open ??= [];
      list = node.open;
    }
    const entry: Entry<T> = {
      key,
      value,
      seq,
      node,
      anchored: pattern.anchored,
      slot: list.length,
      captureDepths,
    };
    list.push(entry);
    this.#byKey.set(key, entry);
  }

  #literalChild(node: TrieNode<T>, edge: string): TrieNode<T> {
    if (node.literals !== undefined) {
      let child = node.literals.get(edge);
      if (child === undefined) {
        child = new TrieNode<T>(node, edge);
        this.#nodes++;
        node.literals.set(edge, child);
      }
      return child;
    }
    if (node.sole !== undefined && node.soleEdge === edge) return node.sole;
    const child = new TrieNode<T>(node, edge);
    this.#nodes++;
    if (node.sole === undefined) {
      node.sole = child;
      node.soleEdge = edge;
    } else {
      node.literals = new Map([
        [node.soleEdge!, node.sole],
        [edge, child],
      ]);
      node.sole = undefined;
      node.soleEdge = undefined;
    }
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
    const open = node.open;
    if (open !== undefined) for (let i = 0; i < open.length; i++) this.#hits.push(open[i]!);
    if (pos === -1) {
      const anchored = node.anchored;
      if (anchored !== undefined) for (let i = 0; i < anchored.length; i++) this.#hits.push(anchored[i]!);
      return;
    }
    const literals = node.literals;
    const sole = node.sole;
    const wildcard = node.wildcard;
    if (literals === undefined && sole === undefined && wildcard === undefined) return;
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
    if (literals !== undefined) {
      const child = literals.get(seg);
      if (child !== undefined) this.#walk(child, depth + 1, next);
    } else if (sole !== undefined && node.soleEdge === seg) {
      this.#walk(sole, depth + 1, next);
    }
    // `*` needs a non-empty segment; a literal is never empty, so `//` matches nothing here.
    if (wildcard !== undefined && seg.length !== 0) this.#walk(wildcard, depth + 1, next);
  }

  #detach(entry: Entry<T>): void {
    const node = entry.node;
    const list = (entry.anchored ? node.anchored : node.open)!;
    const last = list.pop()!;
    if (last !== entry) {
      list[entry.slot] = last;
      last.slot = entry.slot;
    }
    if (list.length === 0) {
      if (entry.anchored) node.anchored = undefined;
      else node.open = undefined;
    }
    this.#prune(node);
  }

  /** Removes the node and its ancestors while they hold neither entries nor children. */
  #prune(node: TrieNode<T>): void {
    let n = node;
    while (
      n.parent !== undefined &&
      n.open === undefined &&
      n.anchored === undefined &&
      n.wildcard === undefined &&
      n.literals === undefined &&
      n.sole === undefined
    ) {
      const parent = n.parent;
      if (n.edge === undefined) {
        parent.wildcard = undefined;
      } else if (parent.sole === n) {
        parent.sole = undefined;
        parent.soleEdge = undefined;
      } else {
        parent.literals!.delete(n.edge);
        if (parent.literals!.size === 0) parent.literals = undefined;
      }
      this.#nodes--;
      n = parent;
    }
  }
}

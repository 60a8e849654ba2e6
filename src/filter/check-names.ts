/**
 * Walks a parsed CEL expression and names what it reads: an undeclared top-level name or an
 * unknown field of `request`/`response` is an error with its position and the closest known
 * name, and the reads of `request.body`/`response.body` are recorded so that the proxy keeps a
 * copy of a body only for the hooks that look at it.
 */
import type { parse } from '@bufbuild/cel';
import { suggest } from '../util/index.js';
import { MAX_FILTER_DEPTH, REQUEST_FIELDS, RESPONSE_FIELDS, TOP_NAMES } from './variables.js';

type Parsed = ReturnType<typeof parse>;
type Expr = Parsed['expr'];
type SourceInfo = NonNullable<Parsed['sourceInfo']>;

export interface NameCheck {
  readsRequestBody: boolean;
  readsResponse: boolean;
  readsResponseBody: boolean;
  /** The first problem: a message and the offset it is at. */
  problem?: { message: string; offset: number };
}

/** Comprehensions (the `all`/`exists`/`map`/`filter` macros) bind their own names inside them. */
export function checkNames(root: Expr, info: SourceInfo | undefined): NameCheck {
  const out: NameCheck = { readsRequestBody: false, readsResponse: false, readsResponseBody: false };
  const offsetOf = (e: Expr): number => info?.positions[String(e.id)] ?? 0;
  const fail = (message: string, e: Expr): void => {
    out.problem ??= { message, offset: offsetOf(e) };
  };

  const field = (top: 'request' | 'response', name: string, e: Expr): void => {
    const known: readonly string[] = top === 'request' ? REQUEST_FIELDS : RESPONSE_FIELDS;
    if (!known.includes(name)) {
      const near = suggest(name, known);
      fail(
        `undeclared reference to '${top}.${name}'${near ? `; did you mean '${top}.${near}'?` : ` (${top} has ${known.join(', ')})`}`,
        e,
      );
      return;
    }
    // Whether the body was over the limit is known only by reading it.
    if (name === 'body' || name === 'bodyTruncated') {
      if (top === 'request') out.readsRequestBody = true;
      else out.readsResponseBody = true;
    }
  };

  const walk = (e: Expr | undefined, bound: ReadonlySet<string>, depth: number): void => {
    if (e === undefined || out.problem !== undefined) return;
    if (depth > MAX_FILTER_DEPTH) {
      fail(`nests deeper than ${MAX_FILTER_DEPTH} levels`, e);
      return;
    }
    const k = e.exprKind;
    switch (k.case) {
      case 'identExpr': {
        const name = k.value.name;
        if (bound.has(name)) return;
        if (name === 'request' || name === 'captures') return;
        if (name === 'response') {
          out.readsResponse = true;
          // A bare `response` reads the whole of it, body included.
          out.readsResponseBody = true;
          return;
        }
        const near = suggest(name, [...TOP_NAMES, ...bound]);
        fail(`undeclared reference to '${name}'${near ? `; did you mean '${near}'?` : ''}`, e);
        return;
      }
      case 'selectExpr': {
        const operand = k.value.operand;
        const op = operand?.exprKind;
        if (op?.case === 'identExpr' && !bound.has(op.value.name)) {
          const top = op.value.name;
          if (top === 'request' || top === 'response') {
            if (top === 'response') out.readsResponse = true;
            // Placed where the name starts (`request`), not at the dot.
            field(top, k.value.field, operand!);
            return;
          }
        }
        walk(operand, bound, depth + 1);
        return;
      }
      case 'callExpr':
        walk(k.value.target, bound, depth + 1);
        for (const a of k.value.args) walk(a, bound, depth + 1);
        return;
      case 'listExpr':
        for (const a of k.value.elements) walk(a, bound, depth + 1);
        return;
      case 'structExpr':
        for (const en of k.value.entries) {
          if (en.keyKind.case === 'mapKey') walk(en.keyKind.value, bound, depth + 1);
          walk(en.value, bound, depth + 1);
        }
        return;
      case 'comprehensionExpr': {
        const c = k.value;
        walk(c.iterRange, bound, depth + 1);
        walk(c.accuInit, bound, depth + 1);
        const inner = new Set(bound);
        inner.add(c.iterVar);
        if (c.iterVar2) inner.add(c.iterVar2);
        inner.add(c.accuVar);
        walk(c.loopCondition, inner, depth + 1);
        walk(c.loopStep, inner, depth + 1);
        const result = new Set(bound);
        result.add(c.accuVar);
        walk(c.result, result, depth + 1);
        return;
      }
      default:
        return;
    }
  };
  walk(root, new Set(), 0);
  return out;
}

/**
 * A hook's Filter, compiled once per hook version: parsed, its names checked, and planned into
 * an evaluation function. Evaluating never throws: an error (a missing key, a wrong type) is a
 * "no match" that says why.
 */
import { createRequire } from 'node:module';
import type { CelEnv, parse } from '@bufbuild/cel';
import { lineColumn } from '../util/index.js';
import { checkNames } from './check-names.js';
import { type FilterInput, MAX_FILTER_LENGTH } from './variables.js';

export interface CompiledFilter {
  readonly source: string;
  /** Reads `request.body`: the proxy keeps a copy of the request body for it. */
  readonly readsRequestBody: boolean;
  /** Reads `response.body`. */
  readonly readsResponseBody: boolean;
  /** Reads anything of `response` (an error in a BeforeCompletion hook). */
  readonly readsResponse: boolean;
  evaluate(input: FilterInput): FilterVerdict;
}

export type FilterVerdict = { matched: true } | { matched: false; error?: string };

export type FilterCompileResult =
  | { ok: true; filter: CompiledFilter }
  | { ok: false; message: string; line?: number; column?: number };

type Cel = typeof import('@bufbuild/cel');

const require = createRequire(import.meta.url);

/**
 * The CEL library and one environment for every filter (the standard functions, no extensions),
 * loaded on the first filter compiled: the library costs about a quarter of a second of CPU to
 * import, and a daemon whose hooks have no Filter never needs it. `require` keeps compiling
 * synchronous (a hook is validated and compiled in one call).
 */
let loaded: { cel: Cel; env: CelEnv } | undefined;
function celLibrary(): { cel: Cel; env: CelEnv } {
  if (loaded === undefined) {
    const cel = require('@bufbuild/cel') as Cel;
    loaded = { cel, env: cel.celEnv() };
  }
  return loaded;
}

const MATCHED: FilterVerdict = Object.freeze({ matched: true });
const NOT_MATCHED: FilterVerdict = Object.freeze({ matched: false });

interface SyntaxProblem {
  rawMessage?: string;
  location?: { start?: { line?: number; column?: number } };
}

export function compileFilter(source: string): FilterCompileResult {
  if (source.length > MAX_FILTER_LENGTH)
    return { ok: false, message: `is longer than ${MAX_FILTER_LENGTH} characters` };
  if (source.trim() === '')
    return { ok: false, message: 'must not be empty; leave Filter out to match every request' };
  const { cel, env } = celLibrary();
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = cel.parse(source);
  } catch (err) {
    const p = err as SyntaxProblem;
    const line = p.location?.start?.line;
    const column = p.location?.start?.column;
    const what = p.rawMessage ?? (err as Error).message;
    if (line === undefined || column === undefined) return { ok: false, message: `syntax error: ${what}` };
    return { ok: false, message: `syntax error at ${line}:${column}: ${what}`, line, column };
  }
  const names = checkNames(parsed.expr, parsed.sourceInfo);
  if (names.problem !== undefined) {
    // The library gives an offset; people read lines and columns.
    const { line, column } = lineColumn(source, names.problem.offset);
    const message = names.problem.message.replace(
      /^(undeclared reference to '[^']*')/,
      `$1 at ${line}:${column}`,
    );
    return {
      ok: false,
      message: message === names.problem.message ? `${message} at ${line}:${column}` : message,
      line,
      column,
    };
  }
  let run: (ctx: Record<string, unknown>) => unknown;
  try {
    run = cel.plan(env, parsed) as (ctx: Record<string, unknown>) => unknown;
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
  const filter: CompiledFilter = {
    source,
    readsRequestBody: names.readsRequestBody,
    readsResponseBody: names.readsResponseBody,
    readsResponse: names.readsResponse,
    evaluate(input) {
      let v: unknown;
      try {
        v = run(input as unknown as Record<string, unknown>);
      } catch (err) {
        return { matched: false, error: (err as Error).message };
      }
      if (v === true) return MATCHED;
      if (v === false) return NOT_MATCHED;
      if (cel.isCelError(v)) return { matched: false, error: v.message };
      return { matched: false, error: `the expression gives ${typeName(v)}, not a bool` };
    },
  };
  return { ok: true, filter };
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'bigint') return 'an int';
  if (typeof v === 'number') return 'a double';
  if (typeof v === 'string') return 'a string';
  return 'a value';
}

/**
 * The create-time check of a Transform: it compiles (QuickJS's own parser, without running
 * anything), it defines `transform`, and it sets none of hookd's own headers literally.
 */
import { lineColumn } from '../util/index.js';
import { DEFAULT_TRANSFORM_LIMITS, MAX_TRANSFORM_LENGTH } from './limits.js';
import { quickjs } from './quickjs.js';
import { SOURCE_NAME } from './sandbox.js';
import { RESERVED_TRANSFORM_HEADERS } from './transform-output.js';

export type TransformCheck = { ok: true } | { ok: false; message: string; line?: number; column?: number };

const DEFINES = /\bfunction\s+transform\s*\(|\b(?:const|let|var)\s+transform\s*=/;

export async function checkTransform(source: string): Promise<TransformCheck> {
  if (source.length > MAX_TRANSFORM_LENGTH)
    return { ok: false, message: `is longer than ${MAX_TRANSFORM_LENGTH} characters` };
  const qjs = await quickjs();
  const rt = qjs.newRuntime();
  let problem: TransformCheck = { ok: true };
  try {
    rt.setMemoryLimit(DEFAULT_TRANSFORM_LIMITS.memoryBytes);
    rt.setMaxStackSize(DEFAULT_TRANSFORM_LIMITS.stackBytes);
    const deadline = Date.now() + 1000;
    rt.setInterruptHandler(() => Date.now() > deadline);
    const ctx = rt.newContext();
    try {
      const r = ctx.evalCode(source, SOURCE_NAME, { compileOnly: true });
      if (r.error) {
        const e = ctx.dump(r.error) as { name?: string; message?: string; stack?: string } | null;
        r.error.dispose();
        const at = typeof e?.stack === 'string' ? /transform\.js:(\d+):(\d+)/.exec(e.stack) : null;
        const what = `${e?.name ?? 'SyntaxError'}: ${e?.message ?? 'does not compile'}`;
        problem = at
          ? { ok: false, message: `${what} at ${at[1]}:${at[2]}`, line: Number(at[1]), column: Number(at[2]) }
          : { ok: false, message: what };
      } else r.value.dispose();
    } finally {
      ctx.dispose();
    }
  } finally {
    rt.dispose();
  }
  if (!problem.ok) return problem;
  if (!DEFINES.test(source)) return { ok: false, message: 'must define function transform(event) { … }' };
  return literalReservedHeader(source) ?? { ok: true };
}

/** A reserved header name written as an object key (`'webhook-signature': …`). */
function literalReservedHeader(source: string): TransformCheck | undefined {
  const key = /(['"`])([A-Za-z0-9-]+)\1\s*:|\b([A-Za-z][A-Za-z0-9_]*)\s*:/g;
  for (let m = key.exec(source); m !== null; m = key.exec(source)) {
    const name = (m[2] ?? m[3] ?? '').toLowerCase();
    if (
      !RESERVED_TRANSFORM_HEADERS.has(name) ||
      (m[3] !== undefined && !name.includes('-') && name !== 'authorization')
    )
      continue;
    const { line, column } = lineColumn(source, m.index);
    return {
      ok: false,
      message: `sets header "${name}" at ${line}:${column}, which hookd sets itself and a transform cannot change`,
      line,
      column,
    };
  }
  return undefined;
}

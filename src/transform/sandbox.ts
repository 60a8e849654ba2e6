/**
 * One run of a transform in QuickJS: a fresh runtime and context per run, so no run sees
 * another's globals or prototypes, with the memory, stack and time limits set before any user
 * code runs. The context has QuickJS's language intrinsics only: no `require`, `process`,
 * network, timers or module loader exist in it.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSWASMModule } from 'quickjs-emscripten-core';
import { describeBytes, type TransformLimits } from './limits.js';

export const SOURCE_NAME = 'transform.js';

/** `overran`: the run ended past its time limit (its cause may be another). */
export type SandboxResult = { ok: true; json: string } | { ok: false; error: string; overran?: boolean };

/** `input` is the event as JSON; the answer is the returned value as JSON. */
export function runInSandbox(
  qjs: QuickJSWASMModule,
  source: string,
  input: string,
  limits: TransformLimits,
): SandboxResult {
  const rt = qjs.newRuntime();
  try {
    rt.setMemoryLimit(limits.memoryBytes);
    rt.setMaxStackSize(limits.stackBytes);
    // The clock starts with the user's code: making the runtime and context is hookd's cost.
    let deadline = Number.POSITIVE_INFINITY;
    let interrupted = false;
    rt.setInterruptHandler(() => {
      if (Date.now() < deadline) return false;
      interrupted = true;
      return true;
    });
    const ctx = rt.newContext();
    try {
      // QuickJS polls the interrupt handler between bytecodes, so one built-in call (a
      // String.prototype.repeat of megabytes) runs to its end past the deadline: a run that ends
      // after it has overrun the limit, whatever it returned. A failure keeps its own cause.
      const late = (): boolean => interrupted || Date.now() > deadline;
      const failed = (h: QuickJSHandle): SandboxResult => {
        const error = interrupted ? `exceeded ${limits.timeMs} ms` : describeError(ctx, h, limits);
        h.dispose();
        return late() ? { ok: false, error, overran: true } : { ok: false, error };
      };
      deadline = Date.now() + limits.timeMs;
      const defined = ctx.evalCode(source, SOURCE_NAME);
      if (defined.error) return failed(defined.error);
      defined.value.dispose();
      const inputHandle = ctx.newString(input);
      ctx.setProp(ctx.global, '__hookdInput', inputHandle);
      inputHandle.dispose();
      const call = ctx.evalCode(
        `(() => {
  const input = globalThis.__hookdInput;
  delete globalThis.__hookdInput;
  if (typeof transform !== 'function') throw new TypeError('the Transform defines no function transform(event)');
  const out = transform(JSON.parse(input));
  if (out !== null && typeof out === 'object' && typeof out.then === 'function')
    throw new TypeError('transform returned a promise; return the object itself');
  const json = JSON.stringify(out === undefined ? null : out);
  if (json === undefined) throw new TypeError('transform returned a value JSON cannot hold');
  if (json.length > ${limits.outputBytes}) throw new RangeError('the returned object is over ${describeBytes(limits.outputBytes)} as JSON');
  return json;
})()`,
        'hookd.js',
      );
      if (call.error) return failed(call.error);
      const json = ctx.getString(call.value);
      call.value.dispose();
      if (late()) return { ok: false, error: `exceeded ${limits.timeMs} ms`, overran: true };
      return { ok: true, json };
    } finally {
      ctx.dispose();
    }
  } catch (err) {
    // QuickJS itself ran out of memory mid-way (an allocation the limit refused in the host glue).
    return {
      ok: false,
      error: `exceeded the memory limit of ${describeBytes(limits.memoryBytes)} (${(err as Error).message})`,
    };
  } finally {
    try {
      rt.dispose();
    } catch {
      // A runtime left with live objects after an out-of-memory failure: the next run gets a new one.
    }
  }
}

/** "TypeError: cannot read property 'x' of undefined at line 3", from the thrown value. */
function describeError(ctx: QuickJSContext, h: QuickJSHandle, limits: TransformLimits): string {
  let v: unknown;
  try {
    v = ctx.dump(h);
  } catch {
    v = undefined;
  }
  if (v === null || v === undefined)
    return `exceeded the memory limit of ${describeBytes(limits.memoryBytes)}`;
  if (typeof v !== 'object') return `threw ${String(v).slice(0, 200)}`;
  const e = v as { name?: unknown; message?: unknown; stack?: unknown };
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const message = typeof e.message === 'string' ? e.message : JSON.stringify(v).slice(0, 200);
  if (/out of memory/i.test(message))
    return `exceeded the memory limit of ${describeBytes(limits.memoryBytes)}`;
  const at = typeof e.stack === 'string' ? /transform\.js:(\d+)(?::\d+)?/.exec(e.stack) : null;
  return `${name}: ${message.slice(0, 300)}${at ? ` at line ${at[1]}` : ''}`;
}

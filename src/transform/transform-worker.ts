/**
 * The thread transforms run in: a runaway run blocks this thread, never the daemon's, and a
 * failure of the WebAssembly engine itself ends this thread, which the pool replaces.
 */
import { parentPort } from 'node:worker_threads';
import type { TransformLimits } from './limits.js';
import { quickjs } from './quickjs.js';
import { runInSandbox } from './sandbox.js';

export interface WorkerJob {
  id: number;
  source: string;
  input: string;
  limits: TransformLimits;
}

const WARM_UP = `function transform(e) {
  const b = e.request.body;
  return { payload: { text: "reading " + b.q + " in " + e.captures[0] + ": " + b.v[0].toFixed(1), n: [b.v.length] } };
}`;

const port = parentPort;
if (port !== null) {
  // A first run compiles the WebAssembly code paths, so that the first real one is not slowed.
  // Jobs come once it says it is ready: the pool's watchdog then times the run alone.
  void quickjs().then(
    (qjs) => {
      // What a typical transform does (string concatenation, nested properties, an array index,
      // an object built and turned into JSON): each is WebAssembly compiled on its first call, and
      // a busy machine spent past the 50 ms limit compiling them in the first user's run.
      runInSandbox(qjs, WARM_UP, '{"captures":["r1"],"request":{"body":{"q":"bad","v":[1.5]}}}', {
        timeMs: 1000,
        memoryBytes: 8 * 1024 * 1024,
        stackBytes: 256 * 1024,
        outputBytes: 1024,
      });
      port.postMessage({ ready: true });
    },
    () => port.postMessage({ ready: true }),
  );
  port.on('message', (job: WorkerJob) => {
    void quickjs().then(
      (qjs) => port.postMessage({ id: job.id, result: runInSandbox(qjs, job.source, job.input, job.limits) }),
      (err: unknown) =>
        port.postMessage({
          id: job.id,
          result: { ok: false, error: `the sandbox did not start: ${String(err)}` },
        }),
    );
  });
}

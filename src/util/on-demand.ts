/**
 * Modules that only some configurations or requests use, loaded the first time one does. At
 * start-up every module imported up front is read and compiled before hookd says `listening`
 * (about 0.3 s of CPU for all of them, docs/BENCHMARKS.md "Start-up at 100,000 hooks"); the
 * WebSocket server, JWT verification and pretty logs are not needed by a daemon that is never
 * asked for them. Loaded synchronously (`require`, which also loads ES modules on Node 24), so
 * the callers stay synchronous and, once loaded, behave as with a static import.
 */
import { createRequire } from 'node:module';

const ours = createRequire(import.meta.url);

/**
 * A getter of module `specifier`, which loads it on its first call. `by`: the package whose
 * dependency it is, when it is not one of ours (resolved as that package would resolve it).
 */
export function onDemand<T>(specifier: string, by?: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= (by === undefined ? ours : createRequire(ours.resolve(by)))(specifier) as T;
    return loaded;
  };
}

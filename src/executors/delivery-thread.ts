/**
 * A delivery thread's entry. Node's compile cache is per thread: it is turned on before the
 * thread's modules load (thread-main.ts), as bin/hookd.js does for the main thread, so that a
 * thread made after the first compiles next to nothing.
 */
import module from 'node:module';

module.enableCompileCache?.();
await import('./thread-main.js');

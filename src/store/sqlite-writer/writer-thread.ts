/**
 * The SQLite writer thread's entry. Node's compile cache is per thread: it is turned on before the
 * thread's modules load (writer-main.ts), as bin/hookd.js does for the main thread.
 */
import module from 'node:module';

module.enableCompileCache?.();
await import('./writer-main.js');

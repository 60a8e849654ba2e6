#!/usr/bin/env node
// First, before any import an older Node could crash on: a clear message instead.
import module from 'node:module';
import nodeFloor from './node-floor.cjs';

nodeFloor.requireSupportedNode('hookd');
// Node keeps the compiled code of hookd's modules on disk (in the system's temporary directory
// unless NODE_COMPILE_CACHE names another; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a start
// after the first compiles next to nothing, about a quarter of an empty daemon's start-up CPU.
// A directory it cannot write costs nothing but the saving.
module.enableCompileCache?.();
let main;
try {
  ({ main } = await import('../dist/src/hookd-cli/main.js'));
} catch (e) {
  if (!/Cannot find module '[^']*dist\/src\/daemon\/main\.js'/.test(String(e?.message))) throw e;
  // A clone without its build (npm install -g . of a fresh clone links here): say what to do.
  console.error(
    'hookd: dist/ is not built here. In a clone run npm install (it builds); for a production install use the release tarball (README "Installing for production").',
  );
  process.exit(1);
}
await main();

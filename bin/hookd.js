#!/usr/bin/env node
// First, before any import an older Node could crash on: a clear message instead.
import nodeFloor from './node-floor.cjs';

nodeFloor.requireSupportedNode('hookd');
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

'use strict';
// The oldest Node.js hookd runs on (docs/DECISIONS.md "Runtime: Node.js LTS lines"). Loaded
// first by bin/hookd.js and bin/hookctl.js, before anything that an older Node could crash on,
// so it is CommonJS with no syntax newer than ES2015: on an old Node the user reads one sentence
// (found, needed, where to get it) and hookd exits 1.
const FLOOR = '24.11.0';

/** Whether dotted version `found` is at least `floor` (numeric, part by part). */
function atLeast(found, floor) {
  const a = String(found).replace(/^v/, '').split('.');
  const b = String(floor).split('.');
  for (let i = 0; i < 3; i++) {
    const x = Number(a[i]) || 0;
    const y = Number(b[i]) || 0;
    if (x !== y) return x > y;
  }
  return true;
}

/**
 * The Node.js `npm install` fetched into this clone's .runtime/ (scripts/prepare.js), as the
 * directory of its binary, when there is one: a linked hookctl runs under the system Node, and
 * the user needs to be told where the right one already is.
 */
function fetchedNodeBin(root) {
  const fs = require('node:fs');
  const path = require('node:path');
  const dir = path.join(root || path.join(__dirname, '..'), '.runtime');
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch (_e) {
    return undefined;
  }
  const found = names
    .filter((n) => /^node-/.test(n) && fs.existsSync(path.join(dir, n, 'bin', 'node')))
    .sort()
    .pop();
  return found === undefined ? undefined : path.join(dir, found, 'bin');
}

/** The message for a Node.js that is too old; `fetchedBin`: fetchedNodeBin()'s answer. */
function tooOldMessage(name, found, fetchedBin) {
  const bin = fetchedBin;
  if (bin !== undefined) {
    return (
      name +
      ': Node.js ' +
      found +
      ' is too old; hookd needs Node.js ' +
      FLOOR +
      ' or later (the 24 or 26 LTS line).\n' +
      '  `npm install` fetched one into this clone: ' +
      bin +
      '\n  Put it first on your PATH (add the line to your shell profile to keep it):\n' +
      '    export PATH=' +
      bin +
      ':$PATH\n'
    );
  }
  return (
    name +
    ': Node.js ' +
    found +
    ' is too old; hookd needs Node.js ' +
    FLOOR +
    ' or later (the 24 or 26 LTS line).\n' +
    '  Get it from https://nodejs.org/en/download (or your distribution, e.g. NodeSource), then run ' +
    name +
    ' again. In a clone of hookd, `npm install` fetches one for its npm scripts (npm start, npm test).\n'
  );
}

/** Exits 1 with the message when this Node.js is older than the floor. */
function requireSupportedNode(name) {
  const found = process.versions.node;
  if (atLeast(found, FLOOR)) return;
  process.stderr.write(tooOldMessage(name, found, fetchedNodeBin()));
  process.exit(1);
}

module.exports = {
  FLOOR: FLOOR,
  atLeast: atLeast,
  tooOldMessage: tooOldMessage,
  fetchedNodeBin: fetchedNodeBin,
  requireSupportedNode: requireSupportedNode,
};

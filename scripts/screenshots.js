#!/usr/bin/env node
// `npm run screenshots`: regenerates docs/console-*.png (every console page at desktop and phone
// width) and docs/portal-embedded-*.png (the portal in a host page, light and dark) by running the
// console's and the portal's browser tests with their screenshots pointed at docs/. A plain
// `npm test` writes them to test-output/screenshots/ (git-ignored), so it never changes a tracked
// file.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const docs = fileURLToPath(new URL('../docs', import.meta.url));
const r = spawnSync(
  process.execPath,
  [
    fileURLToPath(new URL('run-tests.js', import.meta.url)),
    'test/console/console-browser',
    'test/portal/portal-browser',
  ],
  {
    stdio: 'inherit',
    env: { ...process.env, HOOKD_SCREENSHOTS_DIR: docs },
  },
);
process.exit(r.status ?? 1);

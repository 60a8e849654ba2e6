#!/usr/bin/env node
/**
 * `npm run docs`: writes the reference pages generated from the code (scripts/docs/). With
 * `--check` it writes nothing and exits 1 naming every page that is stale.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packageInfo } from '../src/util/index.js';
import { generatedPages } from './docs/index.js';

const root = packageInfo().root;
const check = process.argv.includes('--check');
const stale: string[] = [];
for (const page of generatedPages(root)) {
  const file = join(root, page.path);
  const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  const fresh = page.render(current);
  if (fresh === current) continue;
  stale.push(page.path);
  if (!check) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, fresh);
  }
}
if (check && stale.length > 0) {
  console.error(`stale (run npm run docs): ${stale.join(', ')}`);
  process.exit(1);
}
console.log(stale.length === 0 ? 'docs: every generated page is current' : `docs: wrote ${stale.join(', ')}`);

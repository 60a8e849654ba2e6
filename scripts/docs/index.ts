/**
 * The reference pages generated from the code, each with where it is written. `npm run docs`
 * (scripts/write-docs.ts) writes them; test/docs/generated.test.ts fails when one on disk differs
 * from what the code makes now, so the reference cannot drift from the code.
 */
import { join } from 'node:path';
import { errorsMarkdown, logFieldsMarkdown, metricsMarkdown } from './catalogs.js';
import { hookctlMarkdown, hookctlRoff } from './hookctl.js';
import { optionsMarkdown, optionsRoff } from './options.js';
import { roffFence, splice } from './text.js';

export { anchor } from './text.js';

export interface GeneratedPage {
  /** Relative to the repository root. */
  path: string;
  /** The page as the code makes it now, given what the file holds (a man page keeps its prose). */
  render(current: string | undefined): string;
}

/** A roff file whose one fenced section is generated, placed before `before` on the first run. */
function roffSection(name: string, body: () => string, before: string): GeneratedPage['render'] {
  return (current) => {
    if (current === undefined) throw new Error(`${name}: the hand-written page is missing`);
    return splice(current, roffFence(name), body(), before);
  };
}

export function generatedPages(root: string): GeneratedPage[] {
  return [
    { path: 'docs/reference/options.md', render: () => optionsMarkdown() },
    { path: 'docs/reference/hookctl.md', render: () => hookctlMarkdown() },
    { path: 'docs/reference/errors.md', render: () => errorsMarkdown() },
    { path: 'docs/reference/metrics.md', render: () => metricsMarkdown(root) },
    { path: 'docs/reference/log-fields.md', render: () => logFieldsMarkdown(root) },
    { path: join('man', 'hookd.8'), render: roffSection('OPTION TABLE', optionsRoff, '.SH ENVIRONMENT') },
    { path: join('man', 'hookctl.1'), render: roffSection('COMMAND SUMMARY', hookctlRoff, '.SH NAMES') },
  ];
}
export { type BrokenLink, brokenLinks, markdownFiles } from './links.js';

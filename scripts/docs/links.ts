/**
 * A checker of the relative links in the Markdown docs: every `[text](target)` and `![alt](src)`
 * outside code whose target is a path must name a file or folder of the repository, and a
 * `#fragment` must name a heading (GitHub's anchors, duplicates numbered) or an `id`/`name` of
 * that page. Links with a scheme (https:, mailto:) are not followed: the docs are checked offline.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { anchor } from './text.js';

export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  why: string;
}

/** The Markdown files the checker reads: README.md, CONTRIBUTING.md and everything under docs/. */
export function markdownFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) return walk(p);
      return name.endsWith('.md') ? [p] : [];
    });
  const top = ['README.md', 'CONTRIBUTING.md'].map((f) => join(root, f)).filter((f) => existsSync(f));
  return [...top, ...(existsSync(join(root, 'docs')) ? walk(join(root, 'docs')) : [])];
}

/** The lines of a Markdown text with fenced code blocks and inline code blanked out. */
function prose(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && open[1]![0] === fence[0] && open[1]!.length >= fence.length) fence = undefined;
      return '';
    }
    if (open) {
      fence = open[1]!;
      return '';
    }
    return line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, '');
  });
}

const anchorCache = new Map<string, Set<string>>();

/** The fragments a Markdown page answers: its headings' anchors and its explicit ids. */
export function anchorsOf(file: string): Set<string> {
  const cached = anchorCache.get(file);
  if (cached) return cached;
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && open[1]![0] === fence[0]) fence = undefined;
      continue;
    }
    if (open) {
      fence = open[1]!;
      continue;
    }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const text = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
      const base = anchor(text);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      found.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(id[1]!);
  }
  anchorCache.set(file, found);
  return found;
}

const LINK = /!?\[(?:[^\]]|\](?!\())*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

/**
 * Every broken relative link of `files`. `later` names paths another branch is about to add:
 * a link to one of them is not broken while it is missing.
 */
export function brokenLinks(
  root: string,
  files: readonly string[],
  later: readonly string[] = [],
): BrokenLink[] {
  const broken: BrokenLink[] = [];
  for (const file of files) {
    const rel = relative(root, file).split(sep).join('/');
    prose(readFileSync(file, 'utf8')).forEach((line, i) => {
      for (const m of line.matchAll(LINK)) {
        const target = m[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const [path, fragment] = target.split('#', 2) as [string, string | undefined];
        const at = path === '' ? file : join(dirname(file), decodeURIComponent(path));
        const where = relative(root, at).split(sep).join('/');
        if (where.startsWith('..')) {
          broken.push({ file: rel, line: i + 1, target, why: 'points outside the repository' });
          continue;
        }
        if (!existsSync(at)) {
          if (!later.includes(where))
            broken.push({ file: rel, line: i + 1, target, why: `no file ${where}` });
          continue;
        }
        if (fragment === undefined || fragment === '') continue;
        if (!at.endsWith('.md')) continue;
        if (!anchorsOf(at).has(decodeURIComponent(fragment).toLowerCase()))
          broken.push({ file: rel, line: i + 1, target, why: `${where} has no heading #${fragment}` });
      }
    });
  }
  return broken;
}

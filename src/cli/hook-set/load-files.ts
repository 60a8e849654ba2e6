import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isHookName, NAME_RULE } from '../../hook/index.js';
import type { IOStreams } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { parseJsonText, readInput } from '../json-file.js';

/** One hook of a hook file, and where it came from (`dir/orders.json`, `all.json[2]`). */
export interface HookFileEntry {
  name: string;
  source: string;
  doc: Record<string, unknown>;
}

/**
 * Reads `-f FILE|DIR` (repeatable; `-` is standard input): a file holds one hook object or an
 * array of them; a directory's `*.json` files are read in name order, not its subdirectories (as
 * `kubectl apply -f DIR` without -R). Every hook must have a `Name`, the key that matches it to
 * the server's hooks, and no Name may appear twice. Invalid JSON and these mistakes are usage
 * errors (exit 2) naming the file.
 */
export async function loadHookFiles(paths: string[], io: IOStreams, usage: string): Promise<HookFileEntry[]> {
  const files: string[] = [];
  for (const p of paths) {
    if (p !== '-' && (await isDirectory(p))) {
      const names = (await readdir(p)).filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort();
      if (names.length === 0) throw new UsageError(`${p} holds no .json hook files`, { usage });
      files.push(...names.map((n) => join(p, n)));
    } else files.push(p);
  }
  const entries: HookFileEntry[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    const { name: fileName, text } = await readInput(file, io, usage);
    const parsed = parseJsonText(fileName, text);
    const docs = Array.isArray(parsed) ? parsed : [parsed];
    docs.forEach((doc, i) => {
      const source = Array.isArray(parsed) ? `${fileName}[${i}]` : fileName;
      if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
        throw new UsageError(`${source}: a hook must be a JSON object`, { usage });
      }
      const name = (doc as { Name?: unknown }).Name;
      if (name === undefined) {
        throw new UsageError(
          `${source}: the hook has no Name; hooks in files are matched to the server's by Name`,
          { usage, hint: 'add e.g. "Name": "orders-created" (a-z, 0-9, ".", "_", "-")' },
        );
      }
      if (typeof name !== 'string' || !isHookName(name)) {
        throw new UsageError(`${source}: Name ${JSON.stringify(name)} ${NAME_RULE}`, { usage });
      }
      const other = seen.get(name);
      if (other !== undefined) {
        throw new UsageError(`${source}: Name "${name}" is also the Name of the hook in ${other}`, { usage });
      }
      seen.set(name, source);
      entries.push({ name, source, doc: doc as Record<string, unknown> });
    });
  }
  return entries;
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    // A missing file is reported by readInput, with the usage line.
    return false;
  }
}

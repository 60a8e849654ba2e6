import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isHookName, NAME_RULE } from '../../hook/index.js';
import type { IOStreams } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { parseJsonText, readInput } from '../json-file.js';
import { isYamlFile, parseYamlHooks } from './yaml-hooks.js';

/** One hook of a hook file, and where it came from (`dir/orders.json`, `all.json[2]`, `hooks.yaml:12`). */
export interface HookFileEntry {
  name: string;
  source: string;
  doc: Record<string, unknown>;
  /** YAML files: where a field of this hook is written (`hooks.yaml:14`). */
  fieldSource?: (field: string) => string;
}

/** The hooks of one file, each with where it is written. */
function hooksOf(
  fileName: string,
  text: string,
): { doc: unknown; source: string; fieldSource?: (field: string) => string }[] {
  if (isYamlFile(fileName, text)) {
    return parseYamlHooks(fileName, text).map((h) => ({
      doc: h.value,
      source: `${fileName}:${h.line}`,
      fieldSource: (field: string) => `${fileName}:${h.fieldLine(field)}`,
    }));
  }
  const parsed = parseJsonText(fileName, text);
  const docs = Array.isArray(parsed) ? parsed : [parsed];
  return docs.map((doc, i) => ({ doc, source: Array.isArray(parsed) ? `${fileName}[${i}]` : fileName }));
}

/**
 * Reads `-f FILE|DIR` (repeatable; `-` is standard input): a file holds one hook object or an
 * array of them, in JSON or YAML (`.yaml`/`.yml`, or standard input not starting with `{` or
 * `[`; a YAML stream may hold several documents); a directory's `*.json`, `*.yaml` and `*.yml`
 * files are read in name order, not its subdirectories (as `kubectl apply -f DIR` without -R). Every hook must have a `Name`, the key that matches it to
 * the server's hooks, and no Name may appear twice. Invalid JSON and these mistakes are usage
 * errors (exit 2) naming the file.
 */
export async function loadHookFiles(paths: string[], io: IOStreams, usage: string): Promise<HookFileEntry[]> {
  const files: string[] = [];
  for (const p of paths) {
    if (p !== '-' && (await isDirectory(p))) {
      const names = (await readdir(p)).filter((n) => /\.(json|ya?ml)$/i.test(n) && !n.startsWith('.')).sort();
      if (names.length === 0) throw new UsageError(`${p} holds no .json or .yaml hook files`, { usage });
      files.push(...names.map((n) => join(p, n)));
    } else files.push(p);
  }
  const entries: HookFileEntry[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    const { name: fileName, text } = await readInput(file, io, usage);
    for (const { doc, source, fieldSource } of hooksOf(fileName, text)) {
      if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
        throw new UsageError(`${source}: a hook must be an object (a JSON object or a YAML mapping)`, {
          usage,
        });
      }
      const name = (doc as { Name?: unknown }).Name;
      if (name === undefined) {
        throw new UsageError(
          `${source}: the hook has no Name; hooks in files are matched to the server's by Name`,
          { usage, hint: 'add e.g. "Name": "orders-created" (a-z, 0-9, ".", "_", "-")' },
        );
      }
      if (typeof name !== 'string' || !isHookName(name)) {
        throw new UsageError(
          `${fieldSource?.('Name') ?? source}: Name ${JSON.stringify(name)} ${NAME_RULE}`,
          {
            usage,
          },
        );
      }
      const other = seen.get(name);
      if (other !== undefined) {
        throw new UsageError(`${source}: Name "${name}" is also the Name of the hook in ${other}`, { usage });
      }
      seen.set(name, source);
      entries.push({
        name,
        source,
        doc: doc as Record<string, unknown>,
        ...(fieldSource && { fieldSource }),
      });
    }
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

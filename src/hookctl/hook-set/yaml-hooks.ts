import { isMap, isSeq, LineCounter, type Node, parseAllDocuments } from 'yaml';
import { JsonFileError } from '../exit-codes.js';

/** One hook of a YAML stream: its value, the line it starts on, and the line of any field. */
export interface YamlHook {
  value: unknown;
  line: number;
  /** The line of a field named as the server names it (`Methods[1]`, `Headers.X-Token`). */
  fieldLine(field: string): number;
}

/** Whether a hook file is YAML: by its name, or for standard input by its first character. */
export function isYamlFile(name: string, text: string): boolean {
  if (/\.ya?ml$/i.test(name)) return true;
  if (/\.json$/i.test(name)) return false;
  return !/^\s*[[{]/.test(text);
}

/** `Headers.X-Token` → ['Headers', 'X-Token']; `Methods[1]` → ['Methods', 1]. */
function fieldPath(field: string): (string | number)[] {
  const path: (string | number)[] = [];
  for (const part of field.split('.')) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (m === null) {
      path.push(part);
      continue;
    }
    if (m[1] !== '') path.push(m[1]!);
    for (const i of m[2]!.matchAll(/\[(\d+)\]/g)) path.push(Number(i[1]));
  }
  return path;
}

/**
 * Parses a YAML hook file: one document or a multi-document stream (`---`), each a hook (a
 * mapping) or a list of hooks; empty documents are skipped. A syntax error, a duplicate key or an
 * alias bomb is a file error naming `FILE:LINE:COLUMN` (exit 2, as for invalid JSON).
 */
export function parseYamlHooks(fileName: string, text: string): YamlHook[] {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  const hooks: YamlHook[] = [];
  for (const doc of docs) {
    const error = doc.errors[0];
    if (error !== undefined) {
      const at = error.linePos?.[0] ?? lines.linePos(error.pos[0]);
      const what = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
      throw new JsonFileError(`${fileName}:${at.line}:${at.col}: ${what}`);
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      throw new JsonFileError(`${fileName}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (value === null || value === undefined) continue;
    const contents = doc.contents as Node | null;
    const lineOf = (node: unknown, fallback: number): number => {
      const range = (node as { range?: [number, number] } | null)?.range;
      return range ? lines.linePos(range[0]).line : fallback;
    };
    const hookNode = (node: unknown, index: number | undefined) => {
      const line = lineOf(node, lineOf(contents, 1));
      return {
        line,
        fieldLine: (field: string) => {
          const path = fieldPath(field);
          const base = index === undefined ? path : [index, ...path];
          // The deepest part of the path that exists: a missing field is reported at its hook.
          for (let n = base.length; n > (index === undefined ? 0 : 1); n--) {
            const found =
              isMap(contents) || isSeq(contents) ? contents.getIn(base.slice(0, n), true) : undefined;
            if (found !== undefined) return lineOf(found, line);
          }
          return line;
        },
      };
    };
    if (Array.isArray(value) && isSeq(contents)) {
      value.forEach((v, i) => {
        hooks.push({ value: v, ...hookNode(contents.items[i], i) });
      });
    } else hooks.push({ value, ...hookNode(contents, undefined) });
  }
  return hooks;
}

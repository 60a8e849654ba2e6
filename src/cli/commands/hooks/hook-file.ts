import type { CliContext } from '../../context.js';
import { parseJsonText, readInput } from '../../json-file.js';

/** Reads and parses `-f FILE` / `-f -`; invalid JSON is exit 2 with `FILE:LINE:COLUMN: …`. */
export async function readHookFile(file: string, ctx: CliContext, usage: string): Promise<unknown> {
  const { name, text } = await readInput(file, ctx.io, usage);
  return parseJsonText(name, text);
}

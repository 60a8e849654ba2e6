import type { HookView } from '../../api-views.js';
import type { CliContext } from '../../context.js';
import { parseJsonText, readInput } from '../../json-file.js';
import type { Output } from '../../output.js';

/** Reads and parses `-f FILE` / `-f -`; invalid JSON is exit 2 with `FILE:LINE:COLUMN: …`. */
export async function readHookFile(file: string, ctx: CliContext, usage: string): Promise<unknown> {
  const { name, text } = await readInput(file, ctx.io, usage);
  return parseJsonText(name, text);
}

/** The server's lint warnings of a stored hook, on stderr (stdout stays the Id or the JSON). */
export function printWarnings(out: Output, hook: Pick<HookView, 'Warnings'>, prefix = ''): void {
  for (const w of hook.Warnings ?? []) out.warn(`${prefix}${w.Field}: ${w.Message}`);
}

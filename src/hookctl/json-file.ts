import { readFile } from 'node:fs/promises';
import { JsonTextError, parseJsonText as parseJson } from '../util/index.js';
import type { IOStreams } from './context.js';
import { JsonFileError, UsageError } from './exit-codes.js';

export { lineColumn, locateJsonError } from '../util/index.js';

/** What `-f -` is called in messages. */
export const STDIN_NAME = '<stdin>';

/**
 * Reads the text of `-f FILE`; `-` is standard input. A terminal on stdin would wait forever for
 * a hook nobody is typing, so that is a usage error instead (the caller's usage line is printed).
 */
export async function readInput(
  file: string,
  io: IOStreams,
  usage: string,
): Promise<{ name: string; text: string }> {
  if (file === '-') {
    if (io.stdin.isTTY) {
      throw new UsageError('-f - reads the hook from standard input, but standard input is a terminal', {
        usage,
        hint: 'pipe the hook in (hookctl create -f - < hook.json) or name the file: -f hook.json',
      });
    }
    const chunks: Buffer[] = [];
    for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    return { name: STDIN_NAME, text: Buffer.concat(chunks).toString('utf8') };
  }
  try {
    return { name: file, text: await readFile(file, 'utf8') };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why =
      err.code === 'ENOENT' ? 'no such file' : err.code === 'EISDIR' ? 'is a directory' : err.message;
    throw new UsageError(`cannot read ${file}: ${why}`, { usage });
  }
}

/**
 * Parses a hook file. On a syntax error the message is `FILE:LINE:COLUMN: what`
 * (util/json-text.ts), as a CLI error with its exit code.
 */
export function parseJsonText(name: string, text: string): unknown {
  try {
    return parseJson(name, text);
  } catch (e) {
    if (e instanceof JsonTextError) throw new JsonFileError(e.message);
    throw e;
  }
}

import type { IOStreams } from './context.js';
import { UsageError } from './exit-codes.js';

/**
 * Reads a secret (an API token) from standard input, never from the command line: on a terminal
 * with a prompt on stderr and without echo; from a pipe, its first line.
 */
export async function readSecret(io: IOStreams, prompt: string): Promise<string> {
  const stdin = io.stdin;
  if (stdin.isTTY && typeof stdin.setRawMode === 'function') return readFromTerminal(io, prompt);
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    // Stop at the first line: the rest of a pipe is not ours to drain.
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0]!.trim();
}

function readFromTerminal(io: IOStreams, prompt: string): Promise<string> {
  const stdin = io.stdin;
  io.stderr.write(prompt);
  stdin.setRawMode!(true);
  stdin.resume();
  return new Promise<string>((resolve, reject) => {
    let value = '';
    const finish = (err?: Error) => {
      stdin.removeListener('data', onData);
      stdin.setRawMode!(false);
      stdin.pause();
      io.stderr.write('\n');
      if (err) reject(err);
      else resolve(value.trim());
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of typeof chunk === 'string' ? chunk : chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish();
        if (ch === '\u0003') return finish(new UsageError('login cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

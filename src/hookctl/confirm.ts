import type { IOStreams } from './context.js';

/**
 * Asks a yes/no question on the terminal (prompt on stderr, answer on stdin, echoed as typed).
 * Only "y" or "yes" is a yes; anything else, Ctrl-D or an empty line is a no.
 */
export async function confirm(io: IOStreams, prompt: string): Promise<boolean> {
  io.stderr.write(`${prompt} [y/N] `);
  const stdin = io.stdin;
  const line = await new Promise<string>((resolve) => {
    let text = '';
    const done = () => {
      stdin.removeListener('data', onData);
      stdin.removeListener('end', done);
      stdin.pause();
      resolve(text);
    };
    const onData = (chunk: Buffer | string) => {
      text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      if (/[\r\n\u0004]/.test(text)) done();
    };
    stdin.on('data', onData);
    stdin.on('end', done);
    stdin.resume();
  });
  const answer = line
    .split(/[\r\n\u0004]/)[0]!
    .trim()
    .toLowerCase();
  if (!/[\r\n]/.test(line)) io.stderr.write('\n');
  return answer === 'y' || answer === 'yes';
}

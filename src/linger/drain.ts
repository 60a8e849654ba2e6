import type { IncomingMessage } from 'node:http';
import type { LingerBounds } from './bounds.js';

/** Whether the request announced a body that has not all arrived yet. */
export function bodyStillComing(req: IncomingMessage): boolean {
  if (req.complete || req.destroyed) return false;
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}

/**
 * Reads and discards the rest of the request body. Resolves 'ended' when it is all read (or the
 * client went away), 'cut' when the bounds passed first: the caller then closes the connection.
 */
export function drainBody(req: IncomingMessage, bounds: LingerBounds): Promise<'ended' | 'cut'> {
  return new Promise((resolve) => {
    let silence: NodeJS.Timeout | undefined;
    const finish = (outcome: 'ended' | 'cut') => {
      clearTimeout(total);
      clearTimeout(silence);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onEnd);
      req.off('error', onEnd);
      resolve(outcome);
    };
    const onEnd = () => finish('ended');
    const cut = () => finish('cut');
    const onData = () => {
      clearTimeout(silence);
      silence = setTimeout(cut, bounds.silenceMs);
    };
    const total = setTimeout(cut, bounds.totalMs);
    onData();
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onEnd);
    req.once('error', onEnd);
    req.resume();
  });
}

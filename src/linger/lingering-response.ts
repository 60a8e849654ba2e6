import { type IncomingMessage, ServerResponse } from 'node:http';
import type { LingerBounds } from './bounds.js';
import { bodyStillComing, drainBody } from './drain.js';

type EndArgs = [chunk?: unknown, encoding?: unknown, cb?: unknown];

/**
 * The ServerResponse class of a Node server (its `ServerResponse` option) whose early answers
 * linger: an answer that ends while its request's body is still arriving (a 413, 415, 401 or 400
 * given before the body was read, or an upstream that answered early) is written at once, then
 * the rest of the body is read and discarded within the bounds before the response ends and the
 * connection closes. Without it, Node closes the connection at the end of such an answer, the
 * client's next write meets a reset, and a client that reads only once it has sent everything
 * (Node's fetch, most libraries) never sees the answer.
 */
export function lingeringResponse(bounds: LingerBounds): typeof ServerResponse {
  return class LingeringResponse<
    Request extends IncomingMessage = IncomingMessage,
  > extends ServerResponse<Request> {
    private lingering = false;

    override end(...args: EndArgs): this {
      const req = this.req as IncomingMessage | undefined;
      if (this.lingering || req === undefined || !bodyStillComing(req)) return this.endNow(args);
      this.lingering = true;
      const [chunk, encoding, cb] = args;
      const last = typeof chunk === 'function' ? undefined : chunk;
      const done = typeof chunk === 'function' ? chunk : typeof encoding === 'function' ? encoding : cb;
      if (!this.headersSent) {
        // The connection closes after the linger: the client is told not to reuse it.
        this.setHeader('connection', 'close');
        if (last !== undefined && last !== null && !this.hasHeader('content-length')) {
          const enc = typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8';
          this.setHeader(
            'content-length',
            typeof last === 'string' ? Buffer.byteLength(last, enc) : (last as Uint8Array).byteLength,
          );
        }
      }
      if (last !== undefined && last !== null) {
        if (typeof encoding === 'string') this.write(last, encoding as BufferEncoding);
        else this.write(last);
      } else this.flushHeaders();
      void drainBody(req, bounds).then((outcome) => {
        if (outcome === 'cut') {
          req.socket.destroy();
          return;
        }
        this.endNow(typeof done === 'function' ? [done] : []);
      });
      return this;
    }

    private endNow(args: EndArgs): this {
      return super.end(...(args as Parameters<ServerResponse['end']>));
    }
  } as typeof ServerResponse;
}

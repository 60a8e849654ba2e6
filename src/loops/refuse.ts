import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { HookdError } from '../errors/index.js';
import { toProblem } from '../http-api/index.js';
import { MAX_PASSES } from './loop-guard.js';

function body(): string {
  return JSON.stringify(
    toProblem(
      new HookdError(
        'LOOP_DETECTED',
        `this request already went through hookd ${MAX_PASSES} times (CDN-Loop): it is not forwarded and fires no hooks`,
      ),
    ),
  );
}

/** Answers a proxied request that went round too often: 508, nothing forwarded, nothing fired. */
export function refuseLoop(res: ServerResponse): void {
  const b = body();
  res.writeHead(508, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(b) });
  res.end(b);
}

/** The same for an Upgrade request, on its raw socket. */
export function refuseLoopUpgrade(socket: Duplex): void {
  const b = body();
  socket.end(
    `HTTP/1.1 508 Loop Detected\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(b)}\r\nConnection: close\r\n\r\n${b}`,
  );
}

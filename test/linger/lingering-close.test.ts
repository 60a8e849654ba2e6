import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startHookd, type TestDaemon } from '../helpers/hookd.js';

// Early answers linger (src/linger/, docs/DECISIONS.md "Lingering close"): an answer given
// before the request body was read (413 over the body limit, 415, hookd's own 502) is
// readable by a client still sending, which keeps writing without a reset; a client that never
// stops is cut after the bound. Real sockets against a real hookd; the bounds are shortened here
// (the daemon's are 30 s in all and 5 s of silence).

const MiB = 1024 * 1024;
const BOUNDS = { totalMs: 1500, silenceMs: 700 };

let t: TestDaemon;
before(async () => {
  // An upstream no one listens on: the proxy answers 502 itself.
  t = await startHookd({ bodyLimit: MiB, upstream: 'http://127.0.0.1:9/', linger: BOUNDS });
});
after(() => t.close());

interface Outcome {
  /** Everything received (latin1). */
  text: string;
  /** Body bytes written before the connection ended. */
  sent: number;
  /** The socket error the client met, if any (EPIPE, ECONNRESET). */
  error?: string;
}

/**
 * A raw client that sends `head` and then `chunk` every `everyMs` until `total` bytes are sent
 * (forever when Infinity), and reads the answer only once it stopped writing: what a client
 * that reads after its upload (Node's fetch and most libraries) sees.
 */
function slowUpload(
  head: string,
  total: number,
  opts: { chunk?: number; everyMs?: number; readWhileSending?: boolean } = {},
): Promise<Outcome> {
  const { chunk = 64 * 1024, everyMs = 10 } = opts;
  const { hostname, port } = new URL(t.url);
  return new Promise((resolve) => {
    const socket: Socket = connect({ host: hostname, port: Number(port) });
    let sent = 0;
    let error: string | undefined;
    const received: Buffer[] = [];
    if (!opts.readWhileSending) socket.pause();
    let timer: NodeJS.Timeout | undefined;
    let writing = true;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      clearInterval(timer);
      socket.destroy();
      resolve({
        text: Buffer.concat(received).toString('latin1'),
        sent,
        ...(error !== undefined && { error }),
      });
    };
    // Done once the upload stopped and one whole answer is in (a kept-alive connection stays open).
    const check = () => {
      if (!writing) {
        const text = Buffer.concat(received).toString('latin1');
        const end = text.indexOf('\r\n\r\n');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? Number.NaN);
        if (end !== -1 && text.length - end - 4 >= length) settle();
      }
    };
    const read = () => {
      clearInterval(timer);
      writing = false;
      socket.resume();
      check();
    };
    socket.on('data', (b: Buffer) => {
      received.push(b);
      check();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error ??= e.code ?? e.message;
    });
    socket.on('close', settle);
    socket.once('connect', () => {
      socket.write(head);
      const piece = Buffer.alloc(chunk, 'a');
      timer = setInterval(() => {
        if (socket.destroyed || error !== undefined) return read();
        if (sent >= total) return read();
        socket.write(piece);
        sent += piece.length;
      }, everyMs);
    });
  });
}

const post = (path: string, length: number, token?: string, type = 'application/json') =>
  `POST ${path} HTTP/1.1\r\nhost: hookd\r\ncontent-type: ${type}\r\ncontent-length: ${length}\r\n${token ? `authorization: Bearer ${token}\r\n` : ''}\r\n`;

function problemOf(text: string): { status: number; doc: { status?: number; type?: string } } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  return { status, doc: body ? (JSON.parse(body) as { status?: number; type?: string }) : {} };
}

describe('lingering close of early answers', () => {
  it('a 3 MiB body sent at once with fetch reads the 413 problem document, every time', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${t.url}/hooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: Buffer.alloc(3 * MiB, 'a'),
      });
      assert.equal(res.status, 413);
      assert.equal(res.headers.get('connection'), 'close');
      const doc = (await res.json()) as { status: number; type: string };
      assert.equal(doc.status, 413);
      assert.match(doc.type, /payload-too-large/);
    }
  });

  it('a client writing 3 MiB in 64 KiB pieces every 10 ms sends it all, then reads the 413', async () => {
    const out = await slowUpload(post('/hooks', 3 * MiB, t.token), 3 * MiB);
    assert.equal(out.error, undefined, `the upload met ${out.error} after ${out.sent} bytes`);
    assert.equal(out.sent, 3 * MiB);
    const { status, doc } = problemOf(out.text);
    assert.equal(status, 413, out.text.slice(0, 200));
    assert.equal(doc.status, 413);
    assert.match(out.text, /\r\nconnection: close\r\n/i);
  });

  it('a 415 before the body is read by a client still sending', async () => {
    const out = await slowUpload(post('/hooks', 512 * 1024, t.token, 'text/csv'), 512 * 1024);
    assert.equal(out.error, undefined, `the upload met ${out.error} after ${out.sent} bytes`);
    assert.equal(problemOf(out.text).status, 415, out.text.slice(0, 200));
  });

  it("the proxy's own early answer (502, the upstream unreachable) lingers too", async () => {
    const out = await slowUpload(post('/upload', 512 * 1024), 512 * 1024);
    assert.equal(out.error, undefined, `the upload met ${out.error} after ${out.sent} bytes`);
    const { status, doc } = problemOf(out.text);
    assert.equal(status, 502, out.text.slice(0, 200));
    assert.equal(doc.status, 502);
  });

  it('a client that never stops sending is answered, then cut after the bound', {
    timeout: 30_000,
  }, async () => {
    // It reads while it sends, so it sees the answer before the cut; the upload never ends on its own.
    const out = await slowUpload(post('/hooks', 1024 * MiB, t.token), Number.POSITIVE_INFINITY, {
      chunk: 16 * 1024,
      readWhileSending: true,
    });
    assert.ok(out.sent < 1024 * MiB, 'the connection ended before the announced body');
    assert.equal(problemOf(out.text).status, 413, out.text.slice(0, 200));
  });

  it('a client that falls silent mid-body is cut after the silence bound', { timeout: 30_000 }, async () => {
    const out = await new Promise<{ text: string; closed: boolean }>((resolve) => {
      const { hostname, port } = new URL(t.url);
      const socket = connect({ host: hostname, port: Number(port) });
      let text = '';
      socket.on('data', (b: Buffer) => {
        text += b.toString('latin1');
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve({ text, closed: true }));
      socket.once('connect', () => {
        socket.write(post('/hooks', 3 * MiB, t.token));
        socket.write(Buffer.alloc(64 * 1024, 'a'));
        // And then nothing: only the silence bound ends this connection.
      });
    });
    assert.equal(out.closed, true);
    assert.equal(problemOf(out.text).status, 413, out.text.slice(0, 200));
  });
});

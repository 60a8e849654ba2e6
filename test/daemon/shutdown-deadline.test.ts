import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { WebSocket, WebSocketServer } from 'ws';
import { type HookdProcess, spawnHookd } from '../helpers/hookd.js';

// Shutdown ends within --shutdown-timeout whatever the clients do. A tail client that
// completed the handshake and then ignores the close frame, or an open proxied WebSocket tunnel,
// used to keep hookd running long after SIGTERM.

const DRAIN_MS = 2000;
const cleanup: (() => unknown)[] = [];
after(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** SIGTERM; resolves to the exit, or to 'still running' once the drain time plus a second is gone. */
async function stopWithin(d: HookdProcess, ms: number): Promise<{ code: number | null } | 'still running'> {
  d.proc.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still running'>((resolve) => {
    timer = setTimeout(() => resolve('still running'), ms);
  });
  const r = await Promise.race([d.exited, late]);
  clearTimeout(timer);
  return r;
}

async function start(args: string[] = []): Promise<HookdProcess> {
  const d = await spawnHookd(['--shutdown-timeout', String(DRAIN_MS), ...args], { timeoutMs: 60_000 });
  cleanup.push(() => d.kill());
  return d;
}

describe('shutdown within --shutdown-timeout', () => {
  it('a tail client that ignores the close frame does not hold hookd', async () => {
    const d = await start();
    const { port, hostname } = new URL(d.url);
    const socket: Socket = connect({ host: hostname, port: Number(port) });
    cleanup.push(() => socket.destroy());
    const head = await new Promise<string>((resolve, reject) => {
      let got = '';
      socket.on('error', reject);
      socket.on('data', (chunk: Buffer) => {
        got += chunk.toString('latin1');
        if (got.includes('\r\n\r\n')) resolve(got);
      });
      socket.write(
        [
          'GET /_hookd/tail HTTP/1.1',
          `Host: ${hostname}:${port}`,
          'Upgrade: websocket',
          'Connection: Upgrade',
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
          'Sec-WebSocket-Version: 13',
          `Authorization: Bearer ${d.token}`,
          '',
          '',
        ].join('\r\n'),
      );
    });
    assert.match(head, /^HTTP\/1\.1 101 /, head);
    // From here on it reads what comes (the close frame among it) and answers nothing.
    const r = await stopWithin(d, DRAIN_MS + 1000);
    assert.notEqual(r, 'still running', 'hookd still running a second after the drain time');
  });

  it('an open proxied WebSocket tunnel gets a close frame and does not hold hookd', async () => {
    const upstream = createServer();
    const wss = new WebSocketServer({ server: upstream });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    cleanup.push(
      () =>
        new Promise<void>((resolve) => {
          for (const c of wss.clients) c.terminate();
          wss.close();
          upstream.close(() => resolve());
        }),
    );
    const { port } = upstream.address() as { port: number };
    const d = await start(['--upstream', `http://127.0.0.1:${port}`]);
    const ws = new WebSocket(`${d.url.replace(/^http/, 'ws')}/live/socket`);
    cleanup.push(() => ws.terminate());
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    const r = await stopWithin(d, DRAIN_MS + 1000);
    assert.notEqual(r, 'still running', 'hookd still running a second after the drain time');
    assert.equal(await closed, 1001, 'the client is told hookd is going away');
  });
});

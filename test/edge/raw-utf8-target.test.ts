import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type HookdProcess, spawnHookd } from '../helpers/hookd.js';
import { startUpstream, type Upstream } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// Raw UTF-8 in a request target (`curl --path-as-is -g 'http://127.0.0.1:8470/x?u=é'`): Node's
// HTTP parser refuses bytes above ASCII in a URL, path and query alike, so hookd cannot forward
// it. It says why: a problem document giving the percent-encoded spelling, and a log line. The
// percent-encoded request is forwarded as it is.

let hookd: HookdProcess;
let upstream: Upstream;
before(async () => {
  upstream = await startUpstream();
  hookd = await spawnHookd(['--upstream', upstream.url]);
});
after(async () => {
  await hookd?.stop();
  await upstream?.close();
});

/** Sends one request with a raw (UTF-8) target over a plain socket; resolves with the whole answer. */
function rawGet(target: string): Promise<string> {
  const { hostname, port } = new URL(hookd.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let text = '';
    socket.on('data', (b: Buffer) => {
      text += b.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    socket.write(
      Buffer.concat([
        Buffer.from('GET '),
        Buffer.from(target, 'utf8'),
        Buffer.from(' HTTP/1.1\r\nhost: hookd\r\nconnection: close\r\n\r\n'),
      ]),
    );
  });
}

describe('raw UTF-8 in the request target', () => {
  for (const [where, target, encoded] of [
    ['query', '/x?u=é', '/x?u=%C3%A9'],
    ['path', '/x/é', '/x/%C3%A9'],
  ] as const) {
    it(`in the ${where}: a 400 problem document with the percent-encoded spelling, and a log line`, async () => {
      const text = await rawGet(target);
      assert.match(text, /^HTTP\/1\.1 400 /, text);
      assert.match(text, /\r\ncontent-type: application\/problem\+json\r\n/i);
      const doc = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { status: number; detail: string };
      assert.equal(doc.status, 400);
      assert.match(doc.detail, /outside ASCII/);
      assert.ok(doc.detail.includes(encoded), doc.detail);
      const line = await until(
        'the refusal is logged',
        () => hookd.lines.find((l) => l.includes('request refused') && l.includes(encoded)),
        (l) => l !== undefined,
      );
      assert.match(line!, /HPE_INVALID_URL/);
    });

    it(`in the ${where}, percent-encoded: forwarded to the upstream as sent`, async () => {
      const text = await rawGet(encoded);
      assert.match(text, /^HTTP\/1\.1 200 /, text);
      assert.ok(upstream.requests.some((r) => r.url === encoded));
    });
  }
});

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { api, REPO_ROOT, startHookd, type TestDaemon } from '../helpers/hookd.js';
import { closedPort, startUpstream, type Upstream } from '../helpers/servers.js';
import { until } from '../helpers/until.js';

// The guide's "See a hook fire": its receiver (terminal 1), its hook (terminal 3's curl) and the
// line it says the receiver prints, run as written against a real hookd, with the receiver on a
// free port instead of 9000.

/** README.md, or the guide the walk-through lives in once the README is split. */
function guide(): string {
  const docs = join(REPO_ROOT, 'docs');
  const files = [
    join(REPO_ROOT, 'README.md'),
    ...readdirSync(docs, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(docs, f)),
  ];
  const texts = files.map((f) => readFileSync(f, 'utf8'));
  const found = texts.find((t) => t.includes('# terminal 1') && t.includes('receiver in terminal 1 prints'));
  assert.ok(found, 'a guide has the "See a hook fire" walk-through');
  return found;
}

const text = guide();
const block = (marker: string, containing: string): string => {
  for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, at + 1)) {
    const b = text.slice(at, text.indexOf('```', at));
    if (b.includes(containing)) return b;
  }
  throw new Error(`no ${marker} block with ${containing}`);
};

describe("the guide's first hook, as written", () => {
  let d: TestDaemon;
  let upstream: Upstream;
  let receiver: ReturnType<typeof spawn>;
  const printed: string[] = [];
  let port: number;

  before(async () => {
    port = await closedPort();
    const line = block('# terminal 1', 'createServer')
      .split('\n')
      .find((l) => l.startsWith('node -e'))!;
    const code = /^node -e "(.*)"$/.exec(line)?.[1];
    assert.ok(code, line);
    assert.match(code, /\.listen\(9000,/);
    receiver = spawn(process.execPath, ['-e', code.replace('.listen(9000,', `.listen(${port},`)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    receiver.stdout!.on('data', (b: Buffer) => printed.push(...b.toString().split('\n').filter(Boolean)));
    // The stand-in upstream of terminal 1 (python's http.server) answers 404 for these paths.
    upstream = await startUpstream((_req, res) => res.writeHead(404).end('not found'));
    d = await startHookd({ upstream: upstream.url });
  });

  after(async () => {
    receiver?.kill();
    await d?.close();
    await upstream?.close();
  });

  it('the receiver prints exactly the line the guide shows', async () => {
    const curl = block('# terminal 3', 'curl -s http://127.0.0.1:8470/hooks');
    const body = /-d '([^']+)'/s.exec(curl)?.[1];
    assert.ok(body, curl);
    const hook = JSON.parse(body) as { Callback: string };
    hook.Callback = hook.Callback.replace(':9000/', `:${port}/`);
    await until('the receiver listens', () =>
      fetch(`http://127.0.0.1:${port}/`).then(
        () => true,
        () => false,
      ),
    );
    printed.length = 0;
    const created = await api(d.url, d.token, 'POST', '/hooks', hook);
    assert.equal(created.status, 201, created.text);
    const path = /curl -s -o \/dev\/null http:\/\/127\.0\.0\.1:8470(\S+)/.exec(text)?.[1];
    assert.ok(path, 'the guide sends a request through hookd');
    const res = await fetch(`${d.url}${path}`);
    assert.equal(res.status, 404);
    const expected = /the receiver in terminal 1 prints\s+`([^`]+)`/.exec(text)?.[1];
    assert.ok(expected, 'the guide says what the receiver prints');
    const got = await until('the receiver printed the callback', () =>
      printed.find((l) => l.startsWith('POST')),
    );
    assert.equal(got, expected);
  });
});

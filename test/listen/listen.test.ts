import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { addUser, createHook } from '../helpers/servers.js';
import { until } from '../helpers/until.js';
import { assertBuilt, cleanEnv, HOOKCTL_BIN, startStreaming } from '../hookctl/helpers.js';

// `hookctl listen --forward-to` against a real hookd whose callback policy allows only
// 127.0.0.2 (the hook's real endpoint): the developer's receiver on 127.0.0.1 is outside it, and
// still gets every callback, relayed over /_hookd/listen and sent on by the CLI.

/** Runs `hookctl listen` in-process; `interrupt()` plays the part of Ctrl-C. */
function startListen(args: string[], opts: { env: NodeJS.ProcessEnv; tty: boolean }) {
  return startStreaming('listen', args, opts);
}

interface Got {
  headers: IncomingHttpHeaders;
  body: string;
  verified: boolean;
}

/** The developer's receiver: verifies each callback's signature with the secret it is given. */
async function startLocalReceiver(host: string, status: number) {
  const got: Got[] = [];
  const events = new EventEmitter();
  let secret: string | undefined;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      let verified = false;
      if (secret) {
        try {
          new Webhook(secret).verify(body, req.headers as Record<string, string>);
          verified = true;
        } catch {
          verified = false;
        }
      }
      got.push({ headers: req.headers, body, verified });
      events.emit('got');
      res.writeHead(verified ? status : 401).end(verified ? 'thanks' : 'bad signature');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    url,
    got,
    setSecret: (s: string) => {
      secret = s;
    },
    async waitFor(n: number): Promise<void> {
      while (got.length < n) await once(events, 'got');
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let d: TestDaemon;
let endpoint: Awaited<ReturnType<typeof startLocalReceiver>>;
let laptop: Awaited<ReturnType<typeof startLocalReceiver>>;
let env: NodeJS.ProcessEnv;
let dataDir: string;
let serial = 0;
/** A hang fails the test instead of blocking the run. */
const PER_TEST = { timeout: 60_000 };

async function fire(path: string, token = d.token): Promise<void> {
  const res = await fetch(`${d.url}/_hookd/report`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify([{ Method: 'POST', Path: path, StatusCode: 201, Phase: 'after' }]),
  });
  assert.equal(res.status, 202, await res.text());
}

async function api<T>(method: string, path: string, token = d.token): Promise<{ status: number; body: T }> {
  const res = await fetch(`${d.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Polls the delivery log until a listener attempt is recorded (no fixed sleeps). */
async function listenerAttempts(hookId: string, n: number): Promise<Record<string, unknown>[]> {
  return until(
    `${n} listener attempts recorded`,
    async () => {
      const list = await api<{ Id: string }[]>('GET', `/hooks/${hookId}/deliveries`);
      const found: Record<string, unknown>[] = [];
      for (const del of list.body) {
        const one = await api<{ AttemptLog: Record<string, unknown>[] }>(
          'GET',
          `/_hookd/deliveries/${del.Id}`,
        );
        found.push(...one.body.AttemptLog.filter((a) => a.Via === 'listener'));
      }
      return found;
    },
    (found) => found.length >= n,
    15_000,
  );
}

before(async () => {
  assertBuilt();
  dataDir = tempDir();
  endpoint = await startLocalReceiver('127.0.0.2', 200);
  laptop = await startLocalReceiver('127.0.0.1', 202);
  d = await startHookd({ allowCallbackNets: ['127.0.0.2/32'] }, { dataDir, keepDataDir: true });
  env = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token });
});

after(async () => {
  await d.close();
  await endpoint.close();
  await laptop.close();
});

describe('hookctl listen --forward-to', () => {
  it('a plain GET of the listen endpoint (no upgrade) is 426 Upgrade Required', PER_TEST, async () => {
    const res = await fetch(`${d.url}/_hookd/listen`, { headers: { authorization: `Bearer ${d.token}` } });
    assert.equal(res.status, 426);
    assert.equal(res.headers.get('upgrade'), 'websocket');
    assert.equal(((await res.json()) as { code: string }).code, 'UPGRADE_REQUIRED');
  });

  it(
    'hookd itself may not call the receiver: its address is outside --allow-callback-net',
    PER_TEST,
    async () => {
      const res = await fetch(`${d.url}/hooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ PathPattern: '/x', Methods: ['POST'], Callback: `${laptop.url}/hook` }),
      });
      assert.equal(res.status, 400);
    },
  );

  it(
    'relays every fired callback, signed as sent; the receiver verifies it with the printed secret; the log records the listener attempt',
    PER_TEST,
    async () => {
      const path = `/orders${++serial}`;
      const hook = await createHook(d, {
        Name: `orders-${serial}`,
        PathPattern: path,
        Methods: ['POST'],
        Callback: `${endpoint.url}/real`,
      });
      const before = laptop.got.length;
      const endpointBefore = endpoint.got.length;
      const l = startListen(['--forward-to', `${laptop.url}/webhook`, '--print-secret'], { env, tty: false });
      await l.stderr.waitFor(
        /Ready! Forwarding callbacks of all your hooks to http:\/\/127\.0\.0\.1:\d+\/webhook/,
      );
      const out = await l.stdout.waitFor(new RegExp(`secret\\t${hook.Id}\\torders-${serial}\\twhsec_\\S+`));
      const secret = new RegExp(`secret\\t${hook.Id}\\torders-${serial}\\t(whsec_\\S+)`).exec(out)![1]!;
      laptop.setSecret(secret);

      await fire(path);
      await fire(path);
      await laptop.waitFor(before + 2);
      const mine = laptop.got.slice(before);
      assert.ok(
        mine.every((g) => g.verified),
        'every relayed callback verifies with the printed secret',
      );
      assert.ok(mine.every((g) => String(g.headers['webhook-id']).startsWith('msg_')));
      assert.equal(JSON.parse(mine[0]!.body).hookId, hook.Id);
      // The piped lines: --> then <-- with the status, tab-separated, no colour.
      const lines = await l.stdout.waitFor(
        /<--\t202\tPOST http:\/\/127\.0\.0\.1:\d+\/webhook\t[\d.]+ms\tmsg_[^\n]*\n[\s\S]*<--\t202/,
      );
      assert.match(lines, new RegExp(`\\t-->\\thook/orders-${serial}\\tPOST ${path} \\[201\\]\\tmsg_`));
      assert.doesNotMatch(lines, /\u001b\[/);

      const attempts = await listenerAttempts(hook.Id, 2);
      assert.equal(attempts.length, 2);
      for (const a of attempts) {
        assert.equal(a.StatusCode, 202);
        assert.match(String(a.Listener), /^ls_/);
        assert.equal(a.ResponseBody, 'thanks');
      }
      // The hook's real endpoint got its callbacks as before.
      await endpoint.waitFor(endpointBefore + 2);

      l.interrupt();
      assert.equal(await l.done, 0);
    },
  );

  it('on a terminal: coloured --> / <-- lines; --hook takes a Name', PER_TEST, async () => {
    const path = `/tty${++serial}`;
    const hook = await createHook(d, {
      Name: `tty-${serial}`,
      PathPattern: path,
      Methods: ['POST'],
      Callback: `${endpoint.url}/r`,
    });
    laptop.setSecret((await api<{ Secret: string }>('GET', `/hooks/${hook.Id}/secret`)).body.Secret);
    const before = laptop.got.length;
    const l = startListen(['--hook', `tty-${serial}`, '--forward-to', `${laptop.url}/webhook`], {
      env,
      tty: true,
    });
    await l.stderr.waitFor(/Ready!/);
    await fire(path);
    await laptop.waitFor(before + 1);
    const text = await l.stdout.waitFor(/<--/);
    assert.match(text, /\u001b\[\d+m-->/);
    assert.match(
      text.replace(/\u001b\[[0-9;]*m/g, ''),
      new RegExp(`--> hook/tty-${serial}  POST ${path} \\[201\\]`),
    );
    assert.ok(laptop.got[before]!.verified);
    l.interrupt();
    assert.equal(await l.done, 0);
  });

  it(
    'another user cannot listen to the hook (403, exit 1), by Id; by Name it is not theirs to find (404)',
    PER_TEST,
    async () => {
      const hook = await createHook(d, {
        Name: `private-${++serial}`,
        PathPattern: '/p',
        Methods: ['POST'],
        Callback: `${endpoint.url}/p`,
      });
      const bob = await addUser(d, `bob${serial}`);
      const benv = cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: bob });
      const byId = startListen(['--hook', hook.Id, '--forward-to', laptop.url], { env: benv, tty: false });
      assert.equal(await byId.done, 1);
      assert.match(byId.stderr.text(), /belongs to another user: only a hook's owner can listen/);
      const byName = startListen(['--hook', `private-${serial}`, '--forward-to', laptop.url], {
        env: benv,
        tty: false,
      });
      assert.equal(await byName.done, 1);
      assert.match(byName.stderr.text(), /no hook with Id or Name/);
    },
  );

  it('reconnects after the daemon restarts, and relays again', PER_TEST, async () => {
    const path = `/restart${++serial}`;
    const hook = await createHook(d, { PathPattern: path, Methods: ['POST'], Callback: `${endpoint.url}/r` });
    laptop.setSecret((await api<{ Secret: string }>('GET', `/hooks/${hook.Id}/secret`)).body.Secret);
    const l = startListen(['--forward-to', `${laptop.url}/webhook`], { env, tty: false });
    await l.stderr.waitFor(/Ready!/);
    const port = new URL(d.url).port;
    await d.close();
    await l.stderr.waitFor(/reconnecting/);
    d = await startHookd(
      { allowCallbackNets: ['127.0.0.2/32'], listen: { host: '127.0.0.1', port: Number(port) } },
      { dataDir, keepDataDir: true },
    );
    await l.stderr.waitFor(/reconnected \(listener ls_/);
    const before = laptop.got.length;
    await fire(path);
    await laptop.waitFor(before + 1);
    assert.ok(laptop.got[before]!.verified);
    l.interrupt();
    assert.equal(await l.done, 0);
  });

  it('the real binary (spawned) relays too', PER_TEST, async () => {
    const path = `/spawned${++serial}`;
    const hook = await createHook(d, { PathPattern: path, Methods: ['POST'], Callback: `${endpoint.url}/r` });
    laptop.setSecret((await api<{ Secret: string }>('GET', `/hooks/${hook.Id}/secret`)).body.Secret);
    const child = spawn(
      process.execPath,
      [HOOKCTL_BIN, 'listen', '--hook', hook.Id, '--forward-to', `${laptop.url}/w`],
      {
        env: cleanEnv({ HOOKD_URL: d.url, HOOKD_TOKEN: d.token }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const ready = new Promise<void>((resolve) =>
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString();
        if (/Ready!/.test(err)) resolve();
      }),
    );
    await ready;
    const before = laptop.got.length;
    await fire(path);
    await laptop.waitFor(before + 1);
    assert.ok(laptop.got[before]!.verified);
    const exited = once(child, 'exit');
    while (!/<--\t202/.test(out)) await once(child.stdout, 'data');
    child.kill('SIGINT');
    const [code] = await exited;
    assert.equal(code, 0, err);
  });
});

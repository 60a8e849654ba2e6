import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { type Caddy, findCaddy, startCaddy } from '../helpers/caddy.js';
import { startHookd, type TestDaemon, tempDir } from '../helpers/hookd.js';
import { findNginx, type Nginx, startNginx } from '../helpers/nginx.js';
import { requireOrSkip, skipReason } from '../helpers/require.js';
import {
  closedPort,
  type Receiver,
  startReceiver,
  startUpstream,
  type Upstream,
} from '../helpers/servers.js';

// A front proxy on the same host reaches hookd over a unix socket whose
// mode and group say who may connect, and requests over it are trusted as the front proxy's
// (identity header and X-Forwarded-* honoured). Real nginx and real Caddy from Debian, with the
// configuration README "In front of a multi-user service" shows.

const root = process.getuid?.() === 0;
/** As root the front proxy's workers run as www-data, as on Debian; otherwise as this user. */
const GROUP = root ? 'www-data' : String(process.getgid?.() ?? '');
const WWW_DATA_GID = 33;
// bcrypt (cost 4, so that the test does not spend seconds hashing) of "secret".
const ALICE_BCRYPT = '$2b$04$oLJtLxEeGyNrntBMsrhUVu4DDUwR8pVuJgKqGEdgXO1wgNismXm.i';

/** One request over hookd's socket (the admin's API calls: the front proxies ask for basic auth). */
function overSocket(
  socketPath: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        method,
        path,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** Whether a process running as `nobody` may connect to the socket (it may not: mode 0660). */
function connectsAsNobody(socketPath: string): Promise<string> {
  // The child starts as root and drops to nobody itself before connecting: exec'ing the Node
  // binary as nobody would fail wherever that binary is not readable by nobody (CI unpacks Node
  // into a private temporary directory), and the test is about the socket, not the binary.
  const code = `process.setgroups([]);process.setgid(65534);process.setuid(65534);require('net').connect(${JSON.stringify(socketPath)}).on('connect',()=>{console.log('connected');process.exit(0)}).on('error',e=>{console.log(e.code);process.exit(0)})`;
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    p.on('exit', (code) =>
      code === 0 ? resolve(out.trim()) : reject(new Error(`the probe exited ${code}: ${out}`)),
    );
    p.on('error', reject);
  });
}

interface Front {
  url: string;
  stop(): Promise<void>;
}

/** hookd on a unix socket with an upstream and a hook that shows who made the request and its URI. */
function suite(
  name: string,
  skip: string | undefined,
  startFront: (socket: string, dir: string) => Promise<Front>,
) {
  describe(name, { skip, timeout: 90_000 }, () => {
    let d: TestDaemon;
    let upstream: Upstream;
    let receiver: Receiver;
    let front: Front;
    let dir = '';
    let socket = '';

    before(async () => {
      upstream = await startUpstream();
      receiver = await startReceiver();
      // The socket's directory: traversable by the front proxy's group only, as /run/hookd would be.
      dir = tempDir('hookd-sock-');
      if (root) chownSync(dir, 0, WWW_DATA_GID);
      chmodSync(dir, 0o750);
      socket = join(dir, 'hookd.sock');
      d = await startHookd({
        listen: { path: socket },
        listenMode: 0o660,
        ...(GROUP !== '' && { listenGroup: GROUP }),
        upstream: upstream.url,
        identityHeader: 'X-Forwarded-User',
      });
      const hook = await overSocket(socket, 'POST', '/hooks', d.token, {
        PathPattern: '/app/(*)',
        Methods: ['GET'],
        Callback: `${receiver.url}/in`,
        CallbackContent: '$1 $REQUEST_USER $REQUEST_URI',
      });
      assert.equal(hook.status, 201, hook.body);
      front = await startFront(socket, dir);
    });
    after(async () => {
      await front?.stop();
      await d?.close();
      await upstream?.close();
      await receiver?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('listens on the socket with the mode and group asked for; the start-up URL names it', (t) => {
      assert.equal(d.url, `unix:${socket}`);
      const st = statSync(socket);
      assert.ok(st.isSocket());
      assert.equal(st.mode & 0o777, 0o660);
      if (!root) return requireOrSkip(t, 'needs root to give the socket to another group (--listen-group)');
      assert.equal(st.gid, WWW_DATA_GID);
    });

    it("trusts the front proxy's identity header and X-Forwarded-* over the socket", async () => {
      const auth = `Basic ${Buffer.from('alice:secret').toString('base64')}`;
      // The client's own X-Forwarded-User is replaced by the proxy with the authenticated user.
      const res = await fetch(`${front.url}/app/1`, {
        headers: { authorization: auth, 'x-forwarded-user': 'mallory' },
      });
      assert.equal(res.status, 200, await res.text());
      const [call] = await receiver.waitFor(1);
      assert.equal(call!.body, `1 alice ${front.url}/app/1`);
      const seen = upstream.requests.at(-1)!;
      assert.equal(seen.headers['x-forwarded-user'], 'alice');
      assert.match(String(seen.headers['x-forwarded-for']), /^127\.0\.0\.1\b/);
      const anonymous = await fetch(`${front.url}/app/2`);
      assert.equal(anonymous.status, 401, 'the front proxy asks for credentials');
    });

    it('keeps every other local process out (mode 0660: a process of another user cannot connect)', {
      skip: skipReason(!root && 'needs root to run a process as another user'),
    }, async () => {
      assert.equal(await connectsAsNobody(socket), 'EACCES');
    });
  });
}

const nginx = findNginx();
suite('nginx in front of hookd over a unix socket', nginx.skip, async (socket, dir) => {
  // nginx's own basic auth; {PLAIN} keeps the test from depending on a hashing tool.
  const htpasswd = join(dir, 'htpasswd');
  writeFileSync(htpasswd, 'alice:{PLAIN}secret\n', { mode: 0o640 });
  if (root) chownSync(htpasswd, 0, WWW_DATA_GID);
  const port = await closedPort();
  // The location block README "In front of a multi-user service" shows, with the test's paths.
  const n: Nginx = await startNginx(
    nginx.bin!,
    port,
    `location / {
      auth_basic "service";
      auth_basic_user_file ${htpasswd};
      proxy_pass http://unix:${socket}:;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-User $remote_user;
    }`,
    root ? 'user www-data www-data;' : '',
  );
  return n;
});

const caddy = findCaddy();
suite('Caddy in front of hookd over a unix socket', caddy.skip, async (socket) => {
  const port = await closedPort();
  // The site block README "In front of a multi-user service" shows, with the test's paths.
  const c: Caddy = await startCaddy(
    caddy.bin!,
    port,
    `  basicauth {
    alice ${Buffer.from(ALICE_BCRYPT).toString('base64')}
  }
  reverse_proxy unix/${socket} {
    header_up X-Forwarded-User {http.auth.user.id}
  }`,
  );
  return c;
});

describe('--listen unix:PATH options', () => {
  it('takes unix:/ABSOLUTE/PATH with --listen-mode and --listen-group; refuses them without it', () => {
    const cfg = loadConfig({
      env: {},
      flags: { listen: 'unix:/run/hookd/hookd.sock', listenMode: '0640', listenGroup: 'www-data' },
    });
    assert.deepEqual(cfg.listen, { path: '/run/hookd/hookd.sock' });
    assert.equal(cfg.listenMode, 0o640);
    assert.equal(cfg.listenGroup, 'www-data');
    assert.throws(() => loadConfig({ env: {}, flags: { listen: 'unix:relative.sock' } }), /listen/);
    assert.throws(
      () => loadConfig({ env: {}, flags: { listenMode: '0660' } }),
      /--listen-mode: needs --listen unix:PATH/,
    );
    assert.throws(
      () => loadConfig({ env: {}, flags: { listen: 'unix:/x.sock', listenMode: '999' } }),
      /--listen-mode: "999" is not an octal file mode/,
    );
  });
});

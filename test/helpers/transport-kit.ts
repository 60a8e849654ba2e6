/**
 * What the broker transport tests share: a context as the daemon makes it (a real address
 * policy allowing loopback) that records reconnects, attempts signed the Standard Webhooks way,
 * unique names, a skip when a broker is missing, and private brokers with a password (the
 * machine's shared Mosquitto and NATS take anyone, so wrong credentials need a broker of our own).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AddressPolicy } from '../../src/policy/index.js';
import { newSigningSecret, secretKey, signatureHeader } from '../../src/signing/index.js';
import type { TransportAttempt, TransportContext } from '../../src/transports/index.js';
import { skipReason } from './require.js';
import { closedPort } from './servers.js';
import { until } from './until.js';

export interface Recorded {
  readonly ctx: TransportContext;
  readonly reconnects: string[];
  readonly logs: string[];
}

/** A context as the daemon makes it, recording reconnects and log lines. */
export function recordingContext(over: Partial<TransportContext> = {}): Recorded {
  const reconnects: string[] = [];
  const logs: string[] = [];
  const ctx: TransportContext = {
    policy: new AddressPolicy(['127.0.0.0/8']),
    lookup: undefined,
    timeoutMs: 5000,
    connectTimeoutMs: 2000,
    perReceiver: 8,
    log: (level, msg, fields) => logs.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`),
    onReconnect: (key) => reconnects.push(key),
    ...over,
  };
  return { ctx, reconnects, logs };
}

export const SECRET = newSigningSecret();

let seq = 0;

/** An attempt with the Standard Webhooks headers signed with {@link SECRET}, and `extra` headers. */
export function signedAttempt(
  url: string,
  body: string,
  extra: string[] = [],
  id?: string,
): TransportAttempt {
  const msgId = id ?? `msg_test${process.pid}x${++seq}`;
  const sentAt = Date.now();
  const ts = String(Math.floor(sentAt / 1000));
  const keys = { current: secretKey(SECRET), previous: undefined, previousValidUntil: 0 };
  return {
    id: msgId,
    url,
    method: 'POST',
    headers: [
      'webhook-id',
      msgId,
      'webhook-timestamp',
      ts,
      'webhook-signature',
      signatureHeader(keys, msgId, ts, body, sentAt),
      ...extra,
    ],
    body,
    contentType: 'application/json',
    sentAt,
  };
}

/** A name no other test run uses, made of letters, digits and `_` (a topic level, a stream name). */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${++seq}`;
}

/**
 * Undefined when the broker answers on 127.0.0.1:`port`; otherwise the reason to skip, unless
 * HOOKD_REQUIRE_ALL=1 makes a missing broker a failure.
 */
export async function brokerMissing(name: string, port: number): Promise<string | undefined> {
  return skipReason(!(await probe(port)) && `${name} is not answering on 127.0.0.1:${port}`);
}

/** A broker process the test owns, on a free loopback port, that only takes `user`/`pass`. */
export interface PrivateBroker {
  readonly port: number;
  stop(): Promise<void>;
}

async function startPrivate(
  name: string,
  port: number,
  command: string,
  args: string[],
  dir: string,
): Promise<PrivateBroker> {
  const child: ChildProcess = spawn(command, args, { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', () => {});
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(
      `a private ${name} on port ${port}`,
      async () => (await probe(port)) || child.exitCode !== null,
    );
    if (child.exitCode !== null) throw new Error(`the private ${name} exited with ${child.exitCode}`);
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, stop };
}

function probe(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** A private nats-server with one user (no JetStream). */
export async function startPrivateNats(user: string, pass: string): Promise<PrivateBroker> {
  const port = await closedPort();
  const dir = mkdtempSync(join(tmpdir(), 'hookd-nats-'));
  const args = ['-a', '127.0.0.1', '-p', String(port), '--user', user, '--pass', pass];
  return startPrivate('nats-server', port, 'nats-server', args, dir);
}

/** A private Mosquitto with a password file and no anonymous access. */
export async function startPrivateMosquitto(user: string, pass: string): Promise<PrivateBroker> {
  const port = await closedPort();
  const dir = mkdtempSync(join(tmpdir(), 'hookd-mosquitto-'));
  const passwords = join(dir, 'passwords');
  writeFileSync(passwords, '');
  await new Promise<void>((resolve, reject) => {
    const p = spawn('mosquitto_passwd', ['-b', passwords, user, pass], { stdio: 'ignore' });
    p.once('error', reject);
    p.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`mosquitto_passwd exited with ${code}`)),
    );
  });
  // Mosquitto started as root drops to its own user, which must still read its files.
  chmodSync(dir, 0o755);
  chmodSync(passwords, 0o644);
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(
    conf,
    `listener ${port} 127.0.0.1\nallow_anonymous false\npassword_file ${passwords}\npersistence false\nlog_dest none\n`,
  );
  return startPrivate('mosquitto', port, 'mosquitto', ['-c', conf], dir);
}

/** Whether a program is on the PATH (or an absolute path exists). */
export async function haveProgram(name: string): Promise<boolean> {
  return new Promise((resolve) => {
    const p = spawn(name, ['--help'], { stdio: 'ignore' });
    p.once('error', () => resolve(false));
    p.once('exit', () => resolve(true));
  });
}

/**
 * Sends GET `path(n)` for n = 0… to hookd's proxy with `concurrency` clients, until all are sent
 * or a request fails (the daemon died); `onDone(n)` for each complete 200 response.
 */
export async function burst(
  url: string,
  total: number,
  path: (n: number) => string,
  onDone: (n: number) => void = () => {},
  concurrency = 32,
): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(url);
  let next = 0;
  let dead = false;
  const one = (n: number) =>
    new Promise<void>((resolve) => {
      const req = request({ host: target.hostname, port: target.port, path: path(n), agent }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.complete && res.statusCode === 200) onDone(n);
          resolve();
        });
        res.on('error', () => resolve());
      });
      req.on('error', () => {
        dead = true;
        resolve();
      });
      req.end();
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!dead && next < total) await one(next++);
    }),
  );
  agent.destroy();
}

import { Command } from 'commander';
import type WebSocket from 'ws';
import { type ContextFactory, collect, examples, usageOf } from '../../command.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../exit-codes.js';
import type { Output } from '../../output.js';
import { keepConnected, type OnText, openSocket } from '../../reconnecting-socket.js';
import { type ForwardResult, forward, forwardUrl, type RelayedCallback } from './forward.js';

export interface ListenOptions {
  hooks: string[];
  forwardTo: string;
  printSecret: boolean;
  usage: string;
}

/** `ws(s)://host/base/_hookd/listen?hook=…`. */
export function listenUrl(server: string, hooks: string[]): string {
  const url = new URL(`${server.replace(/\/+$/, '')}/_hookd/listen`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  for (const h of hooks) url.searchParams.append('hook', h);
  return url.href;
}

function stamp(tty: boolean, d = new Date()): string {
  if (!tty) return d.toISOString();
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

const oneLine = (s: string) => s.replace(/[\t\r\n]+/g, ' ');

/** `-->`: a callback arrived (which hook, what triggered it); stripe listen's shape. */
export function arrivedLine(cb: RelayedCallback, out: Output, now = new Date()): string {
  const hook = cb.HookName !== undefined ? `hook/${cb.HookName}` : cb.HookId;
  const t = cb.Trigger;
  const trigger =
    `${t?.Method ?? ''} ${t?.Path ?? ''}${t?.StatusCode != null ? ` [${t.StatusCode}]` : ''}`.trim();
  if (!out.isTTY) return [stamp(false, now), '-->', hook, trigger, cb.DeliveryId].map(oneLine).join('\t');
  const c = out.color;
  return `${stamp(true, now)}  ${c.cyan('-->')} ${c.bold(hook)}  ${trigger}  [${cb.DeliveryId}]`;
}

/** `<--`: what the local receiver answered, and how long it took. */
export function answeredLine(
  cb: RelayedCallback,
  to: string,
  r: ForwardResult,
  out: Output,
  now = new Date(),
): string {
  const status = r.StatusCode === null ? 'ERR' : String(r.StatusCode);
  const latency = `${r.LatencyMs}ms`;
  if (!out.isTTY) {
    return [stamp(false, now), '<--', status, `${cb.Method} ${to}`, latency, cb.DeliveryId, r.Error ?? '']
      .map(oneLine)
      .join('\t')
      .replace(/\t$/, '');
  }
  const c = out.color;
  const ok = r.StatusCode !== null && r.StatusCode < 300;
  const paint = ok ? c.green : c.red;
  const error = r.Error ? `  ${c.red(oneLine(r.Error))}` : '';
  return `${stamp(true, now)}  ${paint('<--')} ${paint(`[${status}]`)} ${cb.Method} ${to}  ${latency}  [${cb.DeliveryId}]${error}`;
}

/**
 * Relays the caller's fired callbacks to a local receiver until Ctrl-C (exit 0): each arrives
 * over the `/_hookd/listen` WebSocket exactly as hookd sends it (signed), goes to --forward-to,
 * and the answer is printed and reported back, where the delivery log records it as this
 * listener's attempt. The first connection must succeed (else exit 3, 4 or 1: 403 for another
 * user's hook); after that, drops (a daemon restart) are retried with backoff, with a line each.
 */
export async function runListen(opts: ListenOptions, ctx: CliContext): Promise<void> {
  const to = forwardUrl(opts.forwardTo);
  if (!to) {
    throw new UsageError(`--forward-to "${opts.forwardTo}" is not an http:// or https:// URL`, {
      usage: opts.usage,
      hint: 'for example --forward-to localhost:3000/webhook',
    });
  }
  const target = to.href;
  const out = ctx.output('table');
  const server = await ctx.server();
  const creds = await ctx.token(server.url);
  const url = listenUrl(server.url, opts.hooks);
  const { default: WebSocketClass } = await import('ws');

  const onText: OnText<string> = (text, ws, ready) => {
    let m: { kind?: string; Listener?: string } & Partial<Omit<RelayedCallback, 'kind'>>;
    try {
      m = JSON.parse(text) as typeof m;
    } catch {
      return;
    }
    if (m.kind === 'ready') ready(m.Listener ?? '');
    else if (m.kind === 'callback') onCallback(m as RelayedCallback, ws);
  };
  const onCallback = (cb: RelayedCallback, ws: WebSocket) => {
    out.out.write(`${arrivedLine(cb, out)}\n`);
    void forward(cb, target).then((r) => {
      out.out.write(`${answeredLine(cb, target, r, out)}\n`);
      if (ws.readyState === ws.OPEN)
        ws.send(JSON.stringify({ kind: 'result', DeliveryId: cb.DeliveryId, ...r }));
    });
  };
  const socket = { url, path: '/_hookd/listen', server: server.url, creds };
  await keepConnected(ctx, {
    stopReason: 'hookctl listen stopped',
    connect: () => openSocket(WebSocketClass, socket, ctx, onText),
    connected: async (conn, first) => {
      if (!first) return out.info(`reconnected (listener ${conn.info})`);
      const which = opts.hooks.length ? opts.hooks.map((h) => `hook ${h}`).join(', ') : 'all your hooks';
      out.info(
        `Ready! Forwarding callbacks of ${which} to ${target} (listener ${conn.info}; Ctrl-C to quit)`,
      );
      if (opts.printSecret) await printSecrets(opts.hooks, ctx, out);
      else out.info("Verify their signatures with the hooks' signing secrets: hookctl listen --print-secret");
    },
    dropped: () => out.info('connection to hookd lost; reconnecting…'),
  });
}

/** The signing secret(s) a receiver verifies with: one line per hook. */
async function printSecrets(hooks: string[], ctx: CliContext, out: Output): Promise<void> {
  const client = await ctx.client();
  const list = hooks.length
    ? await Promise.all(hooks.map((h) => client.getHook(h)))
    : await client.listHooks();
  for (const h of list) {
    const { Secret } = await client.secret(h.Id);
    // The Id in brackets only beside a Name: an unnamed hook's label is its Id already.
    const label =
      typeof h.Name === 'string' ? `${out.color.bold(`hook/${h.Name}`)} (${h.Id})` : out.color.bold(h.Id);
    out.out.write(
      out.isTTY
        ? `Your signing secret for ${label} is ${Secret}\n`
        : `secret\t${h.Id}\t${typeof h.Name === 'string' ? h.Name : ''}\t${Secret}\n`,
    );
  }
}

/** `hookctl listen [--hook ID|NAME]… --forward-to URL [--print-secret]`. */
export function newListenCommand(context: ContextFactory, run = runListen): Command {
  return new Command('listen')
    .description(
      "relay your hooks' callbacks to a local receiver (WebSocket); reconnects when hookd restarts",
    )
    .option('--hook <id|name>', 'only this hook (repeatable); default: all your hooks', collect)
    .requiredOption('--forward-to <url>', 'where to send each callback, e.g. localhost:3000/webhook')
    .option('--print-secret', 'print the signing secret of each hook, to verify the signatures with')
    .addHelpText(
      'after',
      `${examples([
        'hookctl listen --forward-to localhost:3000/webhook',
        'hookctl listen --hook orders-created --forward-to http://127.0.0.1:4242/hooks --print-secret',
      ])}
Each callback arrives exactly as hookd sends it (method, headers with webhook-id,
webhook-timestamp and webhook-signature, body) and goes to --forward-to from this machine:
hookd never connects there, so its callback-target policy does not apply. Lines:
  TIME  --> HOOK  TRIGGER  [DELIVERY]
  TIME  <-- [STATUS] METHOD URL  LATENCY  [DELIVERY]
Piped, the fields are tab-separated. The answers are recorded in the delivery log as attempts
with Via "listener" (hookctl deliveries … -o json); the hook's own endpoint gets its callbacks
all the same. Only a hook's owner can listen to it.
`,
    )
    .action(async (o: { hook?: string[]; forwardTo: string; printSecret?: boolean }, cmd: Command) =>
      run(
        {
          hooks: o.hook ?? [],
          forwardTo: o.forwardTo,
          printSecret: o.printSecret === true,
          usage: usageOf(cmd),
        },
        context(cmd),
      ),
    );
}

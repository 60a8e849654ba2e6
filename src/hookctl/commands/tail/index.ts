import type { ChalkInstance } from 'chalk';
import { Command, Option } from 'commander';
import { type ContextFactory, collect, examples } from '../../command.js';
import type { CliContext } from '../../context.js';
import { answerText, callbackText, type TriggerLike, triggerText } from '../../notation.js';
import type { Output } from '../../output.js';
import { defaultOnSignal } from '../../reconnecting-socket.js';

export const TAIL_STATUSES = ['2xx', '3xx', '4xx', '5xx', 'failed'] as const;

export interface TailOptions {
  hooks: string[];
  status?: string;
}

/** A tail event (docs/API.md, "Live tail"); only the fields hookctl prints are typed. */
interface TailEvent {
  kind?: string;
  Time?: string;
  HookId?: string;
  DeliveryId?: string;
  Attempt?: number;
  Method?: string;
  Url?: string;
  StatusCode?: number | null;
  LatencyMs?: number | null;
  Outcome?: string;
  Error?: string | null;
  Receipt?: string;
  Count?: number;
  Trigger?: TriggerLike;
  /** A test event's attempt (the console's "Send a test event"). */
  Test?: boolean;
}

/** A hook as `listen` and the console name it: `hook/NAME` when it has a Name, else its Id. */
export type HookLabels = ReadonlyMap<string, string>;

function clock(iso: string | undefined): string {
  const d = iso ? new Date(iso) : new Date();
  if (Number.isNaN(d.getTime())) return iso ?? '';
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * One line per callback attempt, in the notation of notation.ts:
 * `TIME  HOOK  GET /path [404]  <-- 200  1.2ms` (with -o wide `--> POST URL` before the answer,
 * and the delivery Id), green when it succeeded, yellow when it will be retried, red when it
 * failed for good. Piped: the same fields tab-separated, the full time and the outcome as a
 * field of its own, no colour (as `list` does).
 */
export function formatAttempt(
  e: TailEvent,
  c: ChalkInstance,
  wide: boolean,
  tty = true,
  labels: HookLabels = new Map(),
): string {
  const trigger = triggerText(e.Trigger);
  const answer = answerText(e.StatusCode, e.Error, e.Receipt) || '<-- no answer';
  const latency = e.LatencyMs != null ? `${Math.round(e.LatencyMs * 10) / 10}ms` : '';
  if (!tty) {
    const fields = [e.Time ?? '', e.HookId ?? '', trigger];
    if (wide) fields.push(callbackText(e.Method, e.Url));
    fields.push(answer, e.Outcome ?? '', latency);
    if (wide) fields.push(e.DeliveryId ?? '');
    return fields.map((f) => f.replace(/[\t\r\n]+/g, ' ')).join('\t');
  }
  const outcome = e.Outcome === 'succeeded' ? '' : ` (${e.Outcome ?? 'unknown'})`;
  const hook = labels.get(e.HookId ?? '') ?? e.HookId ?? '';
  let line = `${clock(e.Time)}  ${hook}${e.Test === true ? ' [test]' : ''}  ${trigger}`;
  if (wide) line += `  ${callbackText(e.Method, e.Url)}`;
  line += `  ${answer}${outcome}${latency ? `  ${latency}` : ''}`;
  if (wide) line += `  ${e.DeliveryId ?? ''}`;
  const paint = e.Outcome === 'succeeded' ? c.green : e.Outcome === 'retrying' ? c.yellow : c.red;
  return paint(line);
}

/**
 * The caller's hooks by Id, labelled as `listen` and the console label them; read again when an
 * event names a hook it does not know (one created since), at most every few seconds.
 */
class LabelCache {
  private labels = new Map<string, string>();
  private readAt = Number.NEGATIVE_INFINITY;
  constructor(private readonly read: () => Promise<{ Id: string; Name?: unknown }[]>) {}

  async of(id: string | undefined): Promise<HookLabels> {
    if (id !== undefined && !this.labels.has(id) && performance.now() - this.readAt > 5000) {
      this.readAt = performance.now();
      try {
        const next = new Map<string, string>();
        for (const h of await this.read())
          next.set(h.Id, typeof h.Name === 'string' ? `hook/${h.Name}` : h.Id);
        this.labels = next;
      } catch {
        // Ids instead of names until the next read: the stream matters more than its labels.
      }
    }
    return this.labels;
  }
}

async function printEvent(event: TailEvent, out: Output, labels: LabelCache): Promise<void> {
  if (out.format === 'json') {
    // Re-serialised so that each event is exactly one line, whatever the server's whitespace.
    out.out.write(`${JSON.stringify(event)}\n`);
    return;
  }
  if (event.kind === 'attempt') {
    const known = out.isTTY ? await labels.of(event.HookId) : undefined;
    out.out.write(`${formatAttempt(event, out.color, out.format === 'wide', out.isTTY, known)}\n`);
  } else if (event.kind === 'dropped') {
    out.err.write(
      `${out.errColor.yellow('warning:')} ${event.Count ?? 'some'} events were skipped: hookctl could not keep up\n`,
    );
  }
}

/**
 * Streams fired callbacks until Ctrl-C (exit 0), through hookd/client's tail: the first
 * connection must succeed (else exit 3, 4 or 1 as for any command); after that, drops are retried
 * with backoff for as long as it takes, since hookd restarting is the usual cause.
 */
export async function runTail(opts: TailOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const server = await ctx.server();
  const client = await ctx.client();
  // The stream cannot say "no such hook": without this, a mistyped Id streams nothing forever.
  for (const id of opts.hooks) await client.getHook(id);
  const labels = new LabelCache(() => client.listHooks());
  const stop = new AbortController();
  const unsubscribe = (ctx.deps.onSignal ?? defaultOnSignal)(() => stop.abort());
  try {
    for await (const event of client.tail({
      hooks: opts.hooks,
      ...(opts.status !== undefined && { status: opts.status as (typeof TAIL_STATUSES)[number] }),
      signal: stop.signal,
      onConnect: (first) =>
        out.info(first ? `Ready! Streaming callbacks from ${server.url} (Ctrl-C to quit)` : 'reconnected'),
      onDrop: () => out.info('reconnecting…'),
    })) {
      // One at a time, in arrival order: a line may wait for the hooks' names to be read.
      await printEvent(event as TailEvent, out, labels);
    }
  } finally {
    unsubscribe();
  }
}

/** `hookctl tail [--hook ID…] [--status 2xx|3xx|4xx|5xx|failed] [-o json]`. */
export function newTailCommand(context: ContextFactory, run = runTail): Command {
  return new Command('tail')
    .description('stream fired callbacks live (WebSocket); reconnects when hookd restarts')
    .option('--hook <id>', 'only this hook (repeatable)', collect)
    .addOption(new Option('--status <class>', 'only attempts with this outcome').choices(TAIL_STATUSES))
    .addHelpText(
      'after',
      `${examples([
        'hookctl tail',
        'hookctl tail --hook hk_01jd3k… --hook hk_01jd3m… --status failed',
        'hookctl tail -o json | jq -c \'select(.kind == "attempt")\'',
      ])}
Each line: TIME  HOOK  METHOD PATH [UPSTREAM-STATUS]  <-- CALLBACK-STATUS  LATENCY (green
delivered, yellow will be retried, red failed); HOOK is hook/NAME for a named hook, [test] marks
a test event; -o wide adds --> CALLBACK-METHOD URL and the delivery Id. [-]: no upstream status (BeforeCompletion). Piped, the fields are tab-separated
(time, hook, trigger, answer, outcome, latency). -o json prints every event as it arrives, one
JSON object per line.
`,
    )
    .action(async (o: { hook?: string[]; status?: string }, cmd: Command) =>
      run({ hooks: o.hook ?? [], ...(o.status !== undefined && { status: o.status }) }, context(cmd)),
    );
}

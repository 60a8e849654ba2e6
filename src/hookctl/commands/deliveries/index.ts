import { Command, Option } from 'commander';
import type { DeliveryView } from '../../api-views.js';
import { type ContextFactory, examples, intArg, isoArg } from '../../command.js';
import type { CliContext } from '../../context.js';
import { answerText, callbackText, triggerText } from '../../notation.js';
import type { Column } from '../../output.js';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export interface DeliveriesOptions {
  hookId: string;
  status?: string;
  since?: string;
  until?: string;
  limit: number;
}

function columns(wide: boolean): Column<DeliveryView>[] {
  const cols: Column<DeliveryView>[] = [
    { header: 'ID', value: (d) => d.Id, paint: (t, _d, c) => c.cyan(t) },
    {
      header: 'STATUS',
      value: (d) => d.Status,
      paint: (t, _d, c) => (t === 'succeeded' ? c.green(t) : t === 'failed' ? c.red(t) : c.yellow(t)),
    },
    { header: 'ATTEMPTS', value: (d) => String(d.Attempts ?? '') },
    { header: 'CREATED', value: (d) => d.Created ?? '' },
    // The notation of tail and the man page: `GET /path [404]` then `<-- 200` (notation.ts).
    { header: 'TRIGGER [UPSTREAM]', value: (d) => triggerText(d.Trigger), shrink: true },
    {
      header: 'LAST ANSWER',
      // A broker's delivery has no status: its receipt says it arrived (`confirmed by …`).
      value: (d) =>
        answerText(
          d.LastStatusCode,
          d.LastError,
          d.LastReceipt ?? (d.Status === 'succeeded' ? 'delivered' : null),
        ),
      shrink: true,
    },
  ];
  if (wide) {
    cols.push(
      { header: 'NEXT ATTEMPT', value: (d) => d.NextAttempt ?? '' },
      {
        header: 'CALLBACK',
        value: (d) => callbackText(d.Request?.Method, d.Request?.Url),
        shrink: true,
      },
    );
  }
  return cols;
}

/**
 * `limit=5; max=8; receiver="http://…"` as a line for the person at the terminal, and whether it
 * is a warning: only a limit the receiver's own answers lowered is; the start-up ramp is not.
 */
export function paceLine(header: string): { text: string; warning: boolean } | undefined {
  const m = /limit=(\d+); max=(\d+); receiver="([^"]*)"/.exec(header);
  if (m === null) return undefined;
  const head = `receiver ${m[3]}:`;
  if (/;\s*state=ramping/.test(header))
    return { text: `${head} ramping up: ${m[1]} of ${m[2]}`, warning: false };
  const lowered = /;\s*state=lowered;\s*after\*=UTF-8''([^;\s]*)/.exec(header);
  if (lowered !== null)
    return {
      text: `${head} concurrency limit ${m[1]} of ${m[2]}: lowered after ${decoded(lowered[1]!)}`,
      warning: true,
    };
  return { text: `${head} concurrency limit ${m[1]} of ${m[2]}`, warning: false };
}

/** An RFC 8187 value's words; one that does not decode is shown as sent. */
function decoded(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/** Lists a hook's deliveries, newest first (GET /hooks/{id}/deliveries). */
export async function runDeliveries(opts: DeliveriesOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  let pace: ReturnType<typeof paceLine>;
  const list = await (await ctx.client()).deliveries(
    opts.hookId,
    {
      ...(opts.status && { status: opts.status }),
      ...(opts.since && { since: opts.since }),
      ...(opts.until && { until: opts.until }),
    },
    opts.limit,
    (h) => {
      pace = paceLine(h);
    },
  );
  if (out.format === 'json') return out.json(list);
  // The receiver's adaptive concurrency limit, on stderr so stdout stays the table.
  if (pace?.warning) out.warn(pace.text);
  else if (pace !== undefined) out.info(pace.text);
  if (list.length === 0) {
    if (out.isTTY)
      out.info(`no deliveries for ${opts.hookId}${opts.status ? ` with status ${opts.status}` : ''}`);
    return;
  }
  out.table(columns(out.format === 'wide'), list);
}

/** `hookctl deliveries HOOK [--status S] [--since ISO] [--until ISO] [--limit N]`. */
export function newDeliveriesCommand(context: ContextFactory, run = runDeliveries): Command {
  return new Command('deliveries')
    .description("list a hook's deliveries (the callbacks it sent or will send), newest first")
    .argument('<hook>', 'the hook Id or Name')
    .addOption(new Option('--status <status>', 'only deliveries in this state').choices(DELIVERY_STATUSES))
    .option('--since <time>', 'only deliveries created at or after this ISO 8601 time', isoArg('--since'))
    .option('--until <time>', 'only deliveries created before this ISO 8601 time', isoArg('--until'))
    .option('--limit <n>', 'show at most N deliveries', intArg('--limit', 1, 100000), 50)
    .addHelpText(
      'after',
      `${examples([
        'hookctl deliveries hk_01jd3k…',
        'hookctl deliveries hk_01jd3k… --status failed --since 2026-11-22T00:00:00Z',
        "hookctl deliveries hk_01jd3k… -o json | jq '.[0]'",
      ])}
TRIGGER [UPSTREAM] is the request that fired the hook and, in brackets, the status its upstream
answered ([-]: none, BeforeCompletion); LAST ANSWER is the receiver's answer to the callback
(<-- 200); -o wide adds the callback itself (--> POST URL). tail writes the same.
`,
    )
    .action(
      async (
        hookId: string,
        o: { status?: string; since?: string; until?: string; limit: number },
        cmd: Command,
      ) => run({ hookId, ...o }, context(cmd)),
    );
}

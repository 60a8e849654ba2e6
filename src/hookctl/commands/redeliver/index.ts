import { Command, Option } from 'commander';
import type { BulkRedeliveryView } from '../../api-views.js';
import { type ContextFactory, examples, isoArg, usageOf } from '../../command.js';
import { confirm } from '../../confirm.js';
import type { CliContext } from '../../context.js';
import { EXIT, ReportedError, UsageError } from '../../exit-codes.js';
import { DELIVERY_STATUSES } from '../deliveries/index.js';

export interface RedeliverOptions {
  deliveryId?: string;
  hook?: string;
  status?: string;
  since?: string;
  until?: string;
  yes?: boolean;
  usage: string;
}

type Filter = { status?: string; since?: string; until?: string };

/** One delivery Id, or `--hook` with optional filters: never both, never neither. */
export function validateRedeliver(opts: RedeliverOptions): void {
  const filters = ['status', 'since', 'until'].filter((k) => opts[k as keyof RedeliverOptions] !== undefined);
  if (opts.deliveryId !== undefined && opts.hook !== undefined) {
    throw new UsageError('give either a delivery Id or --hook, not both', { usage: opts.usage });
  }
  if (opts.deliveryId === undefined && opts.hook === undefined) {
    throw new UsageError('give a delivery Id, or --hook ID to redeliver many', { usage: opts.usage });
  }
  if (opts.deliveryId !== undefined && filters.length > 0) {
    throw new UsageError(`--${filters[0]} only applies with --hook`, { usage: opts.usage });
  }
}

function plural(n: number): string {
  return `${n} deliver${n === 1 ? 'y' : 'ies'}`;
}

/** `status failed, since …`: the filters as the user gave them, for messages. */
function describeFilter(f: Filter): string {
  const parts = [
    f.status && `in state ${f.status}`,
    f.since && `created since ${f.since}`,
    f.until && `created before ${f.until}`,
  ].filter(Boolean);
  return parts.join(', ');
}

/** Why nothing (or not everything) was queued: the line that follows "queued N …". */
export function explain(r: BulkRedeliveryView, hook: string, f: Filter): string | undefined {
  const pending = r.pending ?? 0;
  const filter = describeFilter(f);
  if (r.queued === 0) {
    if (pending > 0) {
      return `${pending === 1 ? 'the one matching delivery is' : `all ${pending} matching deliveries are`} still pending: hookd sends ${pending === 1 ? 'it' : 'them'} on the retry schedule (hookctl redeliver ID brings one forward)`;
    }
    return filter
      ? `no delivery of ${hook} is ${filter}; hookctl deliveries ${hook} lists them`
      : `${hook} has no deliveries yet`;
  }
  const notes: string[] = [];
  if (pending > 0)
    notes.push(`${plural(pending)} still pending ${pending === 1 ? 'was' : 'were'} left on their schedule`);
  const failed = r.failed ?? 0;
  if (failed > 0)
    notes.push(
      `${plural(failed)} failed again in the hook's Transform and ${failed === 1 ? 'stays' : 'stay'} failed (hookctl deliveries ${hook} --status failed shows why)`,
    );
  return notes.length > 0 ? notes.join('; ') : undefined;
}

/**
 * Queues deliveries again: one by Id (POST /_hookd/deliveries/{id}/redeliver, same delivery Id so the
 * receiver can de-duplicate) or a hook's deliveries (POST /hooks/{id}/redeliver): without a
 * filter every one of them, which on a terminal is confirmed first with the count (`--yes`
 * skips that; a run without a terminal needs `--yes` or a filter).
 */
export async function runRedeliver(opts: RedeliverOptions, ctx: CliContext): Promise<void> {
  validateRedeliver(opts);
  const out = ctx.output('table');
  const filter: Filter = {
    ...(opts.status && { status: opts.status }),
    ...(opts.since && { since: opts.since }),
    ...(opts.until && { until: opts.until }),
  };
  const all = Object.keys(filter).length === 0;
  const interactive = ctx.io.stdin.isTTY === true && ctx.io.stderr.isTTY === true;
  if (opts.hook !== undefined && all && !opts.yes && !interactive) {
    throw new UsageError(`this would redeliver every delivery of ${opts.hook}; confirm with --yes`, {
      usage: opts.usage,
      hint: 'or choose some with --status failed, --since TIME or --until TIME',
    });
  }
  const client = await ctx.client();
  if (opts.deliveryId !== undefined) {
    const delivery = await client.redeliver(opts.deliveryId);
    if (out.format === 'json') return out.json(delivery);
    out.out.write(`${delivery.Id ?? opts.deliveryId}\n`);
    out.info(`queued ${delivery.Id ?? opts.deliveryId} for delivery again`);
    return;
  }
  const hook = opts.hook!;
  if (all && !opts.yes) {
    const preview = await client.redeliverHook(hook, { dryRun: true });
    if (preview.queued === 0) {
      out.info(`queued 0 deliveries of ${hook}: ${explain(preview, hook, filter)}`);
      if (out.format === 'json')
        out.json({ queued: 0, pending: preview.pending ?? 0, failed: preview.failed ?? 0 });
      return;
    }
    const ok = await confirm(
      ctx.io,
      `Redeliver all ${plural(preview.queued)} of ${hook}${preview.pending ? ` (${preview.pending} pending are left alone)` : ''}?`,
    );
    if (!ok) {
      out.info('cancelled: nothing was queued');
      throw new ReportedError(EXIT.API);
    }
  }
  const result = await client.redeliverHook(hook, filter);
  if (out.format === 'json') return out.json(result);
  const why = explain(result, hook, filter);
  out.info(`queued ${plural(result.queued)} of ${hook} again${why ? `: ${why}` : ''}`);
}

/** `hookctl redeliver DELIVERY_ID` / `hookctl redeliver --hook ID [--status S] [--since ISO] [--until ISO] [--yes]`. */
export function newRedeliverCommand(context: ContextFactory, run = runRedeliver): Command {
  return new Command('redeliver')
    .description("send deliveries again: one by Id, or a hook's deliveries (all, or by status and time)")
    .argument('[delivery-id]', 'the delivery Id (msg_…; hookctl deliveries shows them)')
    .option('--hook <id>', "redeliver this hook's deliveries: all of them, or those matching the filters")
    .addOption(
      new Option('--status <status>', 'with --hook: only deliveries in this state').choices(
        DELIVERY_STATUSES,
      ),
    )
    .option(
      '--since <time>',
      'with --hook: only deliveries created at or after this ISO 8601 time',
      isoArg('--since'),
    )
    .option(
      '--until <time>',
      'with --hook: only deliveries created before this ISO 8601 time',
      isoArg('--until'),
    )
    .option('-y, --yes', 'with --hook and no filter: do not ask for confirmation (needed without a terminal)')
    .addHelpText(
      'after',
      `${examples([
        'hookctl redeliver msg_01jd3m…',
        'hookctl redeliver --hook hk_01jd3k… --status failed',
        'hookctl redeliver --hook hk_01jd3k… --status failed --since 2026-11-22T00:00:00Z',
        'hookctl redeliver --hook hk_01jd3k… --yes          # every delivery of the hook',
      ])}
--hook without a filter takes every delivery of the hook (succeeded and failed; pending ones
keep their schedule). On a terminal it first asks, stating the count; elsewhere it needs --yes.
Each delivery keeps its Id (webhook-id), so receivers can drop duplicates.
`,
    )
    .action(
      async (
        deliveryId: string | undefined,
        o: { hook?: string; status?: string; since?: string; until?: string; yes?: boolean },
        cmd: Command,
      ) => run({ ...(deliveryId !== undefined && { deliveryId }), ...o, usage: usageOf(cmd) }, context(cmd)),
    );
}

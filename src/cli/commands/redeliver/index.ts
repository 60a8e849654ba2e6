import { Command, Option } from 'commander';
import { type ContextFactory, examples, isoArg, usageOf } from '../../command.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../exit-codes.js';
import { DELIVERY_STATUSES } from '../deliveries/index.js';

export interface RedeliverOptions {
  deliveryId?: string;
  hook?: string;
  status?: string;
  since?: string;
  until?: string;
  usage: string;
}

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

/**
 * Queues deliveries again: one by Id (POST /_hookd/deliveries/{id}/redeliver, same delivery Id so the
 * receiver can de-duplicate) or a hook's deliveries by filter (POST /hooks/{id}/redeliver).
 */
export async function runRedeliver(opts: RedeliverOptions, ctx: CliContext): Promise<void> {
  validateRedeliver(opts);
  const out = ctx.output('table');
  const client = await ctx.client();
  if (opts.deliveryId !== undefined) {
    const delivery = await client.redeliver(opts.deliveryId);
    if (out.format === 'json') return out.json(delivery);
    out.out.write(`${delivery.Id ?? opts.deliveryId}\n`);
    out.info(`queued ${delivery.Id ?? opts.deliveryId} for delivery again`);
    return;
  }
  const filter = {
    ...(opts.status && { status: opts.status }),
    ...(opts.since && { since: opts.since }),
    ...(opts.until && { until: opts.until }),
  };
  const result = await client.redeliverHook(opts.hook!, filter);
  if (out.format === 'json') return out.json(result);
  out.info(`queued ${result.queued} deliver${result.queued === 1 ? 'y' : 'ies'} of ${opts.hook} again`);
}

/** `hookctl redeliver DELIVERY_ID` / `hookctl redeliver --hook ID [--status S] [--since ISO] [--until ISO]`. */
export function newRedeliverCommand(context: ContextFactory, run = runRedeliver): Command {
  return new Command('redeliver')
    .description("send deliveries again: one by Id, or a hook's deliveries by status and time")
    .argument('[delivery-id]', 'the delivery Id (msg_…; hookctl deliveries shows them)')
    .option('--hook <id>', "redeliver this hook's deliveries (all, or those matching the filters)")
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
    .addHelpText(
      'after',
      examples([
        'hookctl redeliver msg_01jd3m…',
        'hookctl redeliver --hook hk_01jd3k… --status failed',
        'hookctl redeliver --hook hk_01jd3k… --status failed --since 2026-11-22T00:00:00Z',
      ]),
    )
    .action(
      async (
        deliveryId: string | undefined,
        o: { hook?: string; status?: string; since?: string; until?: string },
        cmd: Command,
      ) => run({ ...(deliveryId !== undefined && { deliveryId }), ...o, usage: usageOf(cmd) }, context(cmd)),
    );
}

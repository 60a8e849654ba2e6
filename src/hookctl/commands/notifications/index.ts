import { Command, Option } from 'commander';
import type { NotificationEndpoint, NotificationEndpointInput } from '../../../client/index.js';
import { suggest } from '../../../util/index.js';
import { NOTIFICATION_TYPES } from '../../../wire/index.js';
import { type ContextFactory, examples } from '../../command.js';
import type { CliContext } from '../../context.js';
import { ApiError, exitCodeOf, formatError, ReportedError } from '../../exit-codes.js';
import type { Column } from '../../output.js';

/** A notification endpoint as the API returns it (`Secret` only in the answer to `add`). */
export type NotificationEndpointView = NotificationEndpoint & { Secret?: string };

function columns(): Column<NotificationEndpointView>[] {
  return [
    { header: 'ID', value: (e) => e.Id, paint: (t, _e, c) => c.cyan(t) },
    { header: 'URL', value: (e) => e.Url, shrink: true },
    { header: 'EVENTS', value: (e) => e.Events.join(',') },
    { header: 'DESCRIPTION', value: (e) => e.Description ?? '', shrink: true },
    { header: 'CREATED', value: (e) => e.Created },
  ];
}

export async function runList(ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const list: NotificationEndpointView[] = await (await ctx.client()).notificationEndpoints();
  if (out.format === 'json') return out.json(list);
  out.table(columns(), list);
}

export interface AddOptions {
  url: string;
  events?: string[];
  description?: string;
}

/** Registers an endpoint; prints it with its signing secret, which is shown this once. */
export async function runAdd(opts: AddOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const body: Record<string, unknown> = { Url: opts.url };
  if (opts.events) body.Events = opts.events;
  if (opts.description !== undefined) body.Description = opts.description;
  let e: NotificationEndpointView;
  try {
    e = await (await ctx.client()).addNotificationEndpoint(body as NotificationEndpointInput);
  } catch (err) {
    throw err instanceof ApiError ? withEventHint(err, opts.events ?? []) : err;
  }
  if (out.format === 'json') return out.json(e);
  out.table([...columns(), { header: 'SECRET', value: (v) => v.Secret ?? '' }], [e]);
  out.info('The SECRET verifies the signatures (Standard Webhooks) and is shown only now: keep it.');
}

/**
 * A refused event type gets a "did you mean" from the known ones (hook.disbled → hook.disabled),
 * unless the daemon's own message for that field already carries one: a suggestion is said once.
 */
export function withEventHint(err: ApiError, events: readonly string[]): ApiError {
  const bad = (err.problem.errors ?? [])
    .filter((e) => !/did you mean/.test(e.message))
    .map((e) => /^Events\[(\d+)\]$/.exec(e.field))
    .map((m) => (m ? events[Number(m[1])] : undefined))
    .filter((v): v is string => v !== undefined);
  if (bad.length === 0) return err;
  const hints = bad.map((b) => {
    const s = suggest(b, NOTIFICATION_TYPES);
    return s ? `"${b}": did you mean ${s}?` : `"${b}" is not an event type`;
  });
  return new ApiError(
    err.status,
    err.problem,
    `${hints.join('; ')} (the event types: ${NOTIFICATION_TYPES.join(', ')}, or *)`,
  );
}

/** Removes each endpoint; a refused Id is reported and the others still go (exit 1 then). */
export async function runRemove(ids: string[], ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const client = await ctx.client();
  let failed: ApiError | undefined;
  for (const id of ids) {
    try {
      await client.removeNotificationEndpoint(id);
      out.info(`removed ${id}`);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      failed ??= e;
      out.err.write(formatError(e, { debug: ctx.globals.debug, paint: out.errColor.red }));
    }
  }
  if (failed) throw new ReportedError(exitCodeOf(failed));
}

const splitList = (v: string, prev: string[] | undefined): string[] => [
  ...(prev ?? []),
  ...v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

/** `hookctl notifications list|add|remove`. */
export function newNotificationsCommand(context: ContextFactory): Command {
  const cmd = new Command('notifications')
    .description(
      'manage notification endpoints (hook.disabled, delivery.failed, breaker events, hook.certificate_expiring)',
    )
    .addHelpText(
      'after',
      `${examples([
        'hookctl notifications add https://ops.example.com/hookd',
        'hookctl notifications add https://example.com/n --events hook.disabled,delivery.failed',
        'hookctl notifications list',
        'hookctl notifications remove ne_01jd3k…',
      ])}
Event types: ${NOTIFICATION_TYPES.join(', ')} (default: all). The admin's endpoints hear
about every user's hooks; everyone else's only about their own. See man hookctl.
`,
    );
  cmd.addCommand(
    new Command('list')
      .alias('ls')
      .description('list your notification endpoints')
      .action(async (_o: unknown, c: Command) => runList(context(c))),
  );
  cmd.addCommand(
    new Command('add')
      .description('register a notification endpoint (prints its signing secret once)')
      .argument('<url>', 'where the notifications are POSTed (http:// or https://)')
      .addOption(
        new Option(
          '--events <types>',
          `event types, comma-separated: ${NOTIFICATION_TYPES.join(', ')} (default all)`,
        ).argParser(splitList),
      )
      .option('--description <text>', 'a note for people')
      .action(async (url: string, o: { events?: string[]; description?: string }, c: Command) =>
        runAdd({ url, ...o }, context(c)),
      ),
  );
  cmd.addCommand(
    new Command('remove')
      .alias('rm')
      .description('remove notification endpoints')
      .argument('<id...>', 'endpoint Ids (hookctl notifications list shows them)')
      .action(async (ids: string[], _o: unknown, c: Command) => runRemove(ids, context(c))),
  );
  return cmd;
}

import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { ApiError, exitCodeOf, formatError, ReportedError } from '../../../exit-codes.js';

export interface DeleteOptions {
  ids: string[];
}

/**
 * Deletes each hook, saying "deleted ID" on stderr. A hook the server refuses (404…) is reported
 * and the rest are still deleted; the exit code is then 1. Authentication or connection failures
 * stop at once, as they would fail for every Id.
 */
export async function runDelete(opts: DeleteOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const client = await ctx.client();
  let failed: ApiError | undefined;
  for (const id of opts.ids) {
    try {
      await client.deleteHook(id);
      out.info(`deleted ${id}`);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      failed ??= e;
      out.err.write(formatError(e, { debug: ctx.globals.debug, paint: out.errColor.red }));
    }
  }
  if (failed) throw new ReportedError(exitCodeOf(failed));
}

/** `hookctl hooks delete ID…` (and `hookctl delete ID…`). */
export function newDeleteCommand(context: ContextFactory, run = runDelete): Command {
  return new Command('delete')
    .alias('rm')
    .description('delete hooks')
    .argument('<id...>', 'hook Ids or Names')
    .addHelpText(
      'after',
      examples([
        'hookctl delete hk_01jd3k…',
        'hookctl list | cut -f1 | xargs hookctl delete   # all of them',
      ]),
    )
    .action(async (ids: string[], _o: unknown, cmd: Command) => run({ ids }, context(cmd)));
}

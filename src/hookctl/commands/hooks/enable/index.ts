import { Command } from 'commander';
import type { HookView } from '../../../api-views.js';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { ApiError, exitCodeOf, formatError, ReportedError } from '../../../exit-codes.js';

export interface EnableOptions {
  ids: string[];
}

/**
 * Re-enables each hook (`POST /hooks/{id}/enable`): one that a 410 Gone or auto-disable disabled
 * becomes `active` again, with its configuration unchanged. Says "enabled ID" on stderr (`-o json`:
 * the hooks on stdout). A refused Id is reported and the others still go; the exit code is then 1.
 */
export async function runEnable(opts: EnableOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const client = await ctx.client();
  let failed: ApiError | undefined;
  const enabled: HookView[] = [];
  for (const id of opts.ids) {
    try {
      const hook: HookView = await client.enableHook(id);
      enabled.push(hook);
      if (out.format !== 'json') out.info(`enabled ${id}`);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      failed ??= e;
      out.err.write(formatError(e, { debug: ctx.globals.debug, paint: out.errColor.red }));
    }
  }
  if (out.format === 'json') out.json(opts.ids.length === 1 && enabled.length === 1 ? enabled[0] : enabled);
  if (failed) throw new ReportedError(exitCodeOf(failed));
}

/** `hookctl hooks enable ID…` (and `hookctl enable ID…`). */
export function newEnableCommand(context: ContextFactory, run = runEnable): Command {
  return new Command('enable')
    .description('re-enable disabled hooks (410 Gone or auto-disable)')
    .argument('<id...>', 'hook Ids or Names')
    .addHelpText(
      'after',
      examples([
        'hookctl enable hk_01jd3k…',
        'hookctl list -o json | jq -r \'.[] | select(.State == "disabled") | .Id\' | xargs hookctl enable',
      ]),
    )
    .action(async (ids: string[], _o: unknown, cmd: Command) => run({ ids }, context(cmd)));
}

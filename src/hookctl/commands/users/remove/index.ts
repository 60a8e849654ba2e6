import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { ApiError, exitCodeOf, formatError, ReportedError } from '../../../exit-codes.js';
import { usersApi } from '../users-api.js';

export interface UsersRemoveOptions {
  names: string[];
}

/** Removes each user with its tokens and hooks (admin only); one refusal does not stop the rest. */
export async function runUsersRemove(opts: UsersRemoveOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const client = await ctx.client();
  let failed: ApiError | undefined;
  for (const name of opts.names) {
    try {
      await usersApi.remove(client, name);
      out.info(`removed user ${name}, its tokens and its hooks`);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      failed ??= e;
      out.err.write(formatError(e, { debug: ctx.globals.debug, paint: out.errColor.red }));
    }
  }
  if (failed) throw new ReportedError(exitCodeOf(failed));
}

/** `hookctl users remove NAME...`. */
export function newUsersRemoveCommand(context: ContextFactory, run = runUsersRemove): Command {
  return new Command('remove')
    .alias('rm')
    .description('remove users with their tokens and hooks (admin only)')
    .argument('<name...>', 'user names')
    .addHelpText('after', examples(['hookctl users remove carol']))
    .action(async (names: string[], _o: unknown, cmd: Command) => run({ names }, context(cmd)));
}

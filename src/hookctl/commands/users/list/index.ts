import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { USER_COLUMNS, usersApi } from '../users-api.js';

export type UsersListOptions = Record<string, never>;

/** Lists hookd's users and their scopes (admin only). */
export async function runUsersList(_opts: UsersListOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const users = await usersApi.list(await ctx.client());
  if (out.format === 'json') return out.json(users);
  out.table(USER_COLUMNS, users);
}

/** `hookctl users list`. */
export function newUsersListCommand(context: ContextFactory, run = runUsersList): Command {
  return new Command('list')
    .alias('ls')
    .description('list users and their scopes (admin only)')
    .addHelpText('after', examples(['hookctl users list', "hookctl users list -o json | jq -r '.[].Name'"]))
    .action(async (_o: unknown, cmd: Command) => run({}, context(cmd)));
}

import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { scopeArgs, USER_COLUMNS, usersApi } from '../users-api.js';

export interface UsersRevokeOptions {
  name: string;
  scopes: string[];
}

/**
 * Takes scopes away from a user (admin only). A scope the user does not have is named on stderr;
 * the others are still taken. Existing hooks stay, and fire only inside what is left.
 */
export async function runUsersRevoke(opts: UsersRevokeOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const client = await ctx.client();
  const user = await usersApi.get(client, opts.name);
  for (const s of opts.scopes)
    if (!user.Scopes.includes(s))
      out.info(`${out.errColor.yellow('warning:')} ${opts.name} has no scope ${s}`);
  const updated = await usersApi.setScopes(
    client,
    opts.name,
    user.Scopes.filter((s) => !opts.scopes.includes(s)),
  );
  if (out.format === 'json') return out.json(updated);
  out.table(USER_COLUMNS, [updated]);
}

/** `hookctl users revoke NAME SCOPE...`. */
export function newUsersRevokeCommand(context: ContextFactory, run = runUsersRevoke): Command {
  return new Command('revoke')
    .description('take scopes away from a user (admin only); its hooks then fire only inside what is left')
    .argument('<name>', 'user name')
    .argument('<scope...>', 'scopes to take away, as listed by hookctl users list')
    .addHelpText('after', examples(['hookctl users revoke carol /repositories/carol']))
    .action(async (name: string, scopes: string[], _o: unknown, cmd: Command) =>
      run({ name, scopes: scopeArgs(scopes) }, context(cmd)),
    );
}

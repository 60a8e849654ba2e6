import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { scopeArgs, USER_COLUMNS, usersApi } from '../users-api.js';

export interface UsersGrantOptions {
  name: string;
  scopes: string[];
}

/** Adds scopes to a user's (admin only): reads the user, then replaces its scopes with the union. */
export async function runUsersGrant(opts: UsersGrantOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const client = await ctx.client();
  const user = await usersApi.get(client, opts.name);
  const scopes = [...user.Scopes];
  for (const s of opts.scopes) if (!scopes.includes(s)) scopes.push(s);
  const updated = await usersApi.setScopes(client, opts.name, scopes);
  if (out.format === 'json') return out.json(updated);
  out.table(USER_COLUMNS, [updated]);
}

/** `hookctl users grant NAME SCOPE...`. */
export function newUsersGrantCommand(context: ContextFactory, run = runUsersGrant): Command {
  return new Command('grant')
    .description('let a user\'s hooks observe more: add path patterns or "own" to its scopes (admin only)')
    .argument('<name>', 'user name')
    .argument('<scope...>', 'path patterns (e.g. /repositories/acme) or "own"')
    .addHelpText(
      'after',
      examples(['hookctl users grant carol /repositories/carol', 'hookctl users grant ops /   # everything']),
    )
    .action(async (name: string, scopes: string[], _o: unknown, cmd: Command) =>
      run({ name, scopes: scopeArgs(scopes) }, context(cmd)),
    );
}

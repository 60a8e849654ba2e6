import { Command } from 'commander';
import { type ContextFactory, collect, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { permissionArgs, scopeArgs, USER_COLUMNS, usersApi } from '../users-api.js';

export interface UsersAddOptions {
  name: string;
  /** Absent: the server's default, ["own"]. */
  scopes?: string[];
  /** Permissions granted at once (`report`); absent: none. */
  permissions?: string[];
}

/** Adds a user (admin only); prints it as `users list` would. */
export async function runUsersAdd(opts: UsersAddOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const user = await usersApi.add(await ctx.client(), opts.name, opts.scopes, opts.permissions);
  if (out.format === 'json') return out.json(user);
  out.table(USER_COLUMNS, [user]);
  out.info(`added user ${user.Name}; create a token for it with: hookctl tokens create ${user.Name}`);
}

/** `hookctl users add NAME [--scope S]...`. */
export function newUsersAddCommand(context: ContextFactory, run = runUsersAdd): Command {
  return new Command('add')
    .description('add a user (admin only); its scopes default to "own"')
    .argument('<name>', 'user name')
    .option('--scope <scope>', 'a path pattern or "own" the user\'s hooks may observe (repeatable)', collect)
    .option(
      '--permission <name>',
      'grant a permission: report (may report requests made by anyone), portal (may make portal links)',
      collect,
    )
    .addHelpText(
      'after',
      examples([
        'hookctl users add carol                                  # scopes: own',
        'hookctl users add acme-ci --scope /repositories/acme',
        'hookctl users add ops --scope /repositories/a --scope /repositories/b',
        'hookctl users add billing-svc --scope /billing --permission report',
      ]),
    )
    .action(async (name: string, o: { scope?: string[]; permission?: string[] }, cmd: Command) =>
      run(
        {
          name,
          ...(o.scope !== undefined && { scopes: scopeArgs(o.scope) }),
          ...(o.permission !== undefined && { permissions: permissionArgs(o.permission) }),
        },
        context(cmd),
      ),
    );
}

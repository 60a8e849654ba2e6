import { Command } from 'commander';
import { type ContextFactory, collect, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { UsageError } from '../../../exit-codes.js';
import { permissionArgs, scopeArgs, USER_COLUMNS, usersApi } from '../users-api.js';

export interface UsersGrantOptions {
  name: string;
  scopes: string[];
  /** Permissions to add (`report`); empty: none. */
  permissions?: string[];
}

/**
 * Adds scopes and/or permissions to a user's (admin only): reads the user, then replaces its
 * scopes and permissions with the unions.
 */
export async function runUsersGrant(opts: UsersGrantOptions, ctx: CliContext): Promise<void> {
  const wanted = opts.permissions ?? [];
  if (opts.scopes.length === 0 && wanted.length === 0)
    throw new UsageError('name scopes to grant, or a permission with --permission report');
  const out = ctx.output('table');
  const client = await ctx.client();
  const user = await usersApi.get(client, opts.name);
  const scopes = [...user.Scopes];
  for (const s of opts.scopes) if (!scopes.includes(s)) scopes.push(s);
  const permissions = [...(user.Permissions ?? [])];
  for (const p of wanted) if (!permissions.includes(p)) permissions.push(p);
  const updated = await usersApi.setScopes(
    client,
    opts.name,
    scopes,
    wanted.length > 0 ? permissions : undefined,
  );
  if (out.format === 'json') return out.json(updated);
  out.table(USER_COLUMNS, [updated]);
}

/** `hookctl users grant NAME [SCOPE...] [--permission P]...`. */
export function newUsersGrantCommand(context: ContextFactory, run = runUsersGrant): Command {
  return new Command('grant')
    .description(
      'let a user\'s hooks observe more (path patterns or "own" added to its scopes), or grant it a permission (admin only)',
    )
    .argument('<name>', 'user name')
    .argument('[scope...]', 'path patterns (e.g. /repositories/acme) or "own"')
    .option(
      '--permission <name>',
      'grant a permission: report (its tokens may report requests made by anyone), portal (they may make portal links); repeatable',
      collect,
    )
    .addHelpText(
      'after',
      examples([
        'hookctl users grant carol /repositories/carol',
        'hookctl users grant ops /   # everything',
        'hookctl users grant billing-svc --permission report',
      ]),
    )
    .action(async (name: string, scopes: string[], o: { permission?: string[] }, cmd: Command) =>
      run({ name, scopes: scopeArgs(scopes), permissions: permissionArgs(o.permission) }, context(cmd)),
    );
}

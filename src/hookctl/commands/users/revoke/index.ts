import { Command } from 'commander';
import { type ContextFactory, collect, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { UsageError } from '../../../exit-codes.js';
import { permissionArgs, scopeArgs, USER_COLUMNS, usersApi } from '../users-api.js';

export interface UsersRevokeOptions {
  name: string;
  scopes: string[];
  /** Permissions to take away (`report`); empty: none. */
  permissions?: string[];
}

/**
 * Takes scopes and/or permissions away from a user (admin only). One the user does not have is
 * named on stderr; the others are still taken. Existing hooks stay, and fire only inside what is left.
 */
export async function runUsersRevoke(opts: UsersRevokeOptions, ctx: CliContext): Promise<void> {
  const unwanted = opts.permissions ?? [];
  if (opts.scopes.length === 0 && unwanted.length === 0)
    throw new UsageError('name scopes to take away, or a permission with --permission report');
  const out = ctx.output('table');
  const client = await ctx.client();
  const user = await usersApi.get(client, opts.name);
  for (const s of opts.scopes)
    if (!user.Scopes.includes(s))
      out.info(`${out.errColor.yellow('warning:')} ${opts.name} has no scope ${s}`);
  const had = user.Permissions ?? [];
  for (const p of unwanted)
    if (!had.includes(p)) out.info(`${out.errColor.yellow('warning:')} ${opts.name} has no permission ${p}`);
  const updated = await usersApi.setScopes(
    client,
    opts.name,
    user.Scopes.filter((s) => !opts.scopes.includes(s)),
    unwanted.length > 0 ? had.filter((p) => !unwanted.includes(p)) : undefined,
  );
  if (out.format === 'json') return out.json(updated);
  out.table(USER_COLUMNS, [updated]);
}

/** `hookctl users revoke NAME [SCOPE...] [--permission P]...`. */
export function newUsersRevokeCommand(context: ContextFactory, run = runUsersRevoke): Command {
  return new Command('revoke')
    .description(
      'take scopes or a permission away from a user (admin only); its hooks then fire only inside what is left',
    )
    .argument('<name>', 'user name')
    .argument('[scope...]', 'scopes to take away, as listed by hookctl users list')
    .option('--permission <name>', 'take a permission away: report (repeatable)', collect)
    .addHelpText(
      'after',
      examples([
        'hookctl users revoke carol /repositories/carol',
        'hookctl users revoke billing-svc --permission report',
      ]),
    )
    .action(async (name: string, scopes: string[], o: { permission?: string[] }, cmd: Command) =>
      run({ name, scopes: scopeArgs(scopes), permissions: permissionArgs(o.permission) }, context(cmd)),
    );
}

import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { ApiError, exitCodeOf, formatError, ReportedError } from '../../../exit-codes.js';
import { usersApi } from '../../users/users-api.js';

export interface TokensRevokeOptions {
  user: string;
  ids: string[];
}

/** Revokes each of a user's tokens by Id (admin only); one refusal does not stop the rest. */
export async function runTokensRevoke(opts: TokensRevokeOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const client = await ctx.client();
  let failed: ApiError | undefined;
  for (const id of opts.ids) {
    try {
      await usersApi.revokeToken(client, opts.user, id);
      out.info(`revoked token ${id} of ${opts.user}`);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      failed ??= e;
      out.err.write(formatError(e, { debug: ctx.globals.debug, paint: out.errColor.red }));
    }
  }
  if (failed) throw new ReportedError(exitCodeOf(failed));
}

/** `hookctl tokens revoke USER ID...`. */
export function newTokensRevokeCommand(context: ContextFactory, run = runTokensRevoke): Command {
  return new Command('revoke')
    .description('revoke API tokens of a user by Id (admin only)')
    .argument('<user>', 'user name')
    .argument('<id...>', 'token Ids, as listed by hookctl tokens list')
    .addHelpText('after', examples(['hookctl tokens revoke carol 3f2a9c0d1e4b']))
    .action(async (user: string, ids: string[], _o: unknown, cmd: Command) =>
      run({ user, ids }, context(cmd)),
    );
}

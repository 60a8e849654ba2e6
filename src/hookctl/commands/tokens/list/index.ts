import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { TOKEN_COLUMNS, type TokenView, usersApi } from '../../users/users-api.js';

export interface TokensListOptions {
  /** Absent: every user's tokens. */
  user?: string;
}

/** Lists tokens, Ids and labels only: their values are never shown again (admin only). */
export async function runTokensList(opts: TokensListOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const client = await ctx.client();
  const names = opts.user !== undefined ? [opts.user] : (await usersApi.list(client)).map((u) => u.Name);
  const tokens: TokenView[] = [];
  for (const name of names) tokens.push(...(await usersApi.tokens(client, name)));
  if (out.format === 'json') return out.json(tokens);
  out.table(TOKEN_COLUMNS, tokens);
}

/** `hookctl tokens list [USER]`. */
export function newTokensListCommand(context: ContextFactory, run = runTokensList): Command {
  return new Command('list')
    .alias('ls')
    .description('list API tokens (Ids and labels, never the tokens themselves; admin only)')
    .argument('[user]', "one user's tokens (default: everyone's)")
    .addHelpText('after', examples(['hookctl tokens list', 'hookctl tokens list carol']))
    .action(async (user: string | undefined, _o: unknown, cmd: Command) =>
      run(user === undefined ? {} : { user }, context(cmd)),
    );
}

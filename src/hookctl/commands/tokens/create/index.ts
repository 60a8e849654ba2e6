import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { usersApi } from '../../users/users-api.js';

export interface TokensCreateOptions {
  user: string;
  label?: string;
}

/**
 * Creates a token for a user (admin only). The token alone goes to stdout (pipe it to `hookctl
 * login`); `-o json` prints the whole record with it. It is shown this once: hookd keeps a hash.
 */
export async function runTokensCreate(opts: TokensCreateOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const t = await usersApi.createToken(await ctx.client(), opts.user, opts.label);
  if (out.format === 'json') return out.json(t);
  out.info(`created token ${t.Id} for ${t.User}; it is shown only now:`);
  out.out.write(`${t.Token ?? ''}\n`);
}

/** `hookctl tokens create USER [--label TEXT]`. */
export function newTokensCreateCommand(context: ContextFactory, run = runTokensCreate): Command {
  return new Command('create')
    .description('create an API token for a user (admin only); printed once, on stdout')
    .argument('<user>', 'user name')
    .option('--label <text>', 'a note to recognise the token by')
    .addHelpText(
      'after',
      examples([
        'hookctl tokens create carol --label laptop',
        'hookctl tokens create carol | hookctl login --profile carol',
      ]),
    )
    .action(async (user: string, o: { label?: string }, cmd: Command) =>
      run({ user, ...(o.label !== undefined && { label: o.label }) }, context(cmd)),
    );
}

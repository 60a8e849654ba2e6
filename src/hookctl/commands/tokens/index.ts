import { Command } from 'commander';
import { type ContextFactory, examples } from '../../command.js';
import { newTokensCreateCommand } from './create/index.js';
import { newTokensListCommand } from './list/index.js';
import { newTokensRevokeCommand } from './revoke/index.js';

/** `hookctl tokens create|list|revoke` (admin only: /_hookd/users/{name}/tokens…). */
export function newTokensCommand(context: ContextFactory): Command {
  const cmd = new Command('tokens')
    .description("manage users' API tokens (admin only)")
    .addHelpText(
      'after',
      examples([
        'hookctl tokens create carol --label ci',
        'hookctl tokens list carol',
        'hookctl tokens revoke carol 3f2a9c0d1e4b',
      ]),
    );
  cmd
    .addCommand(newTokensCreateCommand(context))
    .addCommand(newTokensListCommand(context))
    .addCommand(newTokensRevokeCommand(context));
  return cmd;
}

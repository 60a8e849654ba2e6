import { Command } from 'commander';
import { type ContextFactory, examples } from '../../command.js';
import { newUsersAddCommand } from './add/index.js';
import { newUsersGrantCommand } from './grant/index.js';
import { newUsersListCommand } from './list/index.js';
import { newUsersRemoveCommand } from './remove/index.js';
import { newUsersRevokeCommand } from './revoke/index.js';

/** `hookctl users list|add|remove|grant|revoke` (admin only: GET/POST/PUT/DELETE /_hookd/users…). */
export function newUsersCommand(context: ContextFactory): Command {
  const cmd = new Command('users')
    .description("manage users and their scopes: what each user's hooks may observe (admin only)")
    .addHelpText(
      'after',
      `${examples([
        'hookctl users list',
        'hookctl users add carol --scope /repositories/carol',
        'hookctl users grant carol own',
        'hookctl users revoke carol /repositories/carol',
        'hookctl users remove carol',
      ])}
Scopes are path patterns ("requests under this path") or the word "own" ("requests made by this
user"). A hook fires only for requests inside one of its owner's scopes.
`,
    );
  cmd
    .addCommand(newUsersListCommand(context))
    .addCommand(newUsersAddCommand(context))
    .addCommand(newUsersRemoveCommand(context))
    .addCommand(newUsersGrantCommand(context))
    .addCommand(newUsersRevokeCommand(context));
  return cmd;
}

import { Command } from 'commander';
import { type ContextFactory, examples } from '../../command.js';
import { newProfileListCommand } from './list/index.js';
import { newProfileRemoveCommand } from './remove/index.js';
import { newProfileUseCommand } from './use/index.js';

/** `hookctl profile list|use|remove`. */
export function newProfileCommand(context: ContextFactory): Command {
  return new Command('profile')
    .description('manage saved profiles (server + token; create them with hookctl login)')
    .addHelpText('after', examples(['hookctl profile list', 'hookctl profile use staging']))
    .addCommand(newProfileListCommand(context))
    .addCommand(newProfileUseCommand(context))
    .addCommand(newProfileRemoveCommand(context));
}

import { Command } from 'commander';
import { type ContextFactory, examples } from '../../command.js';
import { newCreateCommand } from './create/index.js';
import { newDeleteCommand } from './delete/index.js';
import { newEditCommand } from './edit/index.js';
import { newEnableCommand } from './enable/index.js';
import { newGetCommand } from './get/index.js';
import { newListCommand } from './list/index.js';
import { newReplaceCommand } from './replace/index.js';

export {
  newCreateCommand,
  newDeleteCommand,
  newEditCommand,
  newEnableCommand,
  newGetCommand,
  newListCommand,
  newReplaceCommand,
};

/** The hook commands, built fresh for each parent (`hookctl hooks …` and the root shortcuts). */
export function hookSubcommands(context: ContextFactory): Command[] {
  return [
    newListCommand(context),
    newGetCommand(context),
    newCreateCommand(context),
    newReplaceCommand(context),
    newEditCommand(context),
    newDeleteCommand(context),
    newEnableCommand(context),
  ];
}

/** `hookctl hooks list|get|create|replace|edit|delete|enable`. */
export function newHooksCommand(context: ContextFactory): Command {
  const cmd = new Command('hooks')
    .description('manage hooks (list, get, create, replace, edit, delete, enable)')
    .addHelpText('after', examples(['hookctl hooks list', 'hookctl hooks create -f hook.json']));
  for (const sub of hookSubcommands(context)) cmd.addCommand(sub);
  return cmd;
}

import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';

export interface ProfileUseOptions {
  name: string;
}

/** Makes a profile the current one (used when neither --profile nor HOOKCTL_PROFILE is given). */
export async function runProfileUse(opts: ProfileUseOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const profiles = await ctx.profiles();
  profiles.use(opts.name);
  out.info(`now using profile "${opts.name}" (${profiles.get(opts.name)!.server})`);
}

/** `hookctl profile use NAME`. */
export function newProfileUseCommand(context: ContextFactory, run = runProfileUse): Command {
  return new Command('use')
    .description('make a profile the current one')
    .argument('<name>', 'the profile name (hookctl profile list)')
    .addHelpText(
      'after',
      examples(['hookctl profile use staging', 'hookctl --profile prod list   # one command only']),
    )
    .action(async (name: string, _o: unknown, cmd: Command) => run({ name }, context(cmd)));
}

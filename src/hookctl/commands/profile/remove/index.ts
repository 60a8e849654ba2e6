import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';

export interface ProfileRemoveOptions {
  name: string;
}

/** Forgets a profile and its token (the token stays valid on the server: revoke it there). */
export async function runProfileRemove(opts: ProfileRemoveOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  (await ctx.profiles()).remove(opts.name);
  out.info(`removed profile "${opts.name}"; the token still works until revoked (hookd token revoke ID)`);
}

/** `hookctl profile remove NAME`. */
export function newProfileRemoveCommand(context: ContextFactory, run = runProfileRemove): Command {
  return new Command('remove')
    .alias('rm')
    .description('delete a saved profile and its token from this machine')
    .argument('<name>', 'the profile name')
    .addHelpText('after', examples(['hookctl profile remove staging']))
    .action(async (name: string, _o: unknown, cmd: Command) => run({ name }, context(cmd)));
}

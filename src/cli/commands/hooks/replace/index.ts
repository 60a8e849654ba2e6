import { Command } from 'commander';
import { type ContextFactory, examples, usageOf } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { readHookFile } from '../hook-file.js';

export interface ReplaceOptions {
  id: string;
  file: string;
  usage: string;
}

/**
 * Replaces a hook's whole configuration (fields left out take their defaults). Prints the Id, or
 * the stored hook with -o json.
 */
export async function runReplace(opts: ReplaceOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const doc = await readHookFile(opts.file, ctx, opts.usage);
  const hook = await (await ctx.client()).replaceHook(opts.id, doc);
  if (out.format === 'json') return out.json(hook);
  out.out.write(`${hook.Id}\n`);
}

/** `hookctl hooks replace ID -f FILE` (and `hookctl replace ID -f FILE`). */
export function newReplaceCommand(context: ContextFactory, run = runReplace): Command {
  return new Command('replace')
    .description('replace a hook with the configuration in a JSON file')
    .argument('<id>', 'the hook Id')
    .requiredOption('-f, --file <file>', 'the hook as JSON; - reads standard input')
    .addHelpText(
      'after',
      examples([
        'hookctl get hk_01jd3k… > hook.json   # edit, then:',
        'hookctl replace hk_01jd3k… -f hook.json',
        "hookctl get hk_01jd3k… | jq '.Persist = false' | hookctl replace hk_01jd3k… -f -",
      ]),
    )
    .action(async (id: string, o: { file: string }, cmd: Command) =>
      run({ id, file: o.file, usage: usageOf(cmd) }, context(cmd)),
    );
}

import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { hookColumns } from '../hook-columns.js';

export interface GetOptions {
  id: string;
}

/**
 * Prints one hook. JSON by default, so that `get ID > h.json`, an edit and `replace ID -f h.json`
 * round-trip (the server ignores the read-only fields it returned); `-o table|wide` for a row.
 */
export async function runGet(opts: GetOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('json');
  const hook = await (await ctx.client()).getHook(opts.id);
  if (out.format === 'json') return out.json(hook);
  out.table(hookColumns(out.format, [hook], !out.isTTY), [hook]);
}

/** `hookctl hooks get ID` (and `hookctl get ID`). */
export function newGetCommand(context: ContextFactory, run = runGet): Command {
  return new Command('get')
    .description('print a hook (JSON unless -o table|wide)')
    .argument('<id>', 'the hook Id or Name (hookctl list shows them)')
    .addHelpText(
      'after',
      examples([
        'hookctl get hk_01jd3k…',
        'hookctl get hk_01jd3k… > hook.json && $EDITOR hook.json && hookctl replace hk_01jd3k… -f hook.json',
        'hookctl edit hk_01jd3k…   # the same in one step',
        'hookctl get hk_01jd3k… -o wide',
      ]),
    )
    .action(async (id: string, _o: unknown, cmd: Command) => run({ id }, context(cmd)));
}

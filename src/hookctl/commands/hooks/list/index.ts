import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { hookColumns } from '../hook-columns.js';

export type ListOptions = Record<string, never>;

/** Lists the caller's hooks, every page. An empty list is a success (exit 0). */
export async function runList(_opts: ListOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const hooks = await (await ctx.client()).listHooks();
  if (out.format === 'json') return out.json(hooks);
  if (hooks.length === 0) {
    if (out.isTTY) out.info('no hooks yet; create one with: hookctl create -f hook.json');
    return;
  }
  out.table(hookColumns(out.format, hooks, !out.isTTY), hooks);
}

/** `hookctl hooks list` (and the shortcut `hookctl list`). */
export function newListCommand(context: ContextFactory, run = runList): Command {
  return new Command('list')
    .alias('ls')
    .description('list your hooks')
    .addHelpText(
      'after',
      examples([
        'hookctl list',
        'hookctl list -o wide',
        'hookctl list -o json | jq -r \'.[] | select(.State == "disabled") | .Id\'',
        'hookctl list | cut -f1          # Ids only (tab-separated when piped)',
        'hookctl list | cut -f2          # Names (always the second column when piped)',
      ]),
    )
    .action(async (_o: unknown, cmd: Command) => run({}, context(cmd)));
}

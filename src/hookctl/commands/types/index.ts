import { Command } from 'commander';
import type { HookTypeView } from '../../api-views.js';
import { type ContextFactory, examples } from '../../command.js';
import type { CliContext } from '../../context.js';
import type { Column } from '../../output.js';

export type TypesOptions = Record<string, never>;

const COLUMNS: Column<HookTypeView>[] = [
  { header: 'TYPE', value: (t) => String(t.Type) },
  { header: 'NAME', value: (t) => t.Name, paint: (s, _t, c) => c.bold(s) },
  { header: 'DESCRIPTION', value: (t) => t.Description ?? '', shrink: true },
];

/** Lists the hook types the server supports (GET /hooktypes). */
export async function runTypes(_opts: TypesOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const types = await (await ctx.client()).hookTypes();
  if (out.format === 'json') return out.json(types);
  out.table(COLUMNS, types);
}

/** `hookctl types`. */
export function newTypesCommand(context: ContextFactory, run = runTypes): Command {
  return new Command('types')
    .description("list the hook types (the values of a hook's Type field)")
    .addHelpText('after', examples(['hookctl types', 'hookctl types -o json']))
    .action(async (_o: unknown, cmd: Command) => run({}, context(cmd)));
}

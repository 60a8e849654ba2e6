import { Command } from 'commander';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import type { Column } from '../../../output.js';
import type { Profile } from '../../../profiles.js';

export type ProfileListOptions = Record<string, never>;

type Row = { name: string; profile: Profile; current: boolean };

const COLUMNS: Column<Row>[] = [
  { header: 'CURRENT', value: (r) => (r.current ? '*' : ''), paint: (t, _r, c) => c.green(t) },
  { header: 'NAME', value: (r) => r.name, paint: (t, r, c) => (r.current ? c.bold(t) : t) },
  { header: 'SERVER', value: (r) => r.profile.server, shrink: true },
  { header: 'TOKEN', value: (r) => (r.profile.token ? 'set' : 'none') },
];

/** Lists the saved profiles; tokens are never printed. */
export async function runProfileList(_opts: ProfileListOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const profiles = await ctx.profiles();
  const rows = profiles.list();
  if (out.format === 'json') {
    return out.json(
      rows.map((r) => ({
        Name: r.name,
        Server: r.profile.server,
        HasToken: Boolean(r.profile.token),
        Current: r.current,
      })),
    );
  }
  if (rows.length === 0) {
    if (out.isTTY) out.info(`no profiles in ${profiles.path}; create one with: hookctl login`);
    return;
  }
  out.table(COLUMNS, rows);
}

/** `hookctl profile list`. */
export function newProfileListCommand(context: ContextFactory, run = runProfileList): Command {
  return new Command('list')
    .alias('ls')
    .description('list saved profiles (the current one is marked *)')
    .addHelpText('after', examples(['hookctl profile list', 'hookctl profile list -o json']))
    .action(async (_o: unknown, cmd: Command) => run({}, context(cmd)));
}

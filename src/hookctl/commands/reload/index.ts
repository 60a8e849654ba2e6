import { Command } from 'commander';
import { type ContextFactory, examples } from '../../command.js';
import type { CliContext } from '../../context.js';

export type ReloadOptions = Record<string, never>;

/**
 * Asks hookd to re-read its config file (POST /reload, admin only). An API call rather than a
 * signal, so it works for a remote daemon and reports whether the new config was accepted.
 */
export async function runReload(_opts: ReloadOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const applied = await (await ctx.client()).reload();
  if (out.format === 'json') return out.json(applied);
  const r = (applied ?? {}) as { applied?: unknown; restartRequired?: unknown };
  const list = (v: unknown) => (Array.isArray(v) && v.length ? v.join(', ') : 'nothing');
  out.info(`hookd reloaded its configuration; applied: ${list(r.applied)}`);
  if (Array.isArray(r.restartRequired) && r.restartRequired.length) {
    out.info(
      `${out.errColor.yellow('warning:')} these changes take effect only after a restart: ${list(r.restartRequired)}`,
    );
  }
}

/** `hookctl reload`. */
export function newReloadCommand(context: ContextFactory, run = runReload): Command {
  return new Command('reload')
    .description('make hookd re-read its config file (needs the admin token)')
    .addHelpText(
      'after',
      `${examples(['hookctl reload', 'hookctl reload -o json   # the configuration now in force'])}
An invalid config file is refused (exit 1, each problem listed) and the old one stays in force.
`,
    )
    .action(async (_o: unknown, cmd: Command) => run({}, context(cmd)));
}

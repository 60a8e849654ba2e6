import { Command } from 'commander';
import { type ContextFactory, collect, examples, usageOf } from '../../command.js';
import type { CliContext } from '../../context.js';
import { EXIT, ReportedError } from '../../exit-codes.js';
import { loadHookFiles, planHooks, unifiedDiff } from '../../hook-set/index.js';
import { refusedAs5, reportInvalid } from '../apply/index.js';

export interface DiffOptions {
  files: string[];
  prune: boolean;
  usage: string;
}

/**
 * Shows what `apply` would change, as a unified diff of each hook's canonical JSON (server's
 * copy → file), kubectl diff style; red/green on a terminal. Exit 0 no differences, 1
 * differences, 5 a file hook is invalid or the server refused, 2/3/4 as for every command.
 */
export async function runDiff(opts: DiffOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const entries = await loadHookFiles(opts.files, ctx.io, opts.usage);
  const client = await ctx.client();
  const plan = await refusedAs5(ctx, async () => planHooks(entries, await client.listHooks(), opts.prune));
  const failed = reportInvalid(plan.invalid, out, ctx);
  let changed = 0;
  const c = out.color;
  for (const step of plan.steps) {
    if (step.action === 'unchanged') continue;
    changed++;
    const from = step.action === 'created' ? '/dev/null' : `hook/${step.name} (live ${step.live!.Id})`;
    const to = step.action === 'pruned' ? '/dev/null' : `hook/${step.name} (${step.entry!.source})`;
    const text = unifiedDiff(step.liveText, step.fileText, from, to);
    out.out.write(
      `diff -u hook/${step.name} ${step.action === 'pruned' ? '(to be pruned)' : ''}`.trimEnd() + '\n',
    );
    for (const line of text.replace(/\n$/, '').split('\n')) {
      const painted =
        line.startsWith('+++') || line.startsWith('---')
          ? c.bold(line)
          : line.startsWith('@@')
            ? c.cyan(line)
            : line.startsWith('+')
              ? c.green(line)
              : line.startsWith('-')
                ? c.red(line)
                : line;
      out.out.write(`${painted}\n`);
    }
  }
  if (failed > 0) throw new ReportedError(EXIT.REFUSED);
  if (changed > 0) throw new ReportedError(EXIT.CHANGED);
}

/** `hookctl diff -f FILE|DIR… [--prune]`. */
export function newDiffCommand(context: ContextFactory, run = runDiff): Command {
  return new Command('diff')
    .description("show what apply would change: a unified diff of each hook's canonical JSON")
    .requiredOption(
      '-f, --file <file|dir>',
      'a hook file (JSON or YAML, object or list, YAML streams), a directory of *.json/*.yaml, - for stdin (repeatable)',
      collect,
    )
    .option('--prune', 'also show the named hooks apply --prune would delete')
    .addHelpText(
      'after',
      `${examples(['hookctl diff -f hooks/', 'hookctl diff -f hooks/orders.json | less -R'])}
Compared: each hook as the server would store it (defaults filled in), without Id, Owner,
Modified, State and the signing secret. Exit status (kubectl diff's): 0 no differences,
1 differences, 5 a hook is invalid or the server refused, 2 usage or an invalid file,
3 unreachable, 4 auth.
`,
    )
    .action(async (o: { file: string[]; prune?: boolean }, cmd: Command) =>
      run({ files: o.file, prune: o.prune === true, usage: usageOf(cmd) }, context(cmd)),
    );
}

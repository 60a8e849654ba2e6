import { Command } from 'commander';
import type { ApiClient } from '../../api-client.js';
import { type ContextFactory, collect, examples, usageOf } from '../../command.js';
import type { CliContext } from '../../context.js';
import { ApiError, EXIT, formatError, ReportedError } from '../../exit-codes.js';
import { type Invalid, loadHookFiles, planHooks, type Step } from '../../hook-set/index.js';
import type { Output } from '../../output.js';

export interface ApplyOptions {
  files: string[];
  prune: boolean;
  dryRun: boolean;
  usage: string;
}

/** One line of `-o json`: what happened to a Name. */
interface Outcome {
  Name: string;
  Action: Step['action'] | 'failed';
  Id?: string;
  DryRun?: true;
  Error?: string;
}

/**
 * Makes the caller's hooks match the files: creates the missing Names, replaces those that differ
 * (If-Match: the version read, so a change made meanwhile is refused, not overwritten), and with
 * --prune deletes the caller's named hooks that no file names. Prints `hook/NAME created|
 * configured|unchanged|pruned` (kubectl's words). Exit 0 nothing changed, 1 changes made (or,
 * with --dry-run, to make), 5 at least one hook refused (the others went through).
 */
export async function runApply(opts: ApplyOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const entries = await loadHookFiles(opts.files, ctx.io, opts.usage);
  const client = await ctx.client();
  const plan = await refusedAs5(ctx, async () => planHooks(entries, await client.listHooks(), opts.prune));
  const outcomes: Outcome[] = [];
  let failed = reportInvalid(plan.invalid, out, ctx, outcomes);
  let changed = 0;
  for (const step of plan.steps) {
    if (step.action === 'unchanged') {
      outcomes.push({ Name: step.name, Action: 'unchanged', ...(step.live && { Id: step.live.Id }) });
      if (out.format !== 'json') out.out.write(`hook/${step.name} unchanged\n`);
      continue;
    }
    changed++;
    if (opts.dryRun) {
      outcomes.push({
        Name: step.name,
        Action: step.action,
        ...(step.live && { Id: step.live.Id }),
        DryRun: true,
      });
      if (out.format !== 'json') out.out.write(`hook/${step.name} ${step.action} (dry run)\n`);
      continue;
    }
    try {
      const id = await perform(client, step);
      outcomes.push({ Name: step.name, Action: step.action, Id: id });
      if (out.format !== 'json') out.out.write(`hook/${step.name} ${step.action}\n`);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      failed++;
      outcomes.push({ Name: step.name, Action: 'failed', Error: e.message });
      reportFailure(step, e, out, ctx);
    }
  }
  if (out.format === 'json') out.json(outcomes);
  if (failed > 0) throw new ReportedError(EXIT.REFUSED);
  if (changed > 0) throw new ReportedError(EXIT.CHANGED);
}

async function perform(client: ApiClient, step: Step): Promise<string> {
  switch (step.action) {
    case 'created':
      return (await client.createHook(step.entry!.doc)).Id;
    case 'configured':
      return (await client.replaceHook(step.live!.Id, step.entry!.doc, step.etag)).Id;
    default:
      await client.deleteHook(step.live!.Id, step.etag);
      return step.live!.Id;
  }
}

function reportFailure(step: Step, e: ApiError, out: Output, ctx: CliContext): void {
  const where = step.entry ? ` (${step.entry.source})` : '';
  const hint =
    e.status === 412
      ? `hook/${step.name} was changed on the server after apply read it; nothing was overwritten. See the change with: hookctl diff -f …, then apply again`
      : e.hint;
  const at = step.entry?.fieldSource;
  const errors = at
    ? e.problem.errors?.map((f) => ({ ...f, message: `${at(f.field)}: ${f.message}` }))
    : undefined;
  const err = new ApiError(
    e.status,
    { ...e.problem, detail: `hook/${step.name}${where}: ${e.message}`, ...(errors && { errors }) },
    hint,
  );
  out.err.write(formatError(err, { debug: ctx.globals.debug, paint: (s) => out.errColor.red(s) }));
}

/** Hooks the local checks refuse: reported like the server's 400, counted as failed. */
export function reportInvalid(
  invalid: Invalid[],
  out: Output,
  ctx: CliContext,
  outcomes?: Outcome[],
): number {
  for (const { entry, error } of invalid) {
    outcomes?.push({ Name: entry.name, Action: 'failed', Error: error.message });
    // YAML files: each field error names the line the field is written on.
    const errors = entry.fieldSource
      ? error.errors?.map((f) => ({ ...f, message: `${entry.fieldSource!(f.field)}: ${f.message}` }))
      : error.errors;
    const err = new ApiError(error.status, {
      detail: `hook/${entry.name} (${entry.source}): ${error.message}`,
      ...(errors && { errors }),
    });
    out.err.write(formatError(err, { debug: ctx.globals.debug, paint: (s) => out.errColor.red(s) }));
  }
  return invalid.length;
}

/** A refusal before any step ran (listing the hooks): printed, exit 5 rather than "changed". */
export async function refusedAs5<T>(ctx: CliContext, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    const paint = ctx.output().errColor;
    ctx.io.stderr.write(formatError(e, { debug: ctx.globals.debug, paint: (s) => paint.red(s) }));
    throw new ReportedError(EXIT.REFUSED);
  }
}

/** `hookctl apply -f FILE|DIR… [--prune] [--dry-run]`. */
export function newApplyCommand(context: ContextFactory, run = runApply): Command {
  return new Command('apply')
    .description('create or replace hooks from files keyed by Name (hooks as code); --prune deletes the rest')
    .requiredOption(
      '-f, --file <file|dir>',
      'a hook file (JSON or YAML, object or list, YAML streams), a directory of *.json/*.yaml, - for stdin (repeatable)',
      collect,
    )
    .option(
      '--prune',
      "also delete the caller's named hooks that no file names (unnamed hooks are never touched)",
    )
    .option('--dry-run', 'print what would change, change nothing')
    .addHelpText(
      'after',
      `${examples([
        'hookctl apply -f hooks/',
        'hookctl apply -f hooks/ --prune --dry-run',
        'hookctl diff -f hooks/ && echo "nothing to apply"',
      ])}
Each hook must have a Name: it is what matches a file to the server's hook. Read-only fields
(Id, Owner, Modified, State) and the signing secret are not compared. A hook that differs is
replaced with If-Match, so a change made on the server after apply read it is refused (412).
Output: hook/NAME created|configured|unchanged|pruned, "(dry run)" with --dry-run.
Exit status: 0 nothing to change, 1 changes applied (or to apply, with --dry-run), 5 a hook
was refused (the others were applied), 2 usage or an invalid file, 3 unreachable, 4 auth.
`,
    )
    .action(async (o: { file: string[]; prune?: boolean; dryRun?: boolean }, cmd: Command) =>
      run(
        { files: o.file, prune: o.prune === true, dryRun: o.dryRun === true, usage: usageOf(cmd) },
        context(cmd),
      ),
    );
}

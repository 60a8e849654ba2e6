import { Command } from 'commander';
import { etagOf } from '../../../../hook/index.js';
import type { HookView } from '../../../api-views.js';
import { type ContextFactory, examples, usageOf } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { ApiError, UsageError } from '../../../exit-codes.js';
import {
  HOOK_FIELDS_HELP,
  type HookFileFlags,
  type HookFileInputs,
  hookFileInputsOf,
  hookFileOptions,
  printWarnings,
  readHookInputs,
} from '../hook-file.js';

export interface ReplaceOptions extends HookFileInputs {
  id: string;
  force: boolean;
}

/** The file's `Id`, when it names a hook other than the one being replaced. */
export function foreignId(doc: unknown, id: string): string | undefined {
  const d = doc as { Id?: unknown; Name?: unknown } | null;
  // `hookctl replace NAME -f FILE` names the hook by its Name: the file's Id is its own.
  if (typeof d?.Name === 'string' && d.Name === id) return undefined;
  const own = d?.Id;
  return typeof own === 'string' && own !== id ? own : undefined;
}

/**
 * The 412 of a stale copy, told in hookctl's terms, once: the server's own detail says the same
 * in API terms (If-Match, ETag), so it is not appended.
 */
export function staleCopyError(e: ApiError, id: string, source: string, retry: string): ApiError {
  return new ApiError(
    e.status,
    { ...e.problem, detail: `${id} was changed on the server after ${source} was read` },
    retry,
  );
}

/** Fields the server sets: a file and the stored hook may differ in them and still agree. */
const SERVER_FIELDS = new Set([
  'Id',
  'Owner',
  'Modified',
  'Created',
  'Warnings',
  'DisabledReason',
  'DisabledAt',
  'VerificationResult',
]);

/**
 * Whether the stored hook already is what the file says (the same fields, the same values, the
 * server's own fields aside): replacing twice from one file is then a no-op, not a conflict.
 */
export function sameContent(doc: unknown, stored: HookView): boolean {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return false;
  const pick = (o: object) =>
    Object.fromEntries(
      Object.entries(o)
        .filter(([k]) => !SERVER_FIELDS.has(k))
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    );
  return JSON.stringify(pick(doc)) === JSON.stringify(pick(stored));
}

/**
 * Replaces a hook's whole configuration (fields left out take their defaults). Safe by default:
 * a file whose `Id` is another hook's is refused, and the file's `Modified` is sent as
 * `If-Match`, so a copy older than the hook on the server is refused (412) instead of undoing
 * someone's change. `--force` skips both. Prints the Id, or the stored hook with -o json.
 */
export async function runReplace(opts: ReplaceOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const doc = await readHookInputs(opts, ctx);
  const source = opts.file === '-' ? 'standard input' : opts.file;
  let ifMatch: string | undefined;
  if (!opts.force) {
    const other = foreignId(doc, opts.id);
    if (other !== undefined) {
      throw new UsageError(
        `${source} is hook ${other}, not ${opts.id}: refusing to replace ${opts.id} with it`,
        {
          hint: `replace that hook with: hookctl replace ${other} -f ${opts.file}; or copy it over ${opts.id} with --force`,
        },
      );
    }
    if (doc !== null && typeof doc === 'object') ifMatch = etagOf(doc as { Modified?: unknown });
  }
  let hook: HookView;
  const client = await ctx.client();
  try {
    hook = await client.replaceHook(opts.id, doc, ifMatch);
  } catch (e) {
    if (e instanceof ApiError && e.status === 412) {
      // The same file replayed (the first replace moved Modified on): nothing to change.
      const stored = await client.getHook(opts.id);
      if (sameContent(doc, stored)) {
        out.info(`${opts.id} already matches ${source}: nothing to replace`);
        if (out.format === 'json') return out.json(stored);
        out.out.write(`${stored.Id}\n`);
        return;
      }
      throw staleCopyError(
        e,
        opts.id,
        source,
        `get it again (hookctl get ${opts.id} > hook.json), make your change there and replace; or edit it in place with: hookctl edit ${opts.id}; --force overwrites the newer version`,
      );
    }
    throw e;
  }
  printWarnings(out, hook);
  if (out.format === 'json') return out.json(hook);
  out.out.write(`${hook.Id}\n`);
}

/** `hookctl hooks replace ID -f FILE [--force]` (and `hookctl replace ID -f FILE`). */
export function newReplaceCommand(context: ContextFactory, run = runReplace): Command {
  return hookFileOptions(
    new Command('replace')
      .description('replace a hook with the configuration in a JSON file (refuses a stale or foreign file)')
      .argument('<id>', 'the hook Id or Name'),
  )
    .option(
      '--force',
      "replace even if the file's Modified is older than the hook's (If-Match) or its Id is another hook's",
    )
    .addHelpText(
      'after',
      `${examples([
        'hookctl get hk_01jd3k… > hook.json   # edit, then:',
        'hookctl replace hk_01jd3k… -f hook.json',
        'hookctl replace hk_01jd3k… -f hook.json --transform-file chat-message.js',
        "hookctl get hk_01jd3k… | jq '.Persist = false' | hookctl replace hk_01jd3k… -f -",
        'hookctl edit hk_01jd3k…              # the same in one step',
      ])}
The file's Modified field is the version it was read at: it is sent as If-Match, and a hook
changed since then is not overwritten (exit 1, "was changed on the server"). A file without
Modified replaces unconditionally. Warnings about the stored hook are printed on stderr.

${HOOK_FIELDS_HELP}`,
    )
    .action(async (id: string, o: HookFileFlags & { force?: boolean }, cmd: Command) =>
      run({ id, force: o.force === true, ...hookFileInputsOf(o, usageOf(cmd)) }, context(cmd)),
    );
}

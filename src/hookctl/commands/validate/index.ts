import { Command } from 'commander';
import { HookdError } from '../../../errors/index.js';
import { type ContextFactory, examples, usageOf } from '../../command.js';
import type { CliContext } from '../../context.js';
import { ApiError } from '../../exit-codes.js';
import { parseJsonText, readInput } from '../../json-file.js';
import { offlineSchemeCheck } from '../../offline-scheme-check.js';

export interface ValidateOptions {
  file: string;
  usage: string;
}

/**
 * Checks a hook file without a server: JSON syntax (exit 2 with FILE:LINE:COLUMN), then the same
 * rules hookd applies (schema, pattern, URL, media type, headers; exit 1 listing every problem).
 * The callback-target policy needs the daemon's DNS and --allow-callback-net, so only the server
 * checks that.
 */
export async function runValidate(opts: ValidateOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const { name, text } = await readInput(opts.file, ctx.io, opts.usage);
  const doc = parseJsonText(name, text);
  // Loaded here: compiling the hook schema costs start-up time every other command can skip.
  const { validateHook } = await import('../../../hook/validate-hook.js');
  const { lintHook } = await import('../../../hook/lint-hook.js');
  try {
    const config = await validateHook(doc, await offlineSchemeCheck());
    // The same warnings hookd returns with a stored hook (`Warnings`): printed, not failed on.
    const warnings = lintHook(config).warnings.map((w) => ({ Field: w.field, Message: w.message }));
    for (const w of warnings) out.warn(`${name}: ${w.Field}: ${w.Message}`);
    if (out.format === 'json') return out.json(warnings.length ? { ...config, Warnings: warnings } : config);
    out.out.write(
      `${name}: valid${warnings.length ? ` (${warnings.length} warning${warnings.length === 1 ? '' : 's'})` : ''}\n`,
    );
  } catch (e) {
    if (!(e instanceof HookdError)) throw e;
    throw new ApiError(400, {
      code: e.code,
      detail: `${name}: ${e.errors ? `${e.errors.length} error${e.errors.length === 1 ? '' : 's'}` : e.message}`,
      ...(e.errors && { errors: e.errors }),
    });
  }
}

/** `hookctl validate -f FILE`. */
export function newValidateCommand(context: ContextFactory, run = runValidate): Command {
  return new Command('validate')
    .description('check a hook file locally (JSON syntax and hook rules) without sending it')
    .requiredOption('-f, --file <file>', 'the hook as JSON; - reads standard input')
    .addHelpText(
      'after',
      `${examples(['hookctl validate -f hook.json', 'hookctl validate -f hook.json -o json   # the hook with defaults filled in'])}
Exit status: 0 valid (warnings, such as an unknown $VARIABLE or a body that is not JSON under a
JSON media type, are printed on stderr), 1 the hook breaks a rule (each one is listed), 2 not
valid JSON.
Whether the Callback address is allowed (--allow-callback-net), the PathPattern is inside your
scopes and the Name is free are only checked by hookd (POST /_hookd/validate runs all of create's
checks).
`,
    )
    .action(async (o: { file: string }, cmd: Command) =>
      run({ file: o.file, usage: usageOf(cmd) }, context(cmd)),
    );
}

import { Command } from 'commander';
import { type ContextFactory, examples, usageOf } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import {
  HOOK_FIELDS_HELP,
  type HookFileFlags,
  type HookFileInputs,
  hookFileInputsOf,
  hookFileOptions,
  printWarnings,
  readHookInputs,
} from '../hook-file.js';

/** The hook file and the files that fill parts of it. */
export type CreateOptions = HookFileInputs;

/**
 * Creates a hook from a JSON file; prints the new Id (or the stored hook with -o json), and the
 * server's warnings about it on stderr.
 */
export async function runCreate(opts: CreateOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const doc = await readHookInputs(opts, ctx);
  const hook = await (await ctx.client()).createHook(doc);
  printWarnings(out, hook);
  if (out.format === 'json') return out.json(hook);
  out.out.write(`${hook.Id}\n`);
}

/** `hookctl hooks create -f FILE` (and `hookctl create -f FILE`). */
export function newCreateCommand(context: ContextFactory, run = runCreate): Command {
  return hookFileOptions(new Command('create').description('create a hook from a JSON file and print its Id'))
    .addHelpText(
      'after',
      `${examples([
        'hookctl create -f hook.json',
        'id=$(hookctl create -f hook.json)',
        `echo '{"PathPattern":"/repositories/*/timeseries/(*)","Methods":["GET"],"Callback":"https://chat.example.com/hook"}' | hookctl create -f -`,
        'hookctl create -f hook.json -o json',
        'hookctl create -f hook.json --transform-file chat-message.js',
        'hookctl create -f hook.json --client-secret-file /run/secrets/oauth2-client',
        'hookctl create -f hook.json --client-cert client.crt --client-key client.key --ca-certs ca.crt',
      ])}
${HOOK_FIELDS_HELP}`,
    )
    .action(async (o: HookFileFlags, cmd: Command) => run(hookFileInputsOf(o, usageOf(cmd)), context(cmd)));
}

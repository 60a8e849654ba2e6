import { Command } from 'commander';
import { type ContextFactory, examples, usageOf } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { fillTransform, HOOK_FIELDS_HELP, printWarnings, readHookFile } from '../hook-file.js';
import { fillTls, TLS_FLAGS, type TlsFiles, tlsFilesOf } from '../tls-input.js';

export interface CreateOptions {
  file: string;
  usage: string;
  /** Fills Auth.OAuth2.ClientSecret from this file (`-`: standard input). */
  clientSecretFile?: string;
  /** Fill Tls from these files (`-`: standard input). */
  tls?: TlsFiles;
  /** Fills Transform from this JavaScript file (`-`: standard input). */
  transformFile?: string;
}

/**
 * Creates a hook from a JSON file; prints the new Id (or the stored hook with -o json), and the
 * server's warnings about it on stderr.
 */
export async function runCreate(opts: CreateOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  const doc = await readHookFile(opts.file, ctx, opts.usage, opts.clientSecretFile);
  await fillTls(doc, opts.tls ?? {}, opts.file, ctx, opts.usage);
  await fillTransform(doc, opts.transformFile, opts.file, ctx, opts.usage);
  const hook = await (await ctx.client()).createHook(doc);
  printWarnings(out, hook);
  if (out.format === 'json') return out.json(hook);
  out.out.write(`${hook.Id}\n`);
}

/** `hookctl hooks create -f FILE` (and `hookctl create -f FILE`). */
export function newCreateCommand(context: ContextFactory, run = runCreate): Command {
  const cmd = new Command('create')
    .description('create a hook from a JSON file and print its Id')
    .requiredOption('-f, --file <file>', 'the hook as JSON; - reads standard input')
    .option(
      '--client-secret-file <file>',
      "the OAuth2 client secret (Auth.OAuth2.ClientSecret): a file's first line; - reads standard input",
    )
    .option(
      '--transform-file <file>',
      "the hook's Transform (function transform(event) { … }) from a JavaScript file; - reads standard input",
    );
  for (const [flag, help] of TLS_FLAGS) cmd.option(flag, help);
  return cmd
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
    .action(
      async (
        o: { file: string; clientSecretFile?: string; transformFile?: string } & TlsFiles,
        cmd: Command,
      ) =>
        run(
          {
            file: o.file,
            usage: usageOf(cmd),
            ...(o.clientSecretFile !== undefined && { clientSecretFile: o.clientSecretFile }),
            ...(o.transformFile !== undefined && { transformFile: o.transformFile }),
            tls: tlsFilesOf(o),
          },
          context(cmd),
        ),
    );
}

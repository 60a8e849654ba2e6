import type { Command } from 'commander';
import type { HookWarningsView } from '../../api-views.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../exit-codes.js';
import { parseJsonText, readInput } from '../../json-file.js';
import type { Output } from '../../output.js';
import { readSecret } from '../../secret-input.js';
import { fillTls, TLS_FLAGS, type TlsFiles, tlsFilesOf } from './tls-input.js';

/** Where a hook file's fields are documented: the help of every command that reads one says it. */
export const HOOK_FIELDS_HELP = `The hook's fields (PathPattern, Methods, Callback, CallbackContent, …), each with its default and
rules: docs/guides/hooks.md, "The hook resource" (in the hookd repository), and the JSON
Schema editors complete from, schema/hook.schema.json ("$schema" in the file). hookctl types
lists the hook types; hookctl validate -f FILE checks a file without sending it.
`;

/**
 * Reads and parses `-f FILE` / `-f -`; invalid JSON is exit 2 with `FILE:LINE:COLUMN: …`.
 * `clientSecretFile` (`--client-secret-file`, `-`: standard input) fills `Auth.OAuth2.ClientSecret`,
 * so the secret lives in a file of its own or comes from a pipe, never from the command line.
 */
async function readHookFile(
  file: string,
  ctx: CliContext,
  usage: string,
  clientSecretFile?: string,
): Promise<unknown> {
  const { name, text } = await readInput(file, ctx.io, usage);
  const doc = parseJsonText(name, text);
  if (clientSecretFile === undefined) return doc;
  if (clientSecretFile === '-' && file === '-')
    throw new UsageError('-f - and --client-secret-file - both read standard input', { usage });
  const oauth2 = (doc as { Auth?: { OAuth2?: Record<string, unknown> } } | null)?.Auth?.OAuth2;
  if (typeof oauth2 !== 'object' || oauth2 === null)
    throw new UsageError(`--client-secret-file needs "Auth": {"OAuth2": {…}} in ${name}`, { usage });
  const secret =
    clientSecretFile === '-'
      ? await readSecret(ctx.io, 'OAuth2 client secret: ')
      : (await readInput(clientSecretFile, ctx.io, usage)).text.split(/\r?\n/)[0]!.trim();
  if (secret === '') throw new UsageError(`the client secret from ${clientSecretFile} is empty`, { usage });
  oauth2.ClientSecret = secret;
  return doc;
}

/** The server's lint warnings of a stored hook, on stderr (stdout stays the Id or the JSON). */
export function printWarnings(out: Output, hook: { Warnings?: unknown }, prefix = ''): void {
  // A hook the server answered with for create, replace or validate: its lint's shape.
  const warnings = hook.Warnings as HookWarningsView['Warnings'];
  for (const w of warnings ?? []) out.warn(`${prefix}${w.Field}: ${w.Message}`);
}

/**
 * `--transform-file FILE|-`: the hook's Transform (JavaScript) from a file of its own, so that it
 * is edited as code rather than as one JSON string.
 */
async function fillTransform(
  doc: unknown,
  transformFile: string | undefined,
  file: string,
  ctx: CliContext,
  usage: string,
): Promise<void> {
  if (transformFile === undefined) return;
  if (transformFile === '-' && file === '-')
    throw new UsageError('-f - and --transform-file - both read standard input', { usage });
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new UsageError('--transform-file needs the hook file to hold a JSON object', { usage });
  (doc as Record<string, unknown>).Transform = (await readInput(transformFile, ctx.io, usage)).text;
}

/** A hook file and the files that fill parts of it: what `create` and `replace` read alike. */
export interface HookFileInputs {
  file: string;
  usage: string;
  /** Fills Auth.OAuth2.ClientSecret from this file (`-`: standard input). */
  clientSecretFile?: string;
  /** Fill Tls from these files (`-`: standard input). */
  tls?: TlsFiles;
  /** Fills Transform from this JavaScript file (`-`: standard input). */
  transformFile?: string;
}

/** commander's parsed options of the flags `hookFileOptions` adds. */
export type HookFileFlags = { file: string; clientSecretFile?: string; transformFile?: string } & TlsFiles;

/**
 * Adds `-f`, `--client-secret-file`, `--transform-file` and the TLS flags to a command that sends
 * a hook file, so create and replace offer and describe them alike.
 */
export function hookFileOptions(cmd: Command): Command {
  cmd
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
  return cmd;
}

/** The flags given, from commander's parsed options. */
export function hookFileInputsOf(o: HookFileFlags, usage: string): HookFileInputs {
  return {
    file: o.file,
    usage,
    ...(o.clientSecretFile !== undefined && { clientSecretFile: o.clientSecretFile }),
    ...(o.transformFile !== undefined && { transformFile: o.transformFile }),
    tls: tlsFilesOf(o),
  };
}

/** The hook document: the file, with the client secret, Tls and Transform filled from theirs. */
export async function readHookInputs(inputs: HookFileInputs, ctx: CliContext): Promise<unknown> {
  const { file, usage } = inputs;
  const doc = await readHookFile(file, ctx, usage, inputs.clientSecretFile);
  await fillTls(doc, inputs.tls ?? {}, file, ctx, usage);
  await fillTransform(doc, inputs.transformFile, file, ctx, usage);
  return doc;
}

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { HookdError } from '../../../../errors/index.js';
import type { HookView } from '../../../api-views.js';
import { type ContextFactory, examples } from '../../../command.js';
import type { CliContext } from '../../../context.js';
import { ApiError, CliError, JsonFileError, UsageError } from '../../../exit-codes.js';
import { parseJsonText } from '../../../json-file.js';
import { offlineSchemeCheck } from '../../../offline-scheme-check.js';
import { printWarnings } from '../hook-file.js';
import { staleCopyError } from '../replace/index.js';

export interface EditOptions {
  id: string;
}

/** What the editor is started as: $VISUAL, else $EDITOR, else vi (as git and kubectl do). */
export function editorOf(env: NodeJS.ProcessEnv): string {
  return env.VISUAL?.trim() || env.EDITOR?.trim() || 'vi';
}

const HEADER = [
  '# Edit the hook below and save to replace it; an empty file (or no change) cancels.',
  '# Lines starting with # are ignored. Id, Owner, Modified and State are set by hookd.',
];

/** Drops the leading `#` lines (the header and the errors of the last try). */
export function stripComments(text: string): string {
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length && /^\s*#/.test(lines[i]!)) i++;
  return lines.slice(i).join('\n');
}

function commented(messages: string[]): string {
  return messages.map((m) => `# ${m.replace(/\n/g, '\n# ')}`).join('\n');
}

/** Runs the editor on `file`, in the user's terminal; a failure to start or a non-zero exit stops the edit. */
function runEditor(editor: string, file: string, env: NodeJS.ProcessEnv): void {
  // Through the shell, as git does: EDITOR may hold arguments ("code --wait").
  const r = spawnSync('/bin/sh', ['-c', `${editor} "$1"`, editor, file], { stdio: 'inherit', env });
  if (r.error) throw new CliError(`cannot start the editor (${editor}): ${r.error.message}`);
  if (r.status !== 0) {
    throw new CliError(
      `the editor (${editor}) exited with status ${r.status ?? r.signal}; nothing was replaced`,
      'set VISUAL or EDITOR to the editor to use, e.g. EDITOR=nano',
    );
  }
}

/** Local checks before sending: JSON syntax, then the hook rules (as `hookctl validate`). */
async function problemsOf(name: string, text: string): Promise<{ doc?: unknown; problems: string[] }> {
  let doc: unknown;
  try {
    doc = parseJsonText(name, text);
  } catch (e) {
    if (e instanceof JsonFileError) return { problems: [`error: ${e.message}`] };
    throw e;
  }
  const { validateHook } = await import('../../../../hook/validate-hook.js');
  try {
    await validateHook(doc, await offlineSchemeCheck());
  } catch (e) {
    if (!(e instanceof HookdError)) throw e;
    return {
      problems: (e.errors ?? [{ field: '(hook)', message: e.message }]).map(
        (f) => `error: ${f.field}: ${f.message}`,
      ),
    };
  }
  return { doc, problems: [] };
}

/**
 * `kubectl edit` for a hook: opens the hook's JSON in $VISUAL/$EDITOR; on save, checks it and
 * replaces the hook with `If-Match` (the version that was opened). A file that is not valid JSON
 * or breaks a rule (locally, or refused by the server) is opened again with the errors as `#`
 * comments at the top; saving it unchanged, or empty, gives up. A hook changed by someone else in
 * the meantime is not overwritten (exit 1); the edited copy is kept and its path printed.
 */
export async function runEdit(opts: EditOptions, ctx: CliContext): Promise<void> {
  const out = ctx.output('table');
  if (ctx.io.stdin.isTTY !== true && !ctx.env.VISUAL && !ctx.env.EDITOR) {
    throw new UsageError('hookctl edit needs an editor: set VISUAL or EDITOR, or run it in a terminal', {
      hint: `without one, use: hookctl get ${opts.id} > hook.json && hookctl replace ${opts.id} -f hook.json`,
    });
  }
  const client = await ctx.client();
  const { hook, etag } = await client.getHookVersioned(opts.id);
  const { Warnings: _w, ...shown } = hook;
  const original = `${JSON.stringify(shown, null, 2)}\n`;
  const dir = mkdtempSync(join(tmpdir(), 'hookctl-edit-'));
  const file = join(dir, `${opts.id.replace(/[^A-Za-z0-9_-]/g, '_')}.json`);
  writeFileSync(file, `${HEADER.join('\n')}\n${original}`, { mode: 0o600 });
  let keep = false;
  try {
    const editor = editorOf(ctx.env);
    let lastTry: string | undefined;
    for (;;) {
      runEditor(editor, file, ctx.env);
      const text = stripComments(readFileSync(file, 'utf8'));
      if (text.trim() === '' || text === original) {
        out.info(`edit cancelled: no changes made to ${opts.id}`);
        return;
      }
      if (text === lastTry) {
        keep = true;
        throw new CliError(
          `edit cancelled: the file still has errors and was saved unchanged; your copy is kept in ${file}`,
          `fix it and run: hookctl replace ${opts.id} -f ${file}`,
        );
      }
      lastTry = text;
      let { doc, problems } = await problemsOf(file, text);
      if (problems.length === 0) {
        try {
          const stored: HookView = await client.replaceHook(opts.id, doc, etag);
          printWarnings(out, stored);
          if (out.format === 'json') out.json(stored);
          else out.out.write(`${stored.Id}\n`);
          out.info(`replaced ${opts.id}`);
          return;
        } catch (e) {
          if (e instanceof ApiError && e.status === 412) {
            keep = true;
            throw staleCopyError(
              e,
              opts.id,
              'it was opened in the editor',
              `your edited copy is kept in ${file}; run hookctl edit ${opts.id} again and re-apply the change (or hookctl replace ${opts.id} -f ${file} --force to overwrite)`,
            );
          }
          if (!(e instanceof ApiError) || e.status !== 400) throw e;
          problems = (e.problem.errors ?? [{ field: '(hook)', message: e.message }]).map(
            (f) => `error: ${f.field}: ${f.message}`,
          );
        }
      }
      out.info(
        `${opts.id}: ${problems.length} problem${problems.length === 1 ? '' : 's'}; reopening the editor`,
      );
      writeFileSync(
        file,
        `${HEADER.join('\n')}\n# The last save was not applied:\n${commented(problems)}\n${text}`,
        { mode: 0o600 },
      );
    }
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** `hookctl hooks edit ID` (and `hookctl edit ID`). */
export function newEditCommand(context: ContextFactory, run = runEdit): Command {
  return new Command('edit')
    .description('edit a hook in $VISUAL/$EDITOR and replace it on save (safe against concurrent changes)')
    .argument('<id>', 'the hook Id or Name')
    .addHelpText(
      'after',
      `${examples(['hookctl edit hk_01jd3k…', 'EDITOR=nano hookctl edit hk_01jd3k…'])}
Opens the hook as indented JSON. On save it is checked (JSON syntax and hook rules) and replaces
the hook only if nobody changed it meanwhile (If-Match); otherwise the edited copy is kept and
its path printed (exit 1). Errors re-open the editor with them as # comments at the top; save
an empty file or the unchanged text to give up.
`,
    )
    .action(async (id: string, _o: unknown, cmd: Command) => run({ id }, context(cmd)));
}

/**
 * hookctl's commands and flags as commander holds them (src/hookctl/main.ts `buildProgram`): the
 * reference page docs/reference/hookctl.md and the COMMAND SUMMARY section of man/hookctl.1. The
 * tree is built without running anything: no command is parsed, so no context is ever made.
 */
import type { Command, Option } from 'commander';
import { buildProgram } from '../../src/hookctl/index.js';
import { anchor, cell, code, GENERATED_NOTE, roff } from './text.js';

export interface CommandDoc {
  /** The words typed after `hookctl`, e.g. `hooks list`. */
  path: string;
  aliases: string[];
  usage: string;
  description: string;
  options: { flags: string; description: string; default?: string; choices?: string[] }[];
  /** Whether it only groups subcommands. */
  group: boolean;
}

function optionDoc(o: Option): CommandDoc['options'][number] {
  const shown =
    o.defaultValue === undefined || typeof o.defaultValue === 'boolean' ? undefined : o.defaultValue;
  return {
    flags: o.flags,
    description: o.description,
    ...(shown !== undefined && { default: Array.isArray(shown) ? shown.join(',') : String(shown) }),
    ...(o.argChoices && { choices: [...o.argChoices] }),
  };
}

function walk(cmd: Command, prefix: string[]): CommandDoc[] {
  return cmd.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    const own: CommandDoc = {
      path: path.join(' '),
      aliases: sub.aliases(),
      usage: sub.usage(),
      description: sub.description(),
      options: sub.options.filter((o) => !o.hidden).map(optionDoc),
      group: sub.commands.length > 0,
    };
    return [own, ...walk(sub, path)];
  });
}

/** The program itself (global options) and every command under it, in the order of `--help`. */
export function hookctlTree(): { globals: CommandDoc['options']; commands: CommandDoc[] } {
  const program = buildProgram(() => {
    throw new Error('the docs read the command tree; they run no command');
  });
  return { globals: program.options.filter((o) => !o.hidden).map(optionDoc), commands: walk(program, []) };
}

const optionLine = (o: CommandDoc['options'][number]): string => {
  const extra = [
    o.choices ? `one of ${o.choices.map((c) => cell(code(c))).join(', ')}` : '',
    o.default !== undefined ? `default ${cell(code(o.default))}` : '',
  ].filter(Boolean);
  return `| ${cell(code(o.flags))} | ${cell(o.description)}${extra.length ? ` (${extra.join('; ')})` : ''} |`;
};

export function hookctlMarkdown(): string {
  const { globals, commands } = hookctlTree();
  const lines = [
    '# hookctl commands',
    '',
    `<!-- ${GENERATED_NOTE} Source: src/hookctl/ (commander's command tree) -->`,
    '',
    'Every command and flag of hookctl, read from its command tree: what `hookctl COMMAND --help` says,',
    'on one page. What the commands are for, with examples: the guides ([writing hooks](../guides/hooks.md));',
    'exit codes, files and variables: `man hookctl`.',
    '',
    '## Global options',
    '',
    'Given before or after the command name.',
    '',
    '| Flag | What it does |',
    '|---|---|',
    ...globals.map(optionLine),
    '',
    '## Commands',
    '',
    '| Command | What it does |',
    '|---|---|',
    ...commands.map(
      (c) => `| [${cell(code(c.path))}](#${anchor(`hookctl ${c.path}`)}) | ${cell(c.description)} |`,
    ),
    '',
  ];
  for (const c of commands) {
    lines.push(`### ${code(`hookctl ${c.path}`)}`, '', cell(c.description), '');
    lines.push('```', `hookctl ${c.path} ${c.usage}`.trimEnd(), '```', '');
    if (c.aliases.length > 0) lines.push(`Also: ${c.aliases.map((a) => code(a)).join(', ')}.`, '');
    if (c.options.length > 0)
      lines.push('| Flag | What it does |', '|---|---|', ...c.options.map(optionLine), '');
  }
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}

/** The COMMAND SUMMARY section of hookctl.1: each command's usage and flags. */
export function hookctlRoff(): string {
  const { commands } = hookctlTree();
  const lines = [
    '.SH COMMAND SUMMARY',
    'Every command with its usage and flags, as the command tree of the code declares them.',
    'The COMMANDS section above says more about each.',
  ];
  for (const c of commands) {
    lines.push('.TP', `.B hookctl ${roff(c.path)}${c.usage ? ` ${roff(c.usage)}` : ''}`, roff(c.description));
    if (c.aliases.length > 0) lines.push('.br', `Also: ${roff(c.aliases.join(', '))}.`);
    for (const o of c.options) {
      const extra = [
        o.choices ? `one of ${o.choices.join(', ')}` : '',
        o.default !== undefined ? `default ${o.default}` : '',
      ].filter(Boolean);
      lines.push(
        '.br',
        `${roff(o.flags)}: ${roff(o.description)}${extra.length ? ` (${roff(extra.join('; '))})` : ''}`,
      );
    }
  }
  return lines.join('\n');
}

import { Argument, Command, type Option } from 'commander';
import { type ContextFactory, examples } from '../../command.js';
import type { CliContext } from '../../context.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export interface CompletionOptions {
  shell: Shell;
  /** The root command, whose tree the script describes. */
  root: Command;
}

/** What a positional argument completes to; the lists come from hookctl itself at completion time. */
type ArgKind = 'hook' | 'profile' | 'shell' | 'method' | 'none';

interface OptSpec {
  flags: string[];
  takesValue: boolean;
  choices: string[];
  file: boolean;
  description: string;
}

interface CmdSpec {
  /** Space-separated path below the root, '' for the root. */
  path: string;
  name: string;
  description: string;
  subcommands: CmdSpec[];
  options: OptSpec[];
  arg: ArgKind;
}

const ARG_KINDS: Record<string, ArgKind> = {
  get: 'hook',
  replace: 'hook',
  edit: 'hook',
  delete: 'hook',
  'secret rotate': 'hook',
  deliveries: 'hook',
  'profile use': 'profile',
  'profile remove': 'profile',
  completion: 'shell',
  match: 'method',
};

function optSpec(o: Option): OptSpec {
  const flags = [o.short, o.long].filter((f): f is string => typeof f === 'string');
  return {
    flags,
    takesValue: o.required || o.optional,
    choices: o.argChoices ?? [],
    file: o.long === '--file',
    description: o.description,
  };
}

/** Reads the command tree (hidden shortcuts included) into plain data for the generators. */
export function specOf(cmd: Command, path = ''): CmdSpec {
  const name = cmd.name();
  const leaf = path.split(' ').slice(-2).join(' ');
  return {
    path,
    name,
    description: cmd.description(),
    subcommands: cmd.commands.map((c) => specOf(c, path ? `${path} ${c.name()}` : c.name())),
    options: [
      ...cmd.options.map(optSpec),
      { flags: ['-h', '--help'], takesValue: false, choices: [], file: false, description: 'show help' },
    ],
    arg: ARG_KINDS[leaf] ?? ARG_KINDS[path.split(' ').pop() ?? ''] ?? 'none',
  };
}

function all(spec: CmdSpec): CmdSpec[] {
  return [spec, ...spec.subcommands.flatMap(all)];
}

const METHODS = 'GET HEAD POST PUT PATCH DELETE OPTIONS';
const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** Shell functions shared by bash and zsh: the tree as `case` tables. */
function tables(root: CmdSpec): string {
  const cmds = all(root);
  const globals = root.options;
  const optsOf = (c: CmdSpec) =>
    c === root ? c.options : [...c.options, ...globals.filter((g) => !g.flags.includes('--help'))];
  const lines: string[] = [];
  // One shell function a table: `case <subject> in <pattern>) <command> ;; … esac`.
  const table = (fn: string, subject: string, arms: Iterable<[string, string]>) => {
    lines.push(`${fn}() {`, `  case ${subject} in`);
    for (const [pattern, command] of arms) lines.push(`    ${pattern}) ${command} ;;`);
    lines.push('  esac', '}');
  };
  const flagsOf = (opts: readonly OptSpec[]) => `echo ${q(opts.flatMap((o) => o.flags).join(' '))}`;
  table(
    '_hookctl_subs',
    '"$1"',
    cmds
      .filter((c) => c.subcommands.length)
      .map((c) => [q(c.path), `echo ${q(c.subcommands.map((s) => s.name).join(' '))}`]),
  );
  table(
    '_hookctl_desc',
    '"$1"',
    cmds.filter((c) => c.path).map((c) => [q(c.path), `echo ${q(c.description.replace(/\s+/g, ' '))}`]),
  );
  table(
    '_hookctl_opts',
    '"$1"',
    cmds.map((c) => [q(c.path), flagsOf(optsOf(c))]),
  );
  table(
    '_hookctl_valopts',
    '"$1"',
    cmds.map((c) => [q(c.path), flagsOf(optsOf(c).filter((o) => o.takesValue))]),
  );
  // "$1" path, "$2" option: prints the choices, or FILE for a file name.
  table(
    '_hookctl_values',
    '"$1|$2"',
    cmds.flatMap((c) =>
      optsOf(c)
        .filter((x) => x.takesValue && (x.choices.length || x.file))
        .map((o): [string, string] => [
          o.flags.map((f) => q(`${c.path}|${f}`)).join('|'),
          `echo ${o.file ? 'FILE' : q(o.choices.join(' '))}`,
        ]),
    ),
  );
  table(
    '_hookctl_args',
    '"$1"',
    cmds
      .filter((c) => !c.subcommands.length && c.arg !== 'none')
      .map((c) => [
        q(c.path),
        c.arg === 'hook'
          ? 'hookctl list 2>/dev/null | cut -f1'
          : c.arg === 'profile'
            ? 'hookctl profile list 2>/dev/null | cut -f2'
            : c.arg === 'shell'
              ? `echo ${q(SHELLS.join(' '))}`
              : `[ "$2" = 0 ] && echo ${q(METHODS)}`,
      ]),
  );
  // Walks the words typed so far: sets cmdpath (the command) and nargs (positional arguments).
  lines.push(
    '_hookctl_walk() {',
    '  cmdpath=""; nargs=0',
    '  local w skip=0 subs',
    '  for w in "$@"; do',
    '    if [ "$skip" = 1 ]; then skip=0; continue; fi',
    '    case "$w" in',
    '      --*=*) continue ;;',
    '      -*) case " $(_hookctl_valopts "$cmdpath") " in *" $w "*) skip=1 ;; esac; continue ;;',
    '    esac',
    '    subs=" $(_hookctl_subs "$cmdpath") "',
    '    case "$subs" in',
    '      *" $w "*) cmdpath="${cmdpath:+$cmdpath }$w" ;;',
    '      *) nargs=$((nargs + 1)) ;;',
    '    esac',
    '  done',
    '}',
  );
  return lines.join('\n');
}

/** A bash completion script (`source <(hookctl completion bash)`). */
export function bashScript(root: CmdSpec): string {
  return `# bash completion for hookctl
# Load it with:  source <(hookctl completion bash)
# or install it: hookctl completion bash > ~/.local/share/bash-completion/completions/hookctl
${tables(root)}
_hookctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmdpath nargs values
  _hookctl_walk "\${COMP_WORDS[@]:1:COMP_CWORD-1}"
  case " $(_hookctl_valopts "$cmdpath") " in
    *" $prev "*)
      values="$(_hookctl_values "$cmdpath" "$prev")"
      if [ "$values" = FILE ]; then
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
      else
        COMPREPLY=($(compgen -W "$values" -- "$cur"))
      fi
      return 0 ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_hookctl_opts "$cmdpath")" -- "$cur"))
    return 0
  fi
  local subs="$(_hookctl_subs "$cmdpath")"
  if [ -n "$subs" ]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_hookctl_args "$cmdpath" "$nargs")" -- "$cur"))
  fi
  return 0
}
complete -F _hookctl hookctl
`;
}

/** A zsh completion script (`source <(hookctl completion zsh)`, or `_hookctl` in $fpath). */
export function zshScript(root: CmdSpec): string {
  return `#compdef hookctl
# zsh completion for hookctl
# Load it with:  source <(hookctl completion zsh)      (after compinit)
# or install it: hookctl completion zsh > "\${fpath[1]}/_hookctl"
${tables(root)}
_hookctl() {
  local cmdpath nargs values cur prev sub
  local -a items
  _hookctl_walk "\${(@)words[2,CURRENT-1]}"
  cur="\${words[CURRENT]}"
  prev="\${words[CURRENT-1]}"
  case " $(_hookctl_valopts "$cmdpath") " in
    *" $prev "*)
      values="$(_hookctl_values "$cmdpath" "$prev")"
      if [[ "$values" == FILE ]]; then _files; else compadd -- \${=values}; fi
      return ;;
  esac
  if [[ "$cur" == -* ]]; then
    compadd -- \${=$(_hookctl_opts "$cmdpath")}
    return
  fi
  local subs="$(_hookctl_subs "$cmdpath")"
  if [[ -n "$subs" ]]; then
    for sub in \${=subs}; do items+=("$sub:$(_hookctl_desc "\${cmdpath:+$cmdpath }$sub")"); done
    _describe -t commands 'hookctl command' items
  else
    compadd -- \${(f)"$(_hookctl_args "$cmdpath" "$nargs")"}
  fi
}
if [[ "\${funcstack[1]}" == "_hookctl" ]]; then
  _hookctl "$@"
else
  compdef _hookctl hookctl
fi
`;
}

/** A fish completion script (`hookctl completion fish | source`). */
export function fishScript(root: CmdSpec): string {
  const lines = [
    '# fish completion for hookctl',
    '# Load it with:  hookctl completion fish | source',
    '# or install it: hookctl completion fish > ~/.config/fish/completions/hookctl.fish',
    'complete -c hookctl -f',
  ];
  const fq = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
  const optLine = (o: OptSpec, cond: string | undefined) => {
    const parts = ['complete -c hookctl'];
    if (cond) parts.push('-n', fq(cond));
    for (const f of o.flags) parts.push(f.startsWith('--') ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`);
    if (o.file) parts.push('-r -F');
    else if (o.choices.length) parts.push('-x -a', fq(o.choices.join(' ')));
    else if (o.takesValue) parts.push('-x');
    parts.push('-d', fq(o.description));
    return parts.join(' ');
  };
  for (const o of root.options) lines.push(optLine(o, undefined));
  const visit = (c: CmdSpec, cond: string) => {
    const names = c.subcommands.map((s) => s.name).join(' ');
    for (const s of c.subcommands) {
      const here =
        c === root ? '__fish_use_subcommand' : `${cond}; and not __fish_seen_subcommand_from ${names}`;
      lines.push(`complete -c hookctl -n ${fq(here)} -a ${fq(s.name)} -d ${fq(s.description)}`);
      const inner =
        c === root
          ? `__fish_seen_subcommand_from ${s.name}`
          : `${cond}; and __fish_seen_subcommand_from ${s.name}`;
      for (const o of s.options.filter((x) => !x.flags.includes('--help'))) lines.push(optLine(o, inner));
      if (s.subcommands.length === 0 && s.arg !== 'none') {
        const values =
          s.arg === 'hook'
            ? '(hookctl list 2>/dev/null | cut -f1)'
            : s.arg === 'profile'
              ? '(hookctl profile list 2>/dev/null | cut -f2)'
              : s.arg === 'shell'
                ? SHELLS.join(' ')
                : METHODS;
        lines.push(`complete -c hookctl -n ${fq(inner)} -a ${fq(values)}`);
      }
      visit(s, inner);
    }
  };
  visit(root, '');
  return `${lines.join('\n')}\n`;
}

/** Prints the completion script for a shell. */
export async function runCompletion(opts: CompletionOptions, ctx: CliContext): Promise<void> {
  const spec = specOf(opts.root);
  const script =
    opts.shell === 'bash' ? bashScript(spec) : opts.shell === 'zsh' ? zshScript(spec) : fishScript(spec);
  ctx.io.stdout.write(script);
}

/** `hookctl completion bash|zsh|fish`. */
export function newCompletionCommand(context: ContextFactory, run = runCompletion): Command {
  return new Command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(SHELLS))
    .addHelpText(
      'after',
      examples([
        'source <(hookctl completion bash)          # in ~/.bashrc',
        'source <(hookctl completion zsh)           # in ~/.zshrc, after compinit',
        'hookctl completion fish > ~/.config/fish/completions/hookctl.fish',
      ]),
    )
    .action(async (shell: Shell, _o: unknown, cmd: Command) => {
      let root = cmd;
      while (root.parent) root = root.parent;
      await run({ shell, root }, context(cmd));
    });
}

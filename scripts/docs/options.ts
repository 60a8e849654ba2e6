/**
 * The daemon's options as the option table declares them (src/config/options.ts): the reference
 * page docs/reference/options.md and the OPTION TABLE section of man/hookd.8. The rule of each
 * option is what its own parser says when it refuses a value, so the page cannot promise a rule
 * the code does not apply.
 */
import { ALL_OPTIONS, type NamedOption } from '../../src/config/index.js';
import { anchor, cell, code, GENERATED_NOTE, roff } from './text.js';

/** How an option's default is stated: its `shownDefault`, else its `default` as written. */
export function shownDefault(o: NamedOption): string | undefined {
  if (o.shownDefault !== undefined) return o.shownDefault;
  if (Array.isArray(o.default)) return o.default.length > 0 ? o.default.join(',') : undefined;
  if (o.default === undefined || typeof o.default === 'function') return undefined;
  return String(o.default);
}

/** Values no option accepts as they are: text with a control character, a negative number, an object. */
const PROBES: readonly unknown[] = ['\u0001not valid', -1, { not: 'valid' }];

/** Generic refusals that say less than another refusal of the same option. */
const GENERIC = new Set(['must be a string', 'must be a list of strings']);

/**
 * The option's rule, in the words of its parser: each probe's refusal with the probe's own text
 * taken out, the generic ones dropped when a specific one exists.
 */
export function ruleOf(o: NamedOption): string | undefined {
  const said: string[] = [];
  for (const probe of PROBES) {
    try {
      o.parse(probe);
    } catch (e) {
      if (!(e instanceof Error) || e.name !== 'Refused') throw e;
      const rule = e.message
        .replace(/^"[^"]*"(: | )/, '')
        .replace(/^-?\d+: /, '')
        .replace(/^\{[^}]*\}: /, '');
      if (!said.includes(rule)) said.push(rule);
    }
  }
  const specific = said.filter((r) => !GENERIC.has(r));
  const rules = specific.length > 0 ? specific : said;
  // A refusal says what the value is not; the page says what it must be.
  return rules.length > 0 ? rules.map((r) => r.replace(/^is not /, 'must be ')).join('; ') : undefined;
}

const flagName = (o: NamedOption): string => o.flag.split(' ')[0]!;
const reloadClass = (o: NamedOption): string =>
  o.reload === 'hot' ? 'applied by a reload (SIGHUP, `hookctl reload`)' : 'at the next start';

export function optionsMarkdown(options: readonly NamedOption[] = ALL_OPTIONS): string {
  const lines = [
    '# Options of hookd',
    '',
    `<!-- ${GENERATED_NOTE} Source: src/config/options/ -->`,
    '',
    'Every option is a flag, a `HOOKD_*` environment variable and a key of the JSON config file',
    '(`--config FILE`). Precedence: flags, then environment, then the file, then defaults.',
    '`hookd check-config FILE` checks a file and reports every problem at once. How to choose',
    'them: [the configuration guide](../guides/configuration.md); the same list: `man hookd`.',
    '',
    '| Flag | Environment | Config key | Default |',
    '|---|---|---|---|',
  ];
  for (const o of options) {
    const shown = shownDefault(o);
    lines.push(
      `| [${cell(code(o.flag))}](#${anchor(o.flag)}) | ${code(o.env)} | ${code(o.fileKey)} | ${shown === undefined ? '—' : cell(code(shown))} |`,
    );
  }
  lines.push('');
  for (const o of options) {
    const shown = shownDefault(o);
    const rule = ruleOf(o);
    lines.push(
      `## ${code(o.flag)}`,
      '',
      cell(o.description),
      '',
      '| | |',
      '|---|---|',
      `| Environment | ${code(o.env)}${o.repeatable ? ' (a comma-separated list)' : ''} |`,
      `| Config key | ${code(o.fileKey)} |`,
      `| Default | ${shown === undefined ? 'none' : cell(code(shown))} |`,
      `| Rule | ${rule === undefined ? 'any text' : cell(rule)} |`,
      `| Takes effect | ${reloadClass(o)} |`,
    );
    if (o.repeatable) lines.push(`| Repeatable | yes: ${cell(code(`${flagName(o)} A ${flagName(o)} B`))} |`);
    lines.push('');
  }
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}

/** The OPTION TABLE section of hookd.8: every option with its variable, key, default and rule. */
export function optionsRoff(options: readonly NamedOption[] = ALL_OPTIONS): string {
  const lines = [
    '.SH OPTION TABLE',
    'Every option once, as the option table of the code declares it: its flag, environment',
    'variable, configuration file key, default and rule.',
    'The OPTIONS section above says more about each.',
  ];
  for (const o of options) {
    const shown = shownDefault(o);
    const rule = ruleOf(o);
    lines.push(
      '.TP',
      `.B ${roff(o.flag)}`,
      roff(o.description),
      '.br',
      `Environment: ${roff(o.env)}; configuration key: ${roff(o.fileKey)}.`,
      '.br',
      `Default: ${shown === undefined ? 'none' : roff(shown)}.`,
      '.br',
      `Rule: ${rule === undefined ? 'any text' : roff(rule)}.`,
      '.br',
      `Takes effect: ${o.reload === 'hot' ? 'on a reload (SIGHUP)' : 'at the next start'}.`,
    );
  }
  return lines.join('\n');
}

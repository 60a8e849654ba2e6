/**
 * The catalogs an operator looks things up in, each read from the code that defines it: the error
 * catalog (src/errors/catalog.ts), the Prometheus metrics (every `new Counter/Gauge/Histogram` in
 * src/), and the log fields (src/observability/log-fields.ts).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { ERRORS } from '../../src/errors/index.js';
import { LOG_FIELDS } from '../../src/observability/log-fields.js';
import { cell, code, GENERATED_NOTE } from './text.js';

export function errorsMarkdown(): string {
  const lines = [
    '# Error codes',
    '',
    `<!-- ${GENERATED_NOTE} Source: src/errors/catalog.ts -->`,
    '',
    "Every error hookd's API answers is an RFC 9457 problem document (`application/problem+json`)",
    'whose `code` is one of these, with this HTTP status; a refused field is named in `errors[]`',
    '(`field`, `message`). hookctl turns the code into its exit status (`man hookctl`, EXIT STATUS).',
    'The API and its bodies: [docs/API.md](../API.md).',
    '',
    '| Code | Status | Title |',
    '|---|---|---|',
  ];
  for (const [name, e] of Object.entries(ERRORS))
    lines.push(`| ${code(name)} | ${e.status} | ${cell(e.title)} |`);
  return `${lines.join('\n')}\n`;
}

export interface MetricDoc {
  name: string;
  type: string;
  help: string;
  labels: string[];
  file: string;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') ? [p] : [];
  });
}

/** The text of the object literal that opens at `from` (a `{`), braces balanced, strings skipped. */
function objectAt(text: string, from: number): string {
  let depth = 0;
  let quote: string | undefined;
  for (let i = from; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return text.slice(from, i + 1);
  }
  return text.slice(from);
}

const STRING = String.raw`'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"`;
const unquote = (m: RegExpExecArray, at: number): string =>
  (m[at] ?? m[at + 1] ?? '').replace(/\\(.)/g, '$1');

/** Every metric src/ declares with a literal name: `new Counter({ name: 'hookd_…', help, labelNames })`. */
export function metricsOf(root: string): MetricDoc[] {
  const found: MetricDoc[] = [];
  for (const file of sources(join(root, 'src')).sort()) {
    const text = readFileSync(file, 'utf8');
    const rel = relative(root, file).split(sep).join('/');
    for (const m of text.matchAll(/new (Counter|Gauge|Histogram|Summary)(?:<[^>]*>)?\(\{/g)) {
      const body = objectAt(text, m.index + m[0].length - 1);
      const name = new RegExp(`\\bname: (?:${STRING})`).exec(body);
      const help = new RegExp(`\\bhelp:\\s*(?:${STRING})`).exec(body);
      if (!name || !help) continue;
      const labels = /\blabelNames: \[([^\]]*)\]/.exec(body)?.[1] ?? '';
      found.push({
        name: unquote(name, 1),
        type: m[1]!.toLowerCase(),
        help: unquote(help, 1),
        labels: [...labels.matchAll(/'([^']+)'/g)].map((l) => l[1]!),
        file: rel,
      });
    }
    // Gauges read at scrape time through a helper: gauge('hookd_…', 'help', read).
    for (const g of text.matchAll(new RegExp(`\\bgauge\\(\\s*'(hookd_[a-z_]+)',\\s*(?:${STRING})`, 'g'))) {
      found.push({ name: g[1]!, type: 'gauge', help: unquote(g, 2), labels: [], file: rel });
    }
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

export function metricsMarkdown(root: string): string {
  const lines = [
    '# Metrics',
    '',
    `<!-- ${GENERATED_NOTE} Source: every metric declared in src/ -->`,
    '',
    '`GET /metrics` on the operations listener (`--ops-listen`, default `127.0.0.1:8471`) answers',
    "these in Prometheus' text format, beside prom-client's process and Node.js metrics (CPU, memory,",
    'event-loop lag, handles), which carry the same `hookd_` prefix. Some exist only with their',
    'feature: ordering, endpoint verification, adaptive concurrency, workers, client certificates.',
    'With `--workers`, counters and histograms are summed over the workers. How to scrape and what to',
    'watch: [operations guide](../guides/operations.md#metrics-and-health).',
    '',
    '| Metric | Type | Labels | What it counts | Declared in |',
    '|---|---|---|---|---|',
  ];
  for (const m of metricsOf(root)) {
    lines.push(
      `| ${code(m.name)} | ${m.type} | ${m.labels.map((l) => code(l)).join(', ') || '—'} | ${cell(m.help)} | ${code(m.file)} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The log fields with the group each is listed under in log-fields.ts (its `// group` comments). */
export function logFieldGroups(root: string): { group: string; fields: [string, string][] }[] {
  const text = readFileSync(join(root, 'src', 'observability', 'log-fields.ts'), 'utf8');
  const groupOf = new Map<string, string>();
  let group = 'other';
  for (const line of text.split('\n')) {
    const heading = /^ {2}\/\/ (.+)$/.exec(line);
    if (heading) group = heading[1]!;
    const field = /^ {2}([A-Za-z]+):/.exec(line);
    if (field) groupOf.set(field[1]!, group);
  }
  const groups: { group: string; fields: [string, string][] }[] = [];
  for (const [name, what] of Object.entries(LOG_FIELDS)) {
    const g = groupOf.get(name) ?? 'other';
    let entry = groups.find((x) => x.group === g);
    if (!entry) {
      entry = { group: g, fields: [] };
      groups.push(entry);
    }
    entry.fields.push([name, what]);
  }
  return groups;
}

export function logFieldsMarkdown(root: string): string {
  const lines = [
    '# Log fields',
    '',
    `<!-- ${GENERATED_NOTE} Source: src/observability/log-fields.ts -->`,
    '',
    'hookd logs to standard output: pretty lines on a terminal, JSON lines elsewhere',
    '(`--log-format`). Every field of every line is one of these, named by one scheme: camelCase,',
    '`status` for an HTTP status, `durationMs` for a duration, `err` for an error, `path` for a',
    'request path without its query, counts as plural nouns. A test reads every log call in src/',
    'and the lines of a running daemon against this list. Reading the log:',
    '[operations guide](../guides/operations.md#logs).',
    '',
  ];
  for (const { group, fields } of logFieldGroups(root)) {
    lines.push(`## ${group[0]!.toUpperCase()}${group.slice(1)}`, '', '| Field | Meaning |', '|---|---|');
    for (const [name, what] of fields) lines.push(`| ${code(name)} | ${cell(what)} |`);
    lines.push('');
  }
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}

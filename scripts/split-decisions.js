#!/usr/bin/env node
// Moves every `## Title` section of docs/DECISIONS.md into a record of its own,
// docs/decisions/NNNN-slug.md (numbered after the records already there), then rewrites
// docs/DECISIONS.md as a short index and docs/decisions/README.md as the full one. Safe to run
// again: a branch that appended sections to docs/DECISIONS.md gets them moved the same way, and
// an index with no new section is left as it is. `--check` writes nothing and exits 1 when a
// section waits to be moved (CI can tell a forgotten run). A record has the sections
// `## Context`, `## Decision`, `## Consequences` (and `## Figures` when there are measurements):
// a section written with `### Context` … headings keeps them; one written as plain paragraphs
// and bullets is recut by scripts/decision-record.js, and a section that gives nothing for
// Context or Consequences is refused, naming what to add.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shape } from './decision-record.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const INDEX = join(root, 'docs', 'DECISIONS.md');
const DIR = join(root, 'docs', 'decisions');
const RECORD = /^(\d{4})-[a-z0-9-]+\.md$/;
const INDEX_MARK = '<!-- decisions:index -->';

/** A record's title: the section's heading without the ticket it came from. */
function titleOf(heading) {
  return (
    heading
      .replace(/^Issue \d+ \([^)]*\):\s*/i, '')
      .replace(/\s*\((?:after |now: )?issues? \d+[^)]*\)/gi, '')
      // A heading that started with its ticket starts with a capital once the ticket is gone; a
      // name (hookctl, hookd) keeps its own spelling.
      .replace(/^(?!hookd|hookctl)./, (c) => c.toUpperCase())
      .trim()
  );
}

function slugOf(title) {
  const slug = title
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (slug.length <= 60) return slug || 'decision';
  // Cut at a word's end, never inside one.
  const cut = slug.slice(0, 61);
  return cut.slice(0, cut.lastIndexOf('-')) || 'decision';
}

/** The records already written: number, file name and title (their first line). */
function records() {
  if (!existsSync(DIR)) return [];
  return readdirSync(DIR)
    .filter((f) => RECORD.test(f))
    .sort()
    .map((file) => {
      const first = readFileSync(join(DIR, file), 'utf8').split('\n', 1)[0] ?? '';
      return { number: Number(RECORD.exec(file)[1]), file, title: first.replace(/^#\s+\d{4}\.\s*/, '') };
    });
}

/** A section's body moved one folder down: relative links gain `../`, headings rise one level. */
function moveBody(lines) {
  let fence = false;
  return lines.map((line) => {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) return line;
    const raised = line.replace(/^(#{3,6}) /, (_, h) => `${h.slice(1)} `);
    return raised.replace(/\]\((?![a-z][a-z0-9+.-]*:|#|\/)([^)]+)\)/gi, '](../$1)');
  });
}

/** The folders of src/ a record talks about, so that a reader of the code finds it. */
function codeOf(body) {
  const found = new Set();
  for (const m of body.matchAll(/\bsrc\/([a-z0-9-]+)\//g)) found.add(`src/${m[1]}/`);
  return [...found].sort();
}

/** Splits DECISIONS.md into its preamble, its index part (left as it is) and the sections to move. */
function parse(text) {
  const lines = text.split('\n');
  const sections = [];
  const preamble = [];
  let current;
  let fence = false;
  for (const line of lines) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const h = !fence && /^## (.+)$/.exec(line);
    if (h) {
      current = { heading: h[1].trim(), lines: [] };
      sections.push(current);
    } else if (current) current.lines.push(line);
    else preamble.push(line);
  }
  const kept = sections.filter((s) => s.heading === 'The records');
  return { preamble, index: kept[0], move: sections.filter((s) => !kept.includes(s)) };
}

const text = readFileSync(INDEX, 'utf8');
const { preamble, move } = parse(text);
if (process.argv.includes('--check')) {
  if (move.length > 0) {
    console.error(`docs/DECISIONS.md: ${move.length} section(s) to move: node scripts/split-decisions.js`);
    process.exit(1);
  }
  process.exit(0);
}

// Every section is shaped before anything is written, so a refused one leaves the files as they were.
const shaped = new Map();
for (const section of move) {
  const moved = moveBody(section.lines)
    .join('\n')
    .replace(/^\n+|\n+$/g, '');
  const { body, missing } = shape(moved);
  if (missing.length > 0) {
    console.error(
      `docs/DECISIONS.md "${section.heading}": no ${missing.join(' and no ')}; give the section ${missing.map((m) => `### ${m}`).join(' and ')} (beside ### Decision)`,
    );
    process.exit(1);
  }
  shaped.set(section, body);
}

mkdirSync(DIR, { recursive: true });
const have = records();
let next = have.reduce((n, r) => Math.max(n, r.number), 0) + 1;
const taken = new Set(have.map((r) => r.file.replace(/^\d{4}-/, '')));
for (const section of move) {
  const title = titleOf(section.heading);
  let slug = slugOf(title);
  for (let n = 2; taken.has(`${slug}.md`); n++) slug = `${slugOf(title)}-${n}`;
  taken.add(`${slug}.md`);
  const number = String(next++).padStart(4, '0');
  const body = shaped.get(section);
  const code = codeOf(body);
  const head = [
    `# ${number}. ${title}`,
    '',
    `Status: accepted. ${code.length ? `Code: ${code.map((c) => `\`${c}\``).join(', ')}. ` : ''}All decisions: [index](README.md).`,
    ...(title !== section.heading
      ? ['', `<!-- the section "${section.heading}" of docs/DECISIONS.md -->`]
      : []),
  ];
  writeFileSync(join(DIR, `${number}-${slug}.md`), `${head.join('\n')}\n\n${body}\n`);
}

const all = records();
const list = all.map((r) => `- [${String(r.number).padStart(4, '0')}. ${r.title}](decisions/${r.file})`);
const intro = preamble.join('\n').replace(/\n+$/, '');
writeFileSync(
  INDEX,
  `${intro}\n\n## The records\n\n${INDEX_MARK}\nEach decision is a record of its own under [docs/decisions/](decisions/README.md): the question,\nwhat hookd does and why, and the figures behind it where there are some. To add one, write the next\n\`docs/decisions/NNNN-slug.md\`, or append a \`## Title\` section to this file (with \`### Context\`, \`### Decision\`,\n\`### Consequences\` and, where there are measurements, \`### Figures\`) and run\n\`node scripts/split-decisions.js\`, which moves it into a record and lists it here.\n\n${list.join('\n')}\n`,
);
writeFileSync(
  join(DIR, 'README.md'),
  `# Decision records\n\nWhere the seed document and the spec leave a choice, each record says what hookd does and why.\nThe guides link the records they rest on. Numbered in the order they were taken; a new one takes\nthe next number (\`node scripts/split-decisions.js\` does it for a section appended to\n[docs/DECISIONS.md](../DECISIONS.md)).\n\n| No. | Decision |\n|---|---|\n${all.map((r) => `| ${String(r.number).padStart(4, '0')} | [${r.title.replace(/\|/g, '\\|')}](${r.file}) |`).join('\n')}\n`,
);
console.log(`docs/decisions: ${move.length} record(s) written, ${all.length} in all`);

// The shape of a decision record: `## Context`, `## Decision`, `## Consequences`, and
// `## Figures` when the text has measurements. `shape` recuts a body written as one run of
// paragraphs and bullets into those sections without rewriting it: prose before the first
// decision is the context; sentences that say what a choice costs or brings are consequences;
// sentences and paragraphs of measurements are figures; the rest stays the decision, in its order.
// A body that already has the sections is left as it is.

export const SECTIONS = ['Context', 'Decision', 'Consequences', 'Figures'];
export const REQUIRED = ['Context', 'Decision', 'Consequences'];

const CONSEQUENCE =
  /^(?:The cost|The price|Its cost|Its price|Cost:|Price:|The trade-?off|The downside|The catch|The risk|A consequence|Consequently|As a result|In consequence|Therefore|Hence|This means|That means|It follows|So a |So an |So the |So hookd |So one |So every |So no |Known limit|A known limit|The limit of this|What it does not|What this does not|Left for later|Not covered)/;
const CONSEQUENCE_ANYWHERE =
  /\b(?:the price is|the cost is|at the cost of|the price:|the cost:|costs nothing|the trade-off)\b/i;
const AFTERMATH =
  /^(?:\*\*)?(?:Cost|Costs|The cost|Not done|Not taken|Not changed|Not supported|Left as|Left out|Left waiting|Known gaps?|Known limits?|What remains|The price|Rejected|Was a known limit)\b/;
const MEASURED =
  /\b(?:measured|benchmarks?|BENCHMARKS\.md|req\/s|requests\/s|per second|p50|p90|p99|p99\.9|throughput|RSS|faster than|slower than|times faster|times slower|× faster|× slower|x faster|x slower|from about \d|took [^.]{0,60}\bfrom\b)/i;
const NUMBER_UNIT = /\d[\d,.]*\s?(?:ms|µs|s|MB|KB|kB|GB|MiB|KiB|bytes|%|×)(?![a-z])/g;

/** The `## ` sections a body has, by name. */
export function sectionsOf(body) {
  const found = new Map();
  let fence = false;
  let current;
  for (const line of body.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const h = !fence && /^## (.+)$/.exec(line);
    if (h) {
      current = h[1].trim();
      found.set(current, []);
    } else if (current) found.get(current).push(line);
  }
  return new Map([...found].map(([k, v]) => [k, v.join('\n').trim()]));
}

/** Blocks: paragraphs, one bullet item each, tables, fences, headings. */
function blocks(body) {
  const out = [];
  let cur;
  let fence = false;
  const flush = () => {
    if (cur) out.push(cur);
    cur = undefined;
  };
  for (const line of body.split('\n')) {
    if (fence) {
      cur.lines.push(line);
      if (/^\s*(```|~~~)/.test(line)) {
        fence = false;
        flush();
      }
      continue;
    }
    if (/^\s*(```|~~~)/.test(line)) {
      flush();
      cur = { kind: 'fence', lines: [line] };
      fence = true;
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    if (/^#{2,6} /.test(line)) {
      flush();
      out.push({ kind: 'heading', lines: [line] });
      continue;
    }
    if (/^\|/.test(line)) {
      if (cur?.kind !== 'table') {
        flush();
        cur = { kind: 'table', lines: [] };
      }
      cur.lines.push(line);
      continue;
    }
    if (/^(?:[-*]|\d+\.) /.test(line)) {
      flush();
      cur = { kind: 'item', lines: [line] };
      continue;
    }
    if (/^\s+\S/.test(line) && cur?.kind === 'item') {
      cur.lines.push(line);
      continue;
    }
    if (cur && cur.kind !== 'para' && cur.kind !== 'item') flush();
    if (!cur) cur = { kind: 'para', lines: [] };
    cur.lines.push(line);
  }
  flush();
  return out;
}

function textOf(block) {
  return block.lines
    .map((l) => l.trim())
    .join(' ')
    .replace(/^(?:[-*]|\d+\.) /, '');
}

function sentences(text) {
  // A sentence ends at . ! ? or : followed by a capital, outside code spans.
  const out = [];
  let start = 0;
  let code = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '`') code = !code;
    if (code || !/[.!?]/.test(c)) continue;
    if (
      text[i + 1] === ' ' &&
      (/[A-Z`*(]/.test(text[i + 2] ?? '') || /^hook(?:d|ctl)\b/.test(text.slice(i + 2))) &&
      !/\b(?:e\.g|i\.e|vs|cf|etc|no)\.$/.test(text.slice(Math.max(0, i - 4), i + 1))
    ) {
      out.push(text.slice(start, i + 1).trim());
      start = i + 2;
    }
  }
  const rest = text.slice(start).trim();
  if (rest) out.push(rest);
  return out;
}

function wrap(text, first, next, width = 100) {
  const words = text.split(/\s+/).filter(Boolean);
  const lines = [];
  let line = first;
  let empty = true;
  for (const w of words) {
    if (!empty && line.length + 1 + w.length > width) {
      lines.push(line);
      line = next + w;
    } else {
      line = empty ? line + w : `${line} ${w}`;
    }
    empty = false;
  }
  lines.push(line);
  return lines;
}

function leadOf(text) {
  const m = /^\*\*([^*]+?)[.:]?\*\*/.exec(text);
  return m ? m[1].replace(/[.:]$/, '') : undefined;
}

function measurements(text) {
  return (text.match(NUMBER_UNIT) ?? []).length;
}

const isDecisionBlock = (b) => b.kind === 'item' || (b.kind === 'para' && /^\*\*/.test(b.lines[0]));

/**
 * Recuts a record's body into its sections. Returns { body, missing }: missing names the
 * required sections the text gave nothing for.
 */
export function shape(body, extra = {}) {
  const have = sectionsOf(body);
  if (REQUIRED.every((s) => have.has(s))) return { body: body.trim(), missing: [] };
  const all = blocks(body);
  const context = [];
  const decision = [];
  const consequences = [];
  const figures = [];
  let started = false;
  for (const b of all) {
    if (b.kind === 'heading') {
      started = true;
      decision.push([b.lines[0].replace(/^#+ /, '### ')]);
      continue;
    }
    if (b.kind === 'table') {
      (measurements(b.lines.join(' ')) >= 3 ? figures : decision).push(b.lines);
      started = true;
      continue;
    }
    if (b.kind === 'fence') {
      decision.push(b.lines);
      continue;
    }
    let text = textOf(b);
    if (!started && !isDecisionBlock(b)) {
      const at = extra.decide ? sentences(text).findIndex((x) => x.startsWith(extra.decide)) : -1;
      if (at < 0) {
        context.push(b.lines);
        continue;
      }
      const parts = sentences(text);
      if (at > 0) context.push(wrap(parts.slice(0, at).join(' '), '', ''));
      b.lines = wrap(parts.slice(at).join(' '), '', '');
      text = textOf(b);
    }
    started = true;
    // A paragraph or item that is mostly measurements is a figure as a whole.
    if (MEASURED.test(text) && measurements(text) >= 3 && !leadOf(text)) {
      figures.push(b.kind === 'item' ? b.lines : wrap(text, '', ''));
      continue;
    }
    // An item that is itself about the cost or what was left out is a consequence as a whole.
    if (AFTERMATH.test(text)) {
      consequences.push(b.kind === 'item' ? b.lines : wrap(text, '- ', '  '));
      continue;
    }
    const lead = leadOf(text);
    const kept = [];
    let moved = false;
    const all = sentences(text);
    all.forEach((s, i) => {
      const bare = s.replace(/^\*\*[^*]+\*\*\s*/, '');
      const label = lead ? `**${lead}**: ` : '';
      const wanted = (list) => (list ?? []).some((p) => bare.startsWith(p) || s.startsWith(p));
      if (
        wanted(extra.move) ||
        (i > 0 && bare && !wanted(extra.keep) && (CONSEQUENCE.test(bare) || CONSEQUENCE_ANYWHERE.test(bare)))
      ) {
        consequences.push(wrap(i === 0 && !lead ? s : label + bare, '- ', '  '));
        moved = true;
      } else if (
        wanted(extra.figures) ||
        (i > 0 && !wanted(extra.keep) && MEASURED.test(bare) && measurements(bare) >= 1)
      ) {
        figures.push(wrap(label + bare, '- ', '  '));
        moved = true;
      } else kept.push(s);
    });
    if (!moved) decision.push(b.lines);
    else if (kept.length)
      decision.push(wrap(kept.join(' '), b.kind === 'item' ? '- ' : '', b.kind === 'item' ? '  ' : ''));
  }
  for (const line of extra.context ?? []) context.unshift(wrap(line, '', ''));
  for (const line of extra.consequences ?? []) consequences.push(wrap(line, '- ', '  '));
  const join = (parts) =>
    parts
      .map((p, i) => {
        const item = /^(?:[-*]|\d+\.) /.test(p[0] ?? '');
        const prevItem = i > 0 && /^(?:[-*]|\d+\.) /.test(parts[i - 1][0] ?? '');
        return `${i === 0 ? '' : item && prevItem ? '\n' : '\n\n'}${p.join('\n')}`;
      })
      .join('');
  const out = [];
  const missing = [];
  const add = (name, parts) => {
    if (parts.length === 0) {
      if (REQUIRED.includes(name)) missing.push(name);
      return;
    }
    out.push(`## ${name}\n\n${join(parts)}`);
  };
  add('Context', context);
  add('Decision', decision);
  add('Consequences', consequences);
  add('Figures', figures);
  return { body: out.join('\n\n'), missing };
}

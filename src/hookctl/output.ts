import { Chalk, type ChalkInstance } from 'chalk';
import Table from 'cli-table3';

/** `-o`: a table (some columns), a wide table (every column) or JSON. */
export type Format = 'table' | 'wide' | 'json';
export const FORMATS: readonly Format[] = ['table', 'wide', 'json'];

/** The stream shape hookctl writes to; `isTTY`/`columns` decide layout and colour. */
export interface OutStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/**
 * Colour only on a terminal, never with NO_COLOR (any non-empty value) or --no-color. Chalk's
 * own detection does not know NO_COLOR, so the level is decided here and set explicitly.
 * FORCE_COLOR turns colour on for a pipe (as in chalk and most CLIs), but NO_COLOR still wins.
 */
export function colorLevel(stream: OutStream, env: NodeJS.ProcessEnv, colorFlag: boolean): 0 | 1 | 2 | 3 {
  if (!colorFlag || (env.NO_COLOR !== undefined && env.NO_COLOR !== '')) return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') {
    if (force === '0' || force === 'false') return 0;
    if (force === '2' || force === '3') return Number(force) as 2 | 3;
    return 1;
  }
  if (!stream.isTTY || env.TERM === 'dumb') return 0;
  if (env.COLORTERM === 'truecolor' || env.COLORTERM === '24bit') return 3;
  if (env.TERM?.includes('256')) return 2;
  return 1;
}

/** A column of a listing: its header and how to get (and optionally paint) a cell. */
export interface Column<T> {
  header: string;
  value: (row: T) => string;
  paint?: (text: string, row: T, c: ChalkInstance) => string;
  /** Long, variable values (URLs, patterns) that may be cut with "…" to fit the terminal. */
  shrink?: boolean;
}

/**
 * Writes results the way `-o` and the terminal ask: a cli-table3 table on a TTY, tab-separated
 * rows without a header when piped (gh's convention: stable for `cut`/`awk`), JSON indented.
 */
export class Output {
  readonly format: Format;
  readonly out: OutStream;
  readonly err: OutStream;
  /** Paints stdout text; level 0 when colour is off. */
  readonly color: ChalkInstance;
  /** Paints stderr text; decided separately (stderr may be a terminal while stdout is piped). */
  readonly errColor: ChalkInstance;

  constructor(opts: {
    format: Format;
    out: OutStream;
    err: OutStream;
    env: NodeJS.ProcessEnv;
    color: boolean;
  }) {
    this.format = opts.format;
    this.out = opts.out;
    this.err = opts.err;
    this.color = new Chalk({ level: colorLevel(opts.out, opts.env, opts.color) });
    this.errColor = new Chalk({ level: colorLevel(opts.err, opts.env, opts.color) });
  }

  get isTTY(): boolean {
    return this.out.isTTY === true;
  }

  /**
   * `-o json` of a result: indented, on a terminal and in a file or pipe alike, so that
   * `hookctl get ID > hook.json` is ready to edit (jq reads it either way). Streams such as
   * `tail -o json` write one object per line instead (NDJSON).
   */
  json(value: unknown): void {
    this.out.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** Warnings for the person at the terminal (stderr), one line each. */
  warn(text: string): void {
    this.err.write(`${this.errColor.yellow('warning:')} ${text}\n`);
  }

  /** A message for the person at the terminal (stderr, so stdout stays data). */
  info(text: string): void {
    this.err.write(`${text}\n`);
  }

  /** Prints rows with the given columns; `-o json` callers use `json()` instead. */
  table<T>(columns: Column<T>[], rows: T[]): void {
    const cells = rows.map((r) => columns.map((c) => clean(c.value(r))));
    if (!this.isTTY) {
      for (const line of cells) this.out.write(`${line.join('\t')}\n`);
      return;
    }
    const widths = fitWidths(
      columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => [...row[i]!].length))),
      columns.map((c) => c.shrink === true),
      this.out.columns,
    );
    const table = new Table({
      head: columns.map((c) => this.color.bold(c.header)),
      colWidths: widths.map((w) => w + 2),
      chars: {
        top: '',
        'top-mid': '',
        'top-left': '',
        'top-right': '',
        bottom: '',
        'bottom-mid': '',
        'bottom-left': '',
        'bottom-right': '',
        left: '',
        'left-mid': '',
        mid: '',
        'mid-mid': '',
        right: '',
        'right-mid': '',
        middle: '',
      },
      // Colour comes from our Chalk instance (or not at all); cli-table3's own would ignore NO_COLOR.
      style: { head: [], border: [], 'padding-left': 0, 'padding-right': 2, compact: true },
      wordWrap: false,
      truncate: '…',
    });
    rows.forEach((row, r) => {
      table.push(
        columns.map((c, i) => {
          const text = cells[r]![i]!;
          return c.paint ? c.paint(text, row, this.color) : text;
        }),
      );
    });
    this.out.write(`${table.toString().replace(/ +$/gm, '')}\n`);
  }
}

/** Keeps each cell on one line so a row stays a row, in a table and in tab-separated output. */
function clean(s: string): string {
  return s.replace(/[\t\r\n]+/g, ' ');
}

/** Shrinks the shrinkable columns, always the widest by one, until the table fits the terminal. */
function fitWidths(natural: number[], shrinkable: boolean[], columns: number | undefined): number[] {
  const widths = [...natural];
  if (!columns || columns < 20) return widths;
  const MIN = 12;
  let total = widths.reduce((a, w) => a + w + 2, 0);
  while (total > columns) {
    let widest = -1;
    widths.forEach((w, i) => {
      if (shrinkable[i] && w > MIN && (widest < 0 || w > widths[widest]!)) widest = i;
    });
    if (widest < 0) break;
    widths[widest]!--;
    total--;
  }
  return widths;
}

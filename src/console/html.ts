/**
 * The console's one way to make HTML: a tagged template that escapes every interpolated value
 * unless it is already `Html` (made by this tag or by `trusted`). Hook owners control paths,
 * templates, headers and receiver answers; all of it reaches the page through here as inert text.
 * Attribute values are always double-quoted in the templates, and the escape covers both quotes.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(v: HtmlValue): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup produced by hookd itself (never by a user): passed through unescaped. */
export function trusted(text: string): Html {
  return new Html(text);
}

/** A path segment for a URL built into the page (Ids, after validation; encoded anyway). */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

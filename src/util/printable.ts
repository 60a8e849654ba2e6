/** Client-supplied text for an error message or a log line: control characters escaped, length capped. */
export function printable(s: string, max = 200): string {
  return s
    .replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .slice(0, max);
}

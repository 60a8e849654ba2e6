/**
 * Reading a Prometheus text exposition as a scraper would: the tests read the operations
 * listener's /metrics page, never the registry behind it.
 */

/** One series' value (`name` or `name{labels}` exactly as written), or undefined when absent. */
export function metricSample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    if (line.slice(0, i) === series) return Number(line.slice(i + 1));
  }
  return undefined;
}

/** Every series of one metric, by its label set as written (`''` for none). */
export function metricSamples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m?.[1] === name) out.set(m[2] ?? '', Number(m[3]));
  }
  return out;
}

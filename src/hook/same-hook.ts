/**
 * Whether two hook objects hold the same stored version, field for field. A hook read back from
 * the database (JSON, in whatever key order the column keeps) is compared with the one in memory;
 * a field that is `undefined` counts as absent, as JSON has it.
 */
export function sameHook(a: object, b: object): boolean {
  return sameValue(a, b);
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const list = b as unknown[];
    return a.length === list.length && a.every((x, i) => sameValue(x, list[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = (o: Record<string, unknown>) => Object.keys(o).filter((k) => o[k] !== undefined);
  const kx = keys(x);
  if (kx.length !== keys(y).length) return false;
  return kx.every((k) => Object.hasOwn(y, k) && sameValue(x[k], y[k]));
}

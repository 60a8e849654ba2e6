/**
 * A unified diff of two texts (`diff -u`, 3 lines of context), for `hookctl diff`. Hook
 * documents are tens of lines, so the plain LCS table is small enough.
 */
export function unifiedDiff(a: string, b: string, fromLabel: string, toLabel: string, context = 3): string {
  const x = a === '' ? [] : a.replace(/\n$/, '').split('\n');
  const y = b === '' ? [] : b.replace(/\n$/, '').split('\n');
  const n = x.length;
  const m = y.length;
  // lcs[i][j]: length of the longest common subsequence of x[i..] and y[j..].
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  type Op = { t: ' ' | '-' | '+'; line: string; ai: number; bi: number };
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) ops.push({ t: ' ', line: x[i]!, ai: i++, bi: j++ });
    // Removals before additions, as diff -u prints a changed line.
    else if (i < n && (j >= m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!))
      ops.push({ t: '-', line: x[i]!, ai: i++, bi: j });
    else ops.push({ t: '+', line: y[j]!, ai: i, bi: j++ });
  }
  if (!ops.some((o) => o.t !== ' ')) return '';
  const out = [`--- ${fromLabel}`, `+++ ${toLabel}`];
  let k = 0;
  while (k < ops.length) {
    while (k < ops.length && ops[k]!.t === ' ') k++;
    if (k >= ops.length) break;
    const start = Math.max(0, k - context);
    let end = k;
    // Extend the hunk while the next change is within 2×context lines.
    for (;;) {
      while (end < ops.length && ops[end]!.t !== ' ') end++;
      let gap = end;
      while (gap < ops.length && ops[gap]!.t === ' ') gap++;
      if (gap < ops.length && gap - end <= 2 * context) end = gap;
      else {
        end = Math.min(ops.length, end + context);
        break;
      }
    }
    const hunk = ops.slice(start, end);
    const aCount = hunk.filter((o) => o.t !== '+').length;
    const bCount = hunk.filter((o) => o.t !== '-').length;
    const aStart = aCount === 0 ? hunk[0]!.ai : hunk[0]!.ai + 1;
    const bStart = bCount === 0 ? hunk[0]!.bi : hunk[0]!.bi + 1;
    out.push(`@@ -${aStart},${aCount} +${bStart},${bCount} @@`);
    for (const o of hunk) out.push(`${o.t}${o.line}`);
    k = end;
  }
  return `${out.join('\n')}\n`;
}

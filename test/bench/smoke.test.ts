import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseWrk } from '../../bench/lib/load.js';
import { percentiles, ratio, spread } from '../../bench/lib/stats.js';
import { type BenchReport, parseBenchArgs, runBench, SECTIONS, TITLES } from '../../bench/run.js';
import { tempDir } from '../helpers/hookd.js';
import { requireOrSkip } from '../helpers/require.js';

// The harness must run end to end: a smoke-sized run of every benchmark, not a
// measurement, so nothing here looks at how fast anything was.

const WRK_OUTPUT = `Running 5s test @ http://127.0.0.1:8080/x
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     5.67ms    1.20ms  31.02ms   90.00%
    Req/Sec     8.90k   300.00     9.50k    70.00%
  Latency Distribution
     50%  512.00us
     75%    5.90ms
     90%    6.80ms
     99%    1.02s
  44321 requests in 5.00s, 9.10MB read
  Socket errors: connect 0, read 2, write 0, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:   8864.20
Transfer/sec:      1.82MB
`;

describe('bench helpers', () => {
  it('parses a wrk report, converting every latency unit to milliseconds', () => {
    const r = parseWrk(WRK_OUTPUT);
    assert.equal(r.requests, 44321);
    assert.equal(r.seconds, 5);
    assert.equal(r.rps, 8864.2);
    assert.equal(r.p50Ms, 0.512);
    assert.equal(r.p99Ms, 1020);
    assert.equal(r.errors, 5);
    assert.equal(r.non2xx, 7);
  });

  it('reports medians, spreads, percentiles and per-round ratios', () => {
    assert.deepEqual(spread([5, 1, 3, 4, 2]), { median: 3, min: 1, max: 5 });
    assert.equal(spread([4, 1, 3, 2]).median, 2.5);
    assert.ok(Number.isNaN(spread([]).median), 'no rounds: no figure, so no target can pass');
    const samples = Array.from({ length: 101 }, (_, i) => 100 - i);
    assert.deepEqual(percentiles(samples), { p50: 50, p99: 99, n: 101 });
    assert.deepEqual(ratio([10, 20, 30], [5, 5, 10]), { median: 4, min: 2, max: 4 });
  });

  it('reads the flags, deriving the JSON file from the Markdown one', () => {
    const o = parseBenchArgs(
      ['--quick', '--only', 'match,size', '--out', '/tmp/x/B.md', '--no-pin'],
      () => {},
    );
    assert.equal(o.quick, true);
    assert.deepEqual(o.only, ['match', 'size']);
    assert.equal(o.json, '/tmp/x/B.json');
    assert.equal(o.pin, false);
    assert.throws(() => parseBenchArgs(['--only', 'speed'], () => {}), /unknown section speed/);
  });
});

describe('npm run bench --quick', () => {
  it('runs every benchmark and writes a table for each (a skip line only where a tool is missing)', {
    timeout: 600_000,
  }, async (t) => {
    const dir = tempDir('hookd-bench-smoke-');
    try {
      const out = join(dir, 'BENCHMARKS.md');
      const lines: string[] = [];
      const report: BenchReport = await runBench({
        ...parseBenchArgs(['--quick', '--out', out, '--no-pin', '--no-setup'], (l) => lines.push(l)),
      });
      assert.ok(existsSync(join(dir, 'benchmarks.json')), 'the JSON report is written beside the Markdown');
      const json = JSON.parse(readFileSync(join(dir, 'benchmarks.json'), 'utf8')) as BenchReport;
      assert.deepEqual(
        json.sections.map((s) => s.section),
        [...SECTIONS],
      );
      assert.equal(typeof json.machine.node, 'string');

      const md = readFileSync(out, 'utf8');
      assert.match(md, /Versions: hookd .*Node v\d+.*undici \d/);
      assert.match(md, /### Targets/);
      const skipped: string[] = [];
      for (const s of SECTIONS) {
        const start = md.indexOf(`### ${TITLES[s]} (`);
        assert.notEqual(start, -1, `section ${s} is in the report`);
        const next = md.indexOf('\n### ', start + 1);
        const body = md.slice(start, next === -1 ? undefined : next);
        const outcome = report.sections.find((o) => o.section === s)!;
        assert.notEqual(outcome.status, 'failed', `${s} failed: ${outcome.text}`);
        if (outcome.status === 'skipped') {
          // A section skips only for want of a tool (PostgreSQL for the cluster): it says so.
          assert.match(body, /\nSkipped: \S/, `${s}: ${body}`);
          skipped.push(`${s}: ${outcome.text}`);
          continue;
        }
        // A section that ran shows its figures: a Markdown table or a preformatted one.
        const shown = /\n\| .+ \|\n\| -/.test(body) || /\n```\n\S/.test(body);
        assert.ok(shown, `${s}: ${body}`);
        // A part of a section may skip for want of a tool (nginx beside hookd in the proxy bench).
        for (const m of body.matchAll(/\nSkipped: (.+)/g)) skipped.push(`${s}: ${m[1]}`);
      }
      // Matching needs nothing but hookd: it always runs, so a run of nothing but skips fails here.
      assert.equal(report.sections.find((o) => o.section === 'match')?.status, 'ok');
      // A second run rewrites the generated part and keeps the prose around it.
      const prose = '\n\nHand-written notes that a run must keep.\n';
      writeFileSync(out, readFileSync(out, 'utf8') + prose);
      await runBench(
        parseBenchArgs(['--quick', '--only', 'match', '--out', out, '--no-pin', '--no-setup'], () => {}),
      );
      const again = readFileSync(out, 'utf8');
      assert.ok(again.includes(prose.trim()));
      assert.equal(again.split('<!-- bench:begin -->').length, 2, 'one generated block');
      // Sections left out of an `--only` run keep their figures from the earlier run, dated.
      assert.match(again, /### 2\. Proxy \([\d.]+ s; kept from the run of \d{4}-[^)]+\)\n\n\| /);
      const json2 = JSON.parse(readFileSync(join(dir, 'benchmarks.json'), 'utf8')) as BenchReport;
      assert.equal(json2.sections.find((x) => x.section === 'proxy')?.measured, json.date);
      assert.equal(json2.sections.find((x) => x.section === 'match')?.measured, undefined);
      if (skipped.length > 0) return requireOrSkip(t, `benchmarks skipped: ${skipped.join('; ')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// hookd web console: the little script the server-rendered pages need. No inline script anywhere
// (the Content-Security-Policy forbids it); everything user-controlled is set as text, never HTML.
(() => {
  const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';

  // Every htmx request carries the session's CSRF token as a header.
  document.addEventListener('htmx:configRequest', (e) => {
    e.detail.headers['X-CSRF-Token'] = meta('csrf-token');
  });

  // Forms that need a confirmation (delete): asked before they are sent.
  document.addEventListener('submit', (e) => {
    const form = e.target;
    const question = form instanceof HTMLFormElement ? form.dataset.confirm : undefined;
    if (question && !window.confirm(question)) e.preventDefault();
  });

  // With the pointer away from a chart its legend shows the newest values, not "--".
  function newestInLegend(u) {
    const n = u.data[0]?.length ?? 0;
    if (n > 0 && u.cursor.idx == null) u.setLegend({ idx: n - 1 }, false);
  }
  const legendHooks = { ready: [newestInLegend], setCursor: [newestInLegend] };

  // Delivered and failed outcomes as stacked bars (failed at the bottom), the one look of every
  // outcome chart; `pad` is half a bucket in seconds, so the first and last bars are whole.
  function outcomeBars(el, opts, x, ok, failed, pad) {
    const bars = uPlot.paths.bars({ size: [0.8, 40] });
    const top = ok.map((v, i) => v + failed[i]);
    const bar = (label, stroke, fill, value) => ({
      label,
      stroke,
      fill,
      paths: bars,
      points: { show: false },
      value,
    });
    return new uPlot(
      {
        ...opts,
        hooks: legendHooks,
        scales: { x: { time: true, range: (_u, min, max) => [min - pad, max + pad] } },
        series: [
          {},
          // The bar is stacked (delivered + failed); the legend says how many were delivered.
          bar('Delivered', '#1a7f37', 'rgba(26,127,55,0.6)', (_u, v, _s, i) =>
            v == null || i == null ? '--' : ok[i],
          ),
          bar('Failed', '#cf222e', 'rgba(207,34,46,0.8)', (_u, v) => (v == null ? '--' : v)),
        ],
        axes: [{}, { label: 'deliveries' }],
      },
      [x, top, failed],
      el,
    );
  }

  function drawChart() {
    const el = document.getElementById('chart');
    if (!el || typeof uPlot === 'undefined') return;
    const data = JSON.parse(el.dataset.chart ?? '{}');
    const width = Math.max(280, el.clientWidth || 600);
    const plot = outcomeBars(el, { width, height: 240 }, data.x, data.ok, data.failed, 150);
    el.dataset.drawn = String(data.x.length);
    window.addEventListener('resize', () =>
      plot.setSize({ width: Math.max(280, el.clientWidth), height: 240 }),
    );
  }

  // Times in the one format of the server's pages (layout.ts `time`): "3 min ago 2026-… UTC".
  function relative(deltaMs) {
    const s = Math.round(Math.abs(deltaMs) / 1000);
    if (s < 2) return 'just now';
    const text =
      s < 90
        ? `${s} s`
        : s < 5400
          ? `${Math.round(s / 60)} min`
          : s < 129600
            ? `${Math.round(s / 3600)} h`
            : `${Math.round(s / 86400)} d`;
    return deltaMs < 0 ? `${text} ago` : `in ${text}`;
  }

  function timeElement(iso) {
    const t = Date.parse(iso);
    const el = document.createElement('time');
    el.className = 'when';
    if (Number.isNaN(t)) {
      el.textContent = iso ?? '';
      return el;
    }
    const full = new Date(t).toISOString();
    el.dateTime = full;
    const rel = document.createElement('span');
    rel.className = 'rel';
    rel.textContent = relative(t - Date.now());
    const abs = document.createElement('span');
    abs.className = 'abs';
    abs.textContent = `${full.slice(0, 10)} ${full.slice(11, 19)} UTC`;
    el.append(rel, ' ', abs);
    return el;
  }

  // The relative part of every time on the page stays current.
  function refreshTimes() {
    for (const el of document.querySelectorAll('time.when')) {
      const rel = el.querySelector('.rel');
      const t = Date.parse(el.dateTime);
      if (rel && !Number.isNaN(t)) rel.textContent = relative(t - Date.now());
    }
  }

  // Copy buttons: <button data-copy="ID-of-the-element-whose-text-is-copied">.
  document.addEventListener('click', async (e) => {
    const button = e.target instanceof Element ? e.target.closest('button[data-copy]') : null;
    if (!button) return;
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    const text = source.textContent ?? '';
    let ok = false;
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch {
      // Without the clipboard API (plain http on another host): select the text to copy by hand.
      const range = document.createRange();
      range.selectNodeContents(source);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      ok = document.execCommand?.('copy') ?? false;
    }
    const label = button.dataset.label ?? button.textContent;
    button.dataset.label = label;
    button.textContent = ok ? 'Copied' : 'Selected: press Ctrl+C';
    button.dataset.copied = String(ok);
    setTimeout(() => {
      button.textContent = label;
    }, 2000);
  });

  // A hook's page: outcomes per hour (stacked bars) and the latency of its newest attempts.
  function drawHookChart() {
    const holder = document.getElementById('hook-chart');
    if (!holder || typeof uPlot === 'undefined') return;
    const data = JSON.parse(holder.dataset.chart ?? '{}');
    const outcomesEl = document.getElementById('hook-outcomes');
    const latencyEl = document.getElementById('hook-latency');
    const widthOf = (el) => Math.max(280, el.clientWidth || 400);
    const o = data.outcomes;
    const outcomes = outcomeBars(
      outcomesEl,
      { width: widthOf(outcomesEl), height: 200, title: 'Outcomes per hour, last 24 hours' },
      o.x,
      o.ok,
      o.failed,
      1800,
    );
    const l = data.latency;
    const lo = Math.min(...l.t);
    const hi = Math.max(...l.t);
    const span = hi - lo < 60 ? [lo - 1800, hi + 1800] : [lo, hi];
    const latency = new uPlot(
      {
        width: widthOf(latencyEl),
        height: 200,
        title: `Latency of the newest ${l.t.length} attempt${l.t.length === 1 ? '' : 's'}`,
        hooks: legendHooks,
        // A fixed x range: uPlot's own for a single point (or a burst within a minute) spans years.
        scales: { x: { time: true, auto: false, range: span } },
        series: [{}, { label: 'Latency (ms)', stroke: '#0550ae', width: 1, points: { show: true, size: 6 } }],
        axes: [{}, { label: 'ms' }],
      },
      [l.t, l.ms],
      latencyEl,
    );
    holder.dataset.drawn = String(o.x.length);
    window.addEventListener('resize', () => {
      outcomes.setSize({ width: widthOf(outcomesEl), height: 200 });
      latency.setSize({ width: widthOf(latencyEl), height: 200 });
    });
  }

  function cell(row, text, href, className) {
    const td = document.createElement('td');
    if (className) td.className = className;
    if (href) {
      const a = document.createElement('a');
      a.href = href;
      a.append(text);
      td.appendChild(a);
    } else td.append(text);
    row.appendChild(td);
    return td;
  }

  // A pattern or a path wraps after its slashes (and a query after & and ?), never inside a
  // segment: "(*)" and "attributes" stay whole, and a narrow column is not one character wide.
  function slashBreaks(text) {
    const frag = document.createDocumentFragment();
    // A path's leading slash stays with its first segment.
    for (const part of String(text).split(/(?<=\S[/&?])/)) {
      if (frag.childNodes.length > 0) frag.appendChild(document.createElement('wbr'));
      frag.append(part);
    }
    return frag;
  }

  function badge(status, text) {
    const span = document.createElement('span');
    span.className = `badge ${status}`;
    span.textContent = text;
    return span;
  }

  function live() {
    const form = document.getElementById('live-filters');
    if (!form) return;
    const body = document.getElementById('live-events');
    const empty = document.getElementById('live-empty');
    const state = document.getElementById('live-state');
    const pause = document.getElementById('live-pause');
    const hooks = JSON.parse(form.dataset.hooks ?? '{}');
    const root = form.dataset.root;
    let paused = false;
    let ws;
    const rows = new Map();

    // One row per delivery. Delivery Ids sort by creation time, so rows are kept in descending
    // Id order: strictly newest first, whichever message (fired or a late attempt) came first.
    function rowFor(e) {
      let row = rows.get(e.DeliveryId);
      if (row) return row;
      row = document.createElement('tr');
      row.className = 'live-event';
      row.dataset.delivery = e.DeliveryId;
      // The time links to the delivery too: at phone width the Delivery column is not shown.
      cell(row, timeElement(e.Time), `${root}/deliveries/${encodeURIComponent(e.DeliveryId)}`, 'fired');
      const hookCell = cell(
        row,
        slashBreaks(hooks[e.HookId] ?? e.HookId),
        hooks[e.HookId] ? `${root}/hooks/${encodeURIComponent(e.HookId)}` : undefined,
      );
      hookCell.title = e.HookId;
      const t = e.Trigger;
      cell(
        row,
        slashBreaks(
          !t
            ? ''
            : t.Kind === 'notification'
              ? `notification ${t.Event}`
              : `${t.Method} ${t.Path}${t.StatusCode !== null ? ` [${t.StatusCode}]` : ''}${t.User ? ` (${t.User})` : ''}`,
        ),
        undefined,
        'trigger',
      );
      const outcome = cell(row, '', undefined, 'outcome');
      outcome.appendChild(badge('pending', 'pending'));
      cell(row, '0', undefined, 'attempts');
      cell(row, e.DeliveryId, `${root}/deliveries/${encodeURIComponent(e.DeliveryId)}`, 'delivery');
      let before = null;
      for (const other of body.rows) {
        if (other.dataset.delivery < e.DeliveryId) {
          before = other;
          break;
        }
      }
      body.insertBefore(row, before);
      rows.set(e.DeliveryId, row);
      while (body.rows.length > 200) {
        const last = body.rows[body.rows.length - 1];
        rows.delete(last.dataset.delivery);
        last.remove();
      }
      empty.hidden = true;
      return row;
    }

    function update(row, e) {
      const outcome = row.querySelector('.outcome');
      outcome.textContent = '';
      const status = e.Outcome === 'retrying' ? 'retrying' : e.Outcome;
      outcome.appendChild(badge(status, `${e.Outcome}${e.StatusCode !== null ? ` ${e.StatusCode}` : ''}`));
      // A broker row has no status: its receipt says where the message went ("confirmed by …").
      const detail =
        e.StatusCode === null && e.Error
          ? e.Error
          : `${e.StatusCode === null && e.Receipt ? `${e.Receipt} · ` : ''}${Math.round(e.LatencyMs)} ms`;
      outcome.append(` ${detail}`);
      row.querySelector('.attempts').textContent = String(e.Attempt);
      row.dataset.outcome = e.Outcome;
    }

    const connect = () => {
      ws?.close();
      const params = new URLSearchParams();
      const hook = form.elements.hook.value;
      const status = form.elements.status.value;
      if (hook) params.set('hook', hook);
      if (status) params.set('status', status);
      const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${form.dataset.tail}${params.size ? `?${params}` : ''}`;
      ws = new WebSocket(url);
      ws.onopen = () => {
        state.textContent = 'connected';
        form.dataset.connected = 'true';
      };
      ws.onclose = () => {
        state.textContent = 'disconnected';
        form.dataset.connected = 'false';
      };
      ws.onmessage = (m) => {
        if (paused) return;
        const e = JSON.parse(m.data);
        if (e.kind === 'dropped') {
          state.textContent = `${e.Count} events skipped (too many to show)`;
          return;
        }
        if (!e.DeliveryId) return;
        const row = rowFor(e);
        if (e.kind === 'attempt') update(row, e);
      };
    };
    form.addEventListener('change', () => {
      body.textContent = '';
      rows.clear();
      empty.hidden = false;
      connect();
    });
    pause.addEventListener('click', () => {
      paused = !paused;
      pause.setAttribute('aria-pressed', String(paused));
      pause.textContent = paused ? 'Resume' : 'Pause';
    });
    connect();
  }

  document.addEventListener('DOMContentLoaded', () => {
    drawChart();
    drawHookChart();
    live();
    setInterval(refreshTimes, 15_000);
  });
})();

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

  function drawChart() {
    const el = document.getElementById('chart');
    if (!el || typeof uPlot === 'undefined') return;
    const data = JSON.parse(el.dataset.chart ?? '{}');
    // Stacked bars: failed at the bottom, delivered on top of them.
    const top = data.ok.map((v, i) => v + data.failed[i]);
    const bars = uPlot.paths.bars({ size: [0.8, 40] });
    const width = Math.max(280, el.clientWidth || 600);
    const plot = new uPlot(
      {
        width,
        height: 240,
        // Half a bucket of room at each end, so the first and last bars are whole.
        scales: { x: { time: true, range: (_u, min, max) => [min - 150, max + 150] } },
        series: [
          {},
          {
            label: 'Delivered',
            stroke: '#1a7f37',
            fill: 'rgba(26,127,55,0.6)',
            paths: bars,
            points: { show: false },
          },
          {
            label: 'Failed',
            stroke: '#cf222e',
            fill: 'rgba(207,34,46,0.8)',
            paths: bars,
            points: { show: false },
          },
        ],
        axes: [{}, { label: 'deliveries' }],
      },
      [data.x, top, data.failed],
      el,
    );
    el.dataset.drawn = String(data.x.length);
    window.addEventListener('resize', () =>
      plot.setSize({ width: Math.max(280, el.clientWidth), height: 240 }),
    );
  }

  function cell(row, text, href) {
    const td = document.createElement('td');
    if (href) {
      const a = document.createElement('a');
      a.href = href;
      a.textContent = text;
      td.appendChild(a);
    } else td.textContent = text;
    row.appendChild(td);
  }

  function live() {
    const form = document.getElementById('live-filters');
    if (!form) return;
    const body = document.getElementById('live-events');
    const state = document.getElementById('live-state');
    const pause = document.getElementById('live-pause');
    let paused = false;
    let ws;
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
        const row = document.createElement('tr');
        row.className = 'live-event';
        cell(row, e.Time ?? '');
        cell(row, e.kind === 'attempt' ? `attempt ${e.Attempt}` : 'fired');
        cell(
          row,
          e.Trigger
            ? `${e.Trigger.Method} ${e.Trigger.Path}${e.Trigger.User ? ` (${e.Trigger.User})` : ''}`
            : '',
        );
        cell(
          row,
          e.kind === 'attempt' ? `${e.Outcome} ${e.StatusCode ?? ''} ${Math.round(e.LatencyMs)} ms` : '',
        );
        cell(
          row,
          e.DeliveryId ?? '',
          e.DeliveryId ? `${form.dataset.root}/deliveries/${encodeURIComponent(e.DeliveryId)}` : undefined,
        );
        body.insertBefore(row, body.firstChild);
        while (body.rows.length > 200) body.deleteRow(-1);
      };
    };
    form.addEventListener('change', connect);
    pause.addEventListener('click', () => {
      paused = !paused;
      pause.setAttribute('aria-pressed', String(paused));
      pause.textContent = paused ? 'Resume' : 'Pause';
    });
    connect();
  }

  document.addEventListener('DOMContentLoaded', () => {
    drawChart();
    live();
  });
})();

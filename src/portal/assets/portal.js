// hookd portal: tells the embedding page what happened, with window.parent.postMessage, and only
// to the origins the operator allowed to frame the portal (the browser drops a message whose
// target origin is not the parent's). No secret ever goes into a message.
(() => {
  const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';
  const parse = (text, fallback) => {
    try {
      return JSON.parse(text);
    } catch {
      return fallback;
    }
  };
  const origins = parse(meta('portal-parent-origins'), []);
  const post = (event) => {
    if (window.parent === window) return;
    for (const origin of origins) window.parent.postMessage(event, origin);
  };

  // What htmx answers announce (HX-Trigger): relayed with the Ids they name.
  const relayed = ['hookd:secret-rotated', 'hookd:test-event-sent', 'hookd:redelivered'];
  for (const type of relayed)
    document.addEventListener(type, (e) => {
      const d = e.detail ?? {};
      post({
        type,
        ...(typeof d.hookId === 'string' && { hookId: d.hookId }),
        ...(typeof d.deliveryId === 'string' && { deliveryId: d.deliveryId }),
      });
    });

  // What happened before the redirect that brought this page (a hook created, saved, deleted).
  for (const e of parse(meta('portal-events'), [])) post(e);
  const height = () => Math.ceil(document.documentElement.scrollHeight);
  post({ type: 'hookd:page', path: location.pathname, title: document.title, height: height() });

  // The page's height as it changes (the log grows, a secret is revealed), so that the embedding
  // page can size its iframe to fit; once per frame at most.
  let last = height();
  let queued = false;
  new ResizeObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      const now = height();
      if (now !== last) post({ type: 'hookd:resize', height: now });
      last = now;
    });
  }).observe(document.documentElement);
})();

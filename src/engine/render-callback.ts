/** A fired hook's callback request: its URL and body templates rendered for one trigger. */
import { type Hook, isoTimestamp, TemplateSizeError } from '../hook/index.js';
import { hasBody, type TemplateCache } from './compiled-hook.js';
import type { CallbackRequest, Trigger } from './fired-event.js';

/** Undefined when the body is over the size limit (told to `onRenderError`). */
export function renderCallback(
  templates: TemplateCache,
  hook: Hook,
  captures: string[],
  t: Trigger,
  uri: string,
  at: Date,
  user: string,
  onRenderError: ((hook: Hook, err: Error) => void) | undefined,
): CallbackRequest | undefined {
  const request: CallbackRequest = {
    method: hook.CallbackMethod,
    url: hook.Callback,
    headers: { ...hook.Headers },
  };
  if (t.loop !== undefined) request.headers['cdn-loop'] = t.loop;
  const url = templates.url(hook);
  const body = hasBody(hook);
  if (url === undefined && !body) return request;
  const ctx = {
    requestPath: t.path,
    requestUri: uri,
    requestMethod: t.method,
    requestUser: user,
    statusCode: t.statusCode,
    hookId: hook.Id,
    hookType: hook.Type,
    timestamp: isoTimestamp(at),
    captures,
  };
  if (url !== undefined) request.url = url.render(ctx);
  if (!body) return request;
  try {
    request.body = templates.of(hook).render(ctx);
  } catch (err) {
    if (!(err instanceof TemplateSizeError)) throw err;
    onRenderError?.(hook, err);
    return undefined;
  }
  request.headers['content-type'] = hook.CallbackContentMediaType;
  return request;
}

import type { Hook } from '../hook/hook.js';

/** The API's view of a hook: fields in a fixed, readable order (Id first, server fields last). */
export function presentHook(h: Hook): Record<string, unknown> {
  return {
    Id: h.Id,
    Owner: h.Owner,
    PathPattern: h.PathPattern,
    Methods: h.Methods,
    Type: h.Type,
    StatusCodeBlackList: h.StatusCodeBlackList,
    StatusCodeWhiteList: h.StatusCodeWhiteList,
    Callback: h.Callback,
    CallbackMethod: h.CallbackMethod,
    ...(h.CallbackContent !== undefined && { CallbackContent: h.CallbackContent }),
    CallbackContentMediaType: h.CallbackContentMediaType,
    Headers: h.Headers,
    Persist: h.Persist,
    ...(h.RetrySchedule !== undefined && { RetrySchedule: h.RetrySchedule }),
    ...(h.RateLimit !== undefined && { RateLimit: h.RateLimit }),
    ...(h.Signature !== undefined && { Signature: h.Signature }),
    ...(h.Ordering !== undefined && { Ordering: h.Ordering }),
    Modified: h.Modified,
    State: h.State,
    ...(h.DisabledReason !== undefined && { DisabledReason: h.DisabledReason }),
    ...(h.DisabledAt !== undefined && { DisabledAt: h.DisabledAt }),
  };
}

import { presentTls } from '../client-tls/index.js';
import type { Hook, ShownHookState } from '../hook/index.js';
import { presentAuth } from '../oauth2/index.js';

/**
 * The state the API shows when it is not the stored one (`unverified`), and, when the
 * hook's callback is verified, the last handshake's result (`VerificationResult`).
 */
export interface HookStateView {
  (h: Hook): ShownHookState | undefined;
  verification?: (h: Hook) => { At: string; Result: string; NextAt?: string } | undefined;
  /** The last evaluation error of the hook's Filter in this process (src/filter/). */
  lastFilterError?: (h: Hook) => { At: string; Error: string } | undefined;
}

/** The view with each hook's LastFilterError as the match engine last saw it. */
export function withLastFilterError<V extends HookStateView>(
  view: V,
  engine: { code: { lastFilterError(id: string): { At: string; Error: string } | undefined } },
): V {
  return Object.assign(view, { lastFilterError: (h: Hook) => engine.code.lastFilterError(h.Id) });
}

/** The API's view of a hook: fields in a fixed, readable order (Id first, server fields last). */
export function presentHook(h: Hook, view?: HookStateView): Record<string, unknown> {
  const verification = view?.verification?.(h);
  const filterError = h.Filter === undefined ? undefined : view?.lastFilterError?.(h);
  return {
    Id: h.Id,
    ...(h.Name !== undefined && { Name: h.Name }),
    Owner: h.Owner,
    PathPattern: h.PathPattern,
    Methods: h.Methods,
    Type: h.Type,
    StatusCodeBlackList: h.StatusCodeBlackList,
    StatusCodeWhiteList: h.StatusCodeWhiteList,
    Callback: h.Callback,
    CallbackMethod: h.CallbackMethod,
    ...(h.CallbackContent !== undefined && { CallbackContent: h.CallbackContent }),
    ...(h.ContentEscape !== undefined && { ContentEscape: h.ContentEscape }),
    ...(h.Filter !== undefined && { Filter: h.Filter }),
    ...(h.Transform !== undefined && { Transform: h.Transform }),
    CallbackContentMediaType: h.CallbackContentMediaType,
    Headers: h.Headers,
    Persist: h.Persist,
    ...(h.RetrySchedule !== undefined && { RetrySchedule: h.RetrySchedule }),
    ...(h.RateLimit !== undefined && { RateLimit: h.RateLimit }),
    ...(h.Signature !== undefined && { Signature: h.Signature }),
    ...(h.Ordering !== undefined && { Ordering: h.Ordering }),
    ...(h.Verification !== undefined && { Verification: h.Verification }),
    // Key material is write-only: the certificates described, the key only as set.
    ...(h.Tls !== undefined && { Tls: presentTls(h.Tls) }),
    ...(h.Auth !== undefined && { Auth: presentAuth(h.Auth) }),
    Modified: h.Modified,
    State: view?.(h) ?? h.State,
    ...(verification !== undefined && { VerificationResult: verification }),
    ...(filterError !== undefined && { LastFilterError: filterError }),
    ...(h.DisabledReason !== undefined && { DisabledReason: h.DisabledReason }),
    ...(h.DisabledAt !== undefined && { DisabledAt: h.DisabledAt }),
  };
}

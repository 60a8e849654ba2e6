/**
 * The IANA HTTP Method Registry (https://www.iana.org/assignments/http-methods), plus the few
 * methods Node.js's parser knows besides (M-SEARCH, NOTIFY, PURGE, SOURCE, SUBSCRIBE,
 * UNSUBSCRIBE). A hook's Methods outside this list are accepted (any RFC 9110 token is a method)
 * but draw a warning: `GIT` is far more likely a typo than a private method.
 */
export const REGISTERED_METHODS: readonly string[] = Object.freeze([
  'ACL',
  'BASELINE-CONTROL',
  'BIND',
  'CHECKIN',
  'CHECKOUT',
  'CONNECT',
  'COPY',
  'DELETE',
  'GET',
  'HEAD',
  'LABEL',
  'LINK',
  'LOCK',
  'M-SEARCH',
  'MERGE',
  'MKACTIVITY',
  'MKCALENDAR',
  'MKCOL',
  'MKREDIRECTREF',
  'MKWORKSPACE',
  'MOVE',
  'NOTIFY',
  'OPTIONS',
  'ORDERPATCH',
  'PATCH',
  'POST',
  'PRI',
  'PROPFIND',
  'PROPPATCH',
  'PURGE',
  'PUT',
  'QUERY',
  'REBIND',
  'REPORT',
  'SEARCH',
  'SOURCE',
  'SUBSCRIBE',
  'TRACE',
  'UNBIND',
  'UNCHECKOUT',
  'UNLINK',
  'UNLOCK',
  'UNSUBSCRIBE',
  'UPDATE',
  'UPDATEREDIRECTREF',
  'VERSION-CONTROL',
]);

const REGISTERED = new Set(REGISTERED_METHODS);

export function isRegisteredMethod(method: string): boolean {
  return REGISTERED.has(method.toUpperCase());
}

import { OWN_ROOT } from '../http-api/index.js';

/**
 * Which request paths belong to the management API and which go to the upstream. With the
 * default base `/` the API owns a fixed set of first segments; with a base such as `/api` it owns
 * everything below that prefix. Called for every request, so it only looks at the first segment.
 */
export const API_ROOTS = new Set(['hooks', 'hooktypes', OWN_ROOT]);

export function apiPathMatcher(base: string): (url: string) => boolean {
  if (base === '/') {
    return (url) => {
      let end = url.length;
      for (let i = 1; i < url.length; i++) {
        const c = url.charCodeAt(i);
        if (c === 47 /* / */ || c === 63 /* ? */) {
          end = i;
          break;
        }
      }
      return API_ROOTS.has(url.slice(1, end));
    };
  }
  return (url) =>
    url.startsWith(base) &&
    (url.length === base.length || url[base.length] === '/' || url[base.length] === '?');
}

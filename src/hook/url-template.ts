/**
 * Callback URLs with template values (`mqtt://broker/ts/$1/read`): the same references as
 * `CallbackContent` (`$1`…`$n`, `$REQUEST_PATH`, `${HOOK_ID}`…), each value escaped by the
 * Callback scheme's transport for the place it fills (an MQTT topic level, a NATS subject token)
 * and returned URL-encoded, so that no request path can change the URL's structure.
 */
import { type CompiledTemplate, GETTERS, readReference, type TemplateContext } from './template.js';

/** Escapes one value for its place in the URL, URL-encoded. */
export type UrlValueEscape = (value: string) => string;

interface UrlSlot {
  get: (ctx: TemplateContext) => string | undefined;
  raw: string;
}

/**
 * Compiles a Callback URL as written into a template. Unknown `$words` and captures the pattern
 * does not have are kept as written, as in `CallbackContent`.
 */
export function compileUrlTemplate(url: string, esc: UrlValueEscape): CompiledTemplate {
  const literals: string[] = [];
  const slots: UrlSlot[] = [];
  let literalStart = 0;
  let i = url.indexOf('$');
  while (i !== -1) {
    const ref = readReference(url, i);
    const slot = ref && urlSlot(ref.name, url.slice(i, ref.end));
    if (ref && slot) {
      literals.push(url.slice(literalStart, i));
      slots.push(slot);
      literalStart = ref.end;
      i = url.indexOf('$', ref.end);
    } else {
      i = url.indexOf('$', i + 1);
    }
  }
  if (slots.length === 0) return { render: () => url };
  literals.push(url.slice(literalStart));
  return {
    render(ctx) {
      let out = literals[0]!;
      for (let k = 0; k < slots.length; k++) {
        const slot = slots[k]!;
        const value = slot.get(ctx);
        out += (value === undefined ? slot.raw : esc(value)) + literals[k + 1]!;
      }
      return out;
    },
  };
}

function urlSlot(name: string, raw: string): UrlSlot | null {
  const named = GETTERS.get(name);
  if (named !== undefined) return { get: named, raw };
  const c = name.charCodeAt(0);
  if (c < 0x30 || c > 0x39) return null;
  const index = Number(name) - 1;
  return { get: (ctx) => ctx.captures[index], raw };
}

/**
 * The checks of a hook that go beyond its shape: what its `CallbackContent` template refers to
 * and whether its `Methods` are methods at all. One thing is an error (a capture the pattern does
 * not have: every firing would send `$3` as written); the rest are warnings, returned with the
 * stored hook (`Warnings`), because hooks made before these checks existed must keep working and
 * some of them (the seed's bare `$REQUEST_PATH` under application/json) are used on purpose.
 */
import { type ClientTls, tlsWarnings } from '../client-tls/index.js';
import type { FieldError } from '../errors/index.js';
import { suggest } from '../util/index.js';
import { isRegisteredMethod, REGISTERED_METHODS } from './http-methods.js';
import { mediaKind, parseMediaType } from './media-type.js';
import { compilePattern } from './pattern.js';
import { readReference, TEMPLATE_VARIABLES } from './template.js';

/** What the lint reads of a hook (a validated configuration or a stored hook). */
export interface LintInput {
  PathPattern: string;
  Methods: readonly string[];
  Type: number;
  CallbackContent?: string | undefined;
  CallbackContentMediaType?: string | undefined;
  Tls?: ClientTls | undefined;
  ContentEscape?: string | undefined;
}

export interface HookLint {
  errors: FieldError[];
  warnings: FieldError[];
}

/** A JSON body with a `"text"` member: what Slack, Mattermost, Teams and Discord-style webhooks read. */
const CHAT_TEXT_KEY = /"(?:text|content)"\s*:/;

/** `$UPPER_CASE`: what a template variable looks like; `$schema` and `$ref` are left alone. */
const VARIABLE_LIKE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;
const AFTER_COMPLETION = 1;

/** Lints a hook; never throws. */
export function lintHook(h: LintInput): HookLint {
  const errors: FieldError[] = [];
  const warnings: FieldError[] = [];
  h.Methods.forEach((m, i) => {
    if (m === '*' || isRegisteredMethod(m)) return;
    const near = suggest(m, REGISTERED_METHODS);
    warnings.push({
      field: `Methods[${i}]`,
      message: `"${m}" is not a registered HTTP method, so no ordinary request will fire this hook${near ? `; did you mean ${near}?` : ''}`,
    });
  });
  warnings.push(...placeholderWarnings(h.PathPattern));
  if (h.CallbackContent !== undefined) lintTemplate(h, h.CallbackContent, errors, warnings);
  if (h.Tls !== undefined) warnings.push(...tlsWarnings(h.Tls));
  return { errors, warnings };
}

/** `{id}` (OpenAPI, URI templates) and `:repo` (Express, Rails): what other routers call a parameter. */
const FOREIGN_PLACEHOLDER = /^(?:\{[^{}/]*\}|:[A-Za-z_][A-Za-z0-9_]*)$/;

/**
 * A segment spelt as another router's placeholder matches only itself here, so the hook never
 * fires for real paths: each such segment is named with hookd's spelling.
 */
function placeholderWarnings(pattern: string): FieldError[] {
  return pattern
    .split('/')
    .filter((seg) => FOREIGN_PLACEHOLDER.test(seg))
    .map((seg) => ({
      field: 'PathPattern',
      message: `\`${seg}\` is a literal segment here; for any value write \`*\`, to capture it \`(*)\``,
    }));
}

function lintTemplate(h: LintInput, template: string, errors: FieldError[], warnings: FieldError[]): void {
  const field = 'CallbackContent';
  const compiled = compilePattern(h.PathPattern);
  const captures = compiled.ok ? compiled.pattern.captureCount : undefined;
  const mt = parseMediaType(h.CallbackContentMediaType ?? 'application/json');
  const json = mt !== null && mediaKind(mt) === 'json';
  const known = new Set(TEMPLATE_VARIABLES.map((v) => v.slice(1)));
  const said = new Set<string>();
  const once = (list: FieldError[], message: string) => {
    if (said.has(message)) return;
    said.add(message);
    list.push({ field, message });
  };

  // The template with sample values in place of its variables, to judge it as JSON.
  let substitutes = false;
  let sample = '';
  let inString = false;
  let i = 0;
  let copied = 0;
  while (i < template.length) {
    const c = template.charCodeAt(i);
    if (json && inString && c === 0x5c) {
      i += 2;
      continue;
    }
    if (json && c === 0x22) {
      inString = !inString;
      i++;
      continue;
    }
    if (c !== 0x24) {
      i++;
      continue;
    }
    const ref = readReference(template, i);
    if (ref === null) {
      i++;
      continue;
    }
    const raw = template.slice(i, ref.end);
    let recognised = false;
    if (/^\d/.test(ref.name)) {
      const n = Number(ref.name);
      if (n === 0) {
        once(errors, `${raw} is not a capture: captures are numbered from $1`);
      } else if (captures !== undefined && n > captures) {
        once(
          errors,
          captures === 0
            ? `${raw} refers to capture ${n}, but PathPattern "${h.PathPattern}" captures nothing; mark the segments to capture with (*), or write \${${n}} differently`
            : `${raw} refers to capture ${n}, but PathPattern "${h.PathPattern}" has ${captures} capture${captures === 1 ? '' : 's'} ($1${captures > 1 ? `…$${captures}` : ''})`,
        );
      } else recognised = true;
    } else if (known.has(ref.name)) {
      recognised = true;
    } else if (VARIABLE_LIKE.test(ref.name)) {
      const near = suggest(`$${ref.name}`, TEMPLATE_VARIABLES);
      once(
        warnings,
        `${raw} is not a template variable and is sent as written${near ? `; did you mean ${near}?` : ` (variables: ${TEMPLATE_VARIABLES.join(', ')}, $1…$n)`}`,
      );
    }
    if (recognised) substitutes = true;
    if (recognised && json) {
      // $STATUS_CODE of an AfterCompletion hook is always a number: bare is fine (and useful).
      const numeric = ref.name === 'STATUS_CODE' && h.Type === AFTER_COMPLETION;
      if (!inString && !numeric) {
        once(
          warnings,
          `${raw} is outside a JSON string, so its value goes in unquoted and the body is not valid JSON; write "${raw}"`,
        );
      }
      sample += template.slice(copied, i) + (inString ? 'x' : numeric ? '200' : '"x"');
      copied = ref.end;
    }
    i = ref.end;
  }
  if (!json) return;
  if (substitutes && (h.ContentEscape ?? 'none') === 'none' && CHAT_TEXT_KEY.test(template)) {
    warnings.push({
      field: 'ContentEscape',
      message:
        'is not set, and CallbackContent looks like a chat message (a "text" or "content" member): whoever sends a request through hookd can put chat markup (<!channel>, links, @everyone) into the values it substitutes; set "ContentEscape": "slack" (or mattermost, discord, markdown)',
    });
  }
  sample += template.slice(copied);
  try {
    JSON.parse(sample);
  } catch (e) {
    const why = (e as Error).message.replace(/^JSON\.parse: /, '');
    once(
      warnings,
      `is not valid JSON under media type ${h.CallbackContentMediaType ?? 'application/json'} (with sample values for its variables): ${why}`,
    );
  }
}

// The public surface of hook/: what other folders may import. Everything else is its own.

export { CONTENT_ESCAPES, type ContentEscape } from './content-escape.js';
export {
  BEFORE_COMPLETION,
  CALLBACK_METHODS,
  HOOK_TYPES,
  type Hook,
  type HookConfig,
  isoTimestamp,
  type OrderingConfig,
  type RateLimit,
  type ShownHookState,
} from './hook.js';
export { etagOf } from './hook-etag.js';
export { HOOK_ID_SHAPE, newHookId } from './hook-id.js';
export { isHookName, NAME_RULE } from './hook-name.js';
export { HOOK_SCHEMA } from './hook-schema.js';
export { internHook } from './intern-hook.js';
export { type LintInput, lintHook } from './lint-hook.js';
export {
  type CompiledPattern,
  compilePattern,
  decodeRequestSegment,
  firstRequestSegment,
  splitRequestPath,
} from './pattern.js';
export { sameHook } from './same-hook.js';
export { type CompiledTemplate, compileTemplate, TemplateSizeError } from './template.js';
export { compileUrlTemplate, type UrlValueEscape } from './url-template.js';
export { type ValidateOptions, validateHook } from './validate-hook.js';

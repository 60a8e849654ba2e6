// The public surface of errors/: what other folders may import. Everything else is its own.
export { ERRORS, type ErrorCode, type FieldError, HookdError, problemType } from './catalog.js';

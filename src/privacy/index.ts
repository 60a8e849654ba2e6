// The public surface of privacy/: what other folders may import. Everything else is its own.
export { DEFAULT_REDACTED_QUERY_PARAMS, queryRedactor } from './redact-query.js';

// The public surface of filter/: a hook's CEL Filter compiled once, and the values it reads.
export {
  type CompiledFilter,
  compileFilter,
  type FilterCompileResult,
  type FilterVerdict,
} from './compile-filter.js';
export { type BodyCopy, BodyRecorder, DEFAULT_FILTER_BODY_LIMIT, parseBody } from './filter-body.js';
export { filterHeaders, filterQuery } from './filter-request.js';
export {
  type FilterInput,
  type FilterRequest,
  type FilterResponse,
  type FilterValue,
  HIDDEN_HEADERS,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LENGTH,
} from './variables.js';

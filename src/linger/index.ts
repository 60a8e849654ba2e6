// The public surface of linger/: the lingering close of early answers (docs/DECISIONS.md
// "Lingering close"). Every HTTP server of hookd that reads request bodies uses it.
export { DEFAULT_LINGER, type LingerBounds } from './bounds.js';
export { lingeringResponse } from './lingering-response.js';

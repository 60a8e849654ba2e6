// The public surface of util/: what other folders may import. Everything else is its own.

export { cgroupQuota, usableCores } from './cores.js';
export { defaultDataDir } from './data-dir.js';
export { JsonTextError, lineColumn, locateJsonError, parseJsonText } from './json-text.js';
export { onDemand } from './on-demand.js';
export { packageInfo } from './package-info.js';
export { printable } from './printable.js';
export { withoutPassword } from './redact-url.js';
export { CROCKFORD, sortableId } from './sortable-id.js';
export { stopThread } from './stop-thread.js';
export { didYouMean, suggest } from './suggest.js';
export { withoutYoungGrowth } from './young-generation.js';

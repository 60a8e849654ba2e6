/**
 * Hooks as code: hook files keyed by `Name`, compared with the caller's hooks on the
 * server. `hookctl apply` and `hookctl diff` are its two commands; this folder is what they share.
 */
export { type HookFileEntry, loadHookFiles } from './load-files.js';
export { type Action, canonical, type Invalid, planHooks, type Step } from './plan.js';
export { unifiedDiff } from './unified-diff.js';

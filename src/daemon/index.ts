/**
 * hookd, the daemon: assembled from its configuration (createHookd, the order of assembly; each
 * part registers its stop with the Lifecycle), run with signals (runDaemon), and its command line
 * (buildHookdCommand, with the admin commands and check-config).
 */
export { createHookd, type Hookd, type HookdOptions, STORE_FILE } from './hookd.js';
export { Lifecycle } from './lifecycle.js';
export { buildHookdCommand, checkConfig, EXIT, runDaemon, settingsProblems } from './main.js';
export { diffConfig, HOT_KEYS, RESTART_KEYS, type ReloadResult } from './reload.js';

/**
 * hookd, the daemon: one process assembled from its configuration (createHookd, the order of
 * assembly; each part registers its stop with the Lifecycle). The command line that runs it, alone
 * or as workers, is src/hookd-cli/ (it sits above both this room and src/workers/).
 */
export { createHookd, type Hookd, type HookdOptions, STORE_FILE } from './hookd.js';
export { Lifecycle } from './lifecycle.js';
export { createLogger } from './logger.js';
export { openAdminStore, openSecretTables, secretsKeyFile } from './open-store.js';
export { stopWithParent } from './parent-watch.js';
export { diffConfig, HOT_KEYS, RESTART_KEYS, type ReloadResult } from './reload.js';
export { RuntimeSettings } from './runtime-settings.js';

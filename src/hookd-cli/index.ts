/**
 * hookd's command line: flags and config into a HookdConfig, then one daemon process
 * (src/daemon/) or a primary with workers (src/workers/); the admin commands and check-config.
 */
export { buildHookdCommand, checkConfig, EXIT, main, runDaemon, settingsProblems } from './main.js';

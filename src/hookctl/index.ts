/**
 * hookctl, the CLI client of hookd's API (bin/hookctl.js runs `main`); tests drive `runCli` in
 * process. A client only: it imports the low rooms (hook/, wire/, util/, errors/), never the daemon.
 */
export { buildProgram, main, runCli } from './main.js';

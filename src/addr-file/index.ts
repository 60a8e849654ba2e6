// The public surface of addr-file/: the running daemon's API address in its data dir, so that
// `hookd user …` and `hookd token …` talk to it instead of writing its store behind its back.
export {
  ADDR_FILE,
  type DaemonAddress,
  readLiveAddress,
  removeAddrFile,
  writeAddrFile,
} from './addr-file.js';
export { type AdminApi, type ApiToken, type ApiUser, adminApi } from './admin-api.js';

// The public surface of auth/: what other folders may import. Everything else is its own.
export { Authenticator, type Principal } from './authenticator.js';
export { newToken, parseToken } from './token.js';
export { isValidUserName, USER_NAME_RULE } from './user-name.js';

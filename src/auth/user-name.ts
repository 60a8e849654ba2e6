/** User names: what fits in a URL, a log line and a file name without quoting. */
export const USER_NAME_RULE = 'a letter followed by up to 63 letters, digits, `.`, `_` or `-`';
const USER_NAME = /^[A-Za-z][A-Za-z0-9._-]{0,63}$/;

export function isValidUserName(name: string): boolean {
  return USER_NAME.test(name);
}

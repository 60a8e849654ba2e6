/**
 * A URL as logs, pages and the delivery log show it: a password in it (a broker's credentials
 * in a Callback) is a secret and becomes `REDACTED`; the user name stays, it names the receiver.
 */
export function withoutPassword(url: string): string {
  // Most URLs carry no credentials: no parse for them.
  if (!url.includes('@') || !URL.canParse(url)) return url;
  const u = new URL(url);
  if (u.password === '') return url;
  u.password = 'REDACTED';
  return u.href;
}

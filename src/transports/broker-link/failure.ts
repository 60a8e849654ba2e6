/**
 * Why a broker connection could not be used, in words fit for the delivery log (never with a
 * password). `denied`: the address policy refused the host, nothing was sent. `unreachable`: no
 * connection (refused, DNS, TLS, time-out, lost). `refused`: the broker answered and said no
 * (wrong credentials, an unknown vhost or database): retrying the same URL cannot help.
 */
export class LinkFailure extends Error {
  override readonly name = 'LinkFailure';
  constructor(
    readonly kind: 'denied' | 'unreachable' | 'refused',
    message: string,
  ) {
    super(message);
  }
}

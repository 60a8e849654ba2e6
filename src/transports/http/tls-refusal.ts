/**
 * A receiver that requires a client certificate and gets none (or one it does not accept) often
 * says so only by closing the connection: in TLS 1.3 the client's side of the handshake is done
 * before the server checks the certificate, so the request goes out and the connection closes
 * with nothing read (`UND_ERR_SOCKET: other side closed`); in TLS 1.2 the handshake fails with
 * an alert or a reset. Such a fault is named for what it may mean, with whether a certificate
 * was presented, so the delivery log points at the hook's `Tls` rather than at the network.
 */
import { X509Certificate } from 'node:crypto';

// Alerts a server sends about the client's certificate, or for a handshake it will not finish.
const CERTIFICATE_ALERT =
  /ALERT_(HANDSHAKE_FAILURE|CERTIFICATE_REQUIRED|BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN|CERTIFICATE_EXPIRED|CERTIFICATE_REVOKED|UNSUPPORTED_CERTIFICATE|ACCESS_DENIED)/;

/**
 * Whether an attempt's error is a connection closing during or right after the TLS handshake:
 * a certificate alert, a reset before the secure connection was made, or the other side closing
 * a connection that never had a byte of answer on it (a reused keep-alive connection has).
 */
export function closedAtHandshake(err: Error | null): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 3; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (CERTIFICATE_ALERT.test(code)) return true;
      if (code === 'ECONNRESET' && /before secure TLS connection/i.test(e.message)) return true;
      if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') {
        const socket = (e as { socket?: { bytesRead?: unknown } }).socket;
        if (socket !== undefined && socket.bytesRead === 0) return true;
      }
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The certificate's subject in one line, or undefined when it does not parse. */
function subjectOf(pem: string): string | undefined {
  try {
    return new X509Certificate(pem).subject.replaceAll('\n', ', ');
  } catch {
    return undefined;
  }
}

/** What such a fault may mean, given the client certificate the connection offered (if any). */
export function clientCertificateHint(presented: string | undefined): string {
  const when = 'the connection closed during or right after the TLS handshake';
  if (presented === undefined)
    return `${when}: the receiver may require a client certificate, and none was presented (set the hook's Tls)`;
  const subject = subjectOf(presented);
  return `${when}: the receiver may not accept the client certificate presented${subject ? ` (${subject})` : ''}`;
}

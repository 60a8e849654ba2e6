/**
 * Mutual TLS toward receivers: a hook's `Tls` (client certificate, key, private CA), checked,
 * shown without the key, and turned into connection options for the HTTP transport.
 */
export {
  type CertificateView,
  type ClientTls,
  checkTls,
  clientCertificateOf,
  EXPIRY_WARNING_MS,
  presentTls,
  TLS_JSON_SCHEMA,
  type TlsConnectOptions,
  type TlsView,
  tlsConnectOptions,
  tlsWarnings,
} from './client-tls.js';
export { loadOperatorTls } from './operator-tls.js';

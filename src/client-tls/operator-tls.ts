/**
 * The operator's client certificate (`--callback-client-cert`, `--callback-client-key`): read and
 * checked at start-up, presented on every https callback whose hook has no `Tls` of its own.
 */
import { readFileSync } from 'node:fs';
import { type ClientTls, checkTls } from './client-tls.js';

/** The files' certificate and key; throws a message naming the option and the file when either is bad. */
export function loadOperatorTls(certFile: string, keyFile: string): ClientTls {
  const read = (option: string, file: string): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch (e) {
      throw new Error(`${option} ${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  const tls = {
    ClientCertificate: read('callbackClientCert', certFile),
    ClientKey: read('callbackClientKey', keyFile),
  };
  const { errors } = checkTls(tls, undefined);
  const first = errors[0];
  if (first !== undefined) {
    // The field names which file is wrong; the message never quotes the key.
    const [option, file] =
      first.field === 'Tls.ClientKey' ? ['callbackClientKey', keyFile] : ['callbackClientCert', certFile];
    throw new Error(`${option} ${file}: ${first.message}`);
  }
  return tls;
}

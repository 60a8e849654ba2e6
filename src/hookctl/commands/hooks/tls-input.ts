import type { CliContext } from '../../context.js';
import { UsageError } from '../../exit-codes.js';
import { readInput } from '../../json-file.js';

/** `--client-cert`, `--client-key`, `--ca-certs`: files (or `-`, standard input) that fill `Tls`. */
export interface TlsFiles {
  clientCert?: string;
  clientKey?: string;
  caCerts?: string;
}

const FIELDS = [
  ['clientCert', '--client-cert', 'ClientCertificate'],
  ['clientKey', '--client-key', 'ClientKey'],
  ['caCerts', '--ca-certs', 'CaCertificates'],
] as const;

/** The commander options of the three flags, for create and replace alike. */
export const TLS_FLAGS: readonly [string, string][] = [
  [
    '--client-cert <file>',
    'the client certificate for mutual TLS (Tls.ClientCertificate, PEM); - reads standard input',
  ],
  [
    '--client-key <file>',
    "the client certificate's private key (Tls.ClientKey, PEM); - reads standard input",
  ],
  ['--ca-certs <file>', "the receiver's CA certificates (Tls.CaCertificates, PEM); - reads standard input"],
];

/** The flags given, from commander's parsed options. */
export function tlsFilesOf(o: TlsFiles): TlsFiles {
  return {
    ...(o.clientCert !== undefined && { clientCert: o.clientCert }),
    ...(o.clientKey !== undefined && { clientKey: o.clientKey }),
    ...(o.caCerts !== undefined && { caCerts: o.caCerts }),
  };
}

/**
 * Puts the files' PEM texts into the hook document's `Tls`, over what the file has there, so the
 * key lives in a file of its own or comes from a pipe, never from the command line. What `hookctl
 * get` shows of `Tls` (the certificate described, the key as "(set)") is not sent back.
 */
export async function fillTls(
  doc: unknown,
  files: TlsFiles,
  hookFile: string,
  ctx: CliContext,
  usage: string,
): Promise<void> {
  const given = FIELDS.filter(([k]) => files[k] !== undefined);
  if (given.length === 0) return;
  const stdin: string[] = given.filter(([k]) => files[k] === '-').map(([, flag]) => flag);
  if (hookFile === '-') stdin.unshift('-f');
  if (stdin.length > 1) throw new UsageError(`${stdin.join(' - and ')} - all read standard input`, { usage });
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new UsageError('the hook file must hold a JSON object to add Tls to', { usage });
  const d = doc as { Tls?: unknown };
  const tls: Record<string, string> = {};
  if (typeof d.Tls === 'object' && d.Tls !== null) {
    for (const [, , field] of FIELDS) {
      const v = (d.Tls as Record<string, unknown>)[field];
      if (typeof v === 'string' && v.includes('-----BEGIN')) tls[field] = v;
    }
  }
  for (const [k, flag, field] of given) {
    const file = files[k]!;
    if (file === '-' && ctx.io.stdin.isTTY)
      throw new UsageError(`${flag} - reads standard input, but standard input is a terminal`, {
        usage,
        hint: `pipe the PEM text in or name the file: ${flag} FILE`,
      });
    const text = (await readInput(file, ctx.io, usage)).text;
    if (!text.includes('-----BEGIN'))
      throw new UsageError(
        `${flag} ${file === '-' ? 'standard input' : file}: not a PEM text (-----BEGIN …)`,
        {
          usage,
        },
      );
    tls[field] = text;
  }
  d.Tls = tls;
}

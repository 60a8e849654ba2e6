/**
 * A hook's client certificate (mutual TLS) and the CA certificates of a receiver behind a private
 * CA: the `Tls` field. Key material is write-only: create and replace take it; the API, the
 * console and hookctl show what the certificates are, never the key (`presentTls`); the stores
 * keep the field sealed (src/store/secret-codec.ts).
 */
import { createHash, createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import type { FieldError } from '../errors/index.js';

/** The `Tls` field as given (PEM texts). */
export interface ClientTls {
  ClientCertificate?: string;
  ClientKey?: string;
  CaCertificates?: string;
}

/** What the API shows of a certificate. */
export interface CertificateView {
  Subject: string;
  Issuer: string;
  Sha256Fingerprint: string;
  NotAfter: string;
}

/** What the API shows of `Tls`: the certificates described, the key only as set. */
export interface TlsView {
  Certificate?: CertificateView;
  ClientKey?: '(set)';
  CaCertificates?: string[];
}

/** The options a TLS connection takes (node:tls), from a hook's `Tls`. */
export interface TlsConnectOptions {
  cert?: string;
  key?: string;
  ca?: string;
  /** Names this set of options: hooks with the same share one connection pool. */
  identity: string;
}

const FIELDS = ['ClientCertificate', 'ClientKey', 'CaCertificates'] as const;
const MAX_PEM = 64 * 1024;

/** The JSON Schema of the field (the hook schema uses it). */
export const TLS_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ClientCertificate: { type: 'string', minLength: 1, maxLength: MAX_PEM },
    ClientKey: { type: 'string', minLength: 1, maxLength: MAX_PEM },
    CaCertificates: { type: 'string', minLength: 1, maxLength: MAX_PEM },
  },
  description:
    'Mutual TLS for an https Callback: the client certificate and its key (PEM, write-only: shown as Certificate {Subject, Issuer, Sha256Fingerprint, NotAfter} and ClientKey "(set)"), and CA certificates of a receiver behind a private CA.',
} as const;

/** The certificates of a PEM text (a chain or a bundle), in order; throws on a bad one. */
function certificatesOf(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error('no PEM certificate (-----BEGIN CERTIFICATE-----)');
  return blocks.map((b) => new X509Certificate(b));
}

function oneLine(dn: string): string {
  return dn.split('\n').filter(Boolean).join(', ');
}

function viewOf(c: X509Certificate): CertificateView {
  return {
    Subject: oneLine(c.subject),
    Issuer: oneLine(c.issuer),
    Sha256Fingerprint: c.fingerprint256,
    NotAfter: new Date(c.validTo).toISOString(),
  };
}

/** Checks a `Tls` value: every problem named by its field; the value when it is good. */
export function checkTls(
  value: unknown,
  callback: string | undefined,
): { tls?: ClientTls; errors: FieldError[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      errors: [
        {
          field: 'Tls',
          message: 'must be {"ClientCertificate", "ClientKey", "CaCertificates"} (PEM texts, each optional)',
        },
      ],
    };
  }
  const v = value as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const k of Object.keys(v)) {
    if (!(FIELDS as readonly string[]).includes(k)) {
      errors.push({
        field: `Tls.${k.slice(0, 40)}`,
        message: `is not a field of Tls (${FIELDS.join(', ')})`,
      });
    } else if (
      typeof v[k] !== 'string' ||
      (v[k] as string).length === 0 ||
      (v[k] as string).length > MAX_PEM
    ) {
      errors.push({ field: `Tls.${k}`, message: `must be a PEM text of at most ${MAX_PEM} characters` });
    }
  }
  if (errors.length > 0) return { errors };
  const tls = v as ClientTls;
  let cert: X509Certificate | undefined;
  let key: KeyObject | undefined;
  if (tls.ClientCertificate !== undefined) {
    try {
      cert = certificatesOf(tls.ClientCertificate)[0];
    } catch (e) {
      errors.push({
        field: 'Tls.ClientCertificate',
        message: `is not a PEM certificate: ${(e as Error).message}`,
      });
    }
  }
  if (tls.ClientKey !== undefined) {
    try {
      key = createPrivateKey(tls.ClientKey);
    } catch {
      // The key's text never goes into a message or a log.
      errors.push({
        field: 'Tls.ClientKey',
        message: 'is not an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)',
      });
    }
  }
  if (tls.CaCertificates !== undefined) {
    try {
      certificatesOf(tls.CaCertificates);
    } catch (e) {
      errors.push({
        field: 'Tls.CaCertificates',
        message: `are not PEM certificates: ${(e as Error).message}`,
      });
    }
  }
  if ((tls.ClientCertificate === undefined) !== (tls.ClientKey === undefined)) {
    errors.push({
      field: tls.ClientKey === undefined ? 'Tls.ClientKey' : 'Tls.ClientCertificate',
      message: 'is required with the other: a client certificate goes with its private key',
    });
  } else if (cert && key && !cert.checkPrivateKey(key)) {
    errors.push({
      field: 'Tls.ClientKey',
      message: "is not the private key of ClientCertificate's public key",
    });
  }
  if (callback !== undefined && !callback.startsWith('https:')) {
    errors.push({ field: 'Tls', message: 'applies to https Callbacks only' });
  }
  return errors.length > 0 ? { errors } : { tls: { ...tls }, errors };
}

/** The client certificate of a `Tls` (the first of its chain): who it is and when it ends. */
export function clientCertificateOf(tls: ClientTls): (CertificateView & { notAfterMs: number }) | undefined {
  if (tls.ClientCertificate === undefined) return undefined;
  try {
    const c = certificatesOf(tls.ClientCertificate)[0]!;
    return { ...viewOf(c), notAfterMs: Date.parse(c.validTo) };
  } catch {
    return undefined;
  }
}

/** A client certificate this close to its end (or past it) is warned about. */
export const EXPIRY_WARNING_MS = 14 * 24 * 60 * 60 * 1000;

/** A warning when the client certificate has expired or expires within 14 days. */
export function tlsWarnings(tls: ClientTls, now: number = Date.now()): FieldError[] {
  if (tls.ClientCertificate === undefined) return [];
  let end: number;
  try {
    end = Date.parse(certificatesOf(tls.ClientCertificate)[0]!.validTo);
  } catch {
    return [];
  }
  const at = new Date(end).toISOString();
  if (end <= now) {
    return [
      {
        field: 'Tls.ClientCertificate',
        message: `expired at ${at}: receivers that check it refuse the connection; replace Tls with a renewed certificate`,
      },
    ];
  }
  if (end - now > EXPIRY_WARNING_MS) return [];
  const days = Math.ceil((end - now) / 86_400_000);
  return [
    {
      field: 'Tls.ClientCertificate',
      message: `expires at ${at} (in ${days} day${days === 1 ? '' : 's'}): replace Tls with a renewed certificate before then`,
    },
  ];
}

/** What the API, the console and hookctl show of a hook's `Tls`. */
export function presentTls(tls: ClientTls): TlsView {
  const view: TlsView = {};
  try {
    if (tls.ClientCertificate !== undefined)
      view.Certificate = viewOf(certificatesOf(tls.ClientCertificate)[0]!);
    if (tls.CaCertificates !== undefined) {
      view.CaCertificates = certificatesOf(tls.CaCertificates).map((c) => oneLine(c.subject));
    }
  } catch {
    // Checked when stored; a certificate that no longer parses is shown as absent.
  }
  if (tls.ClientKey !== undefined) view.ClientKey = '(set)';
  return view;
}

// Made once per stored hook version: the engine keeps the hook's object until it changes.
const options = new WeakMap<ClientTls, TlsConnectOptions>();

/** The connection options of a hook's `Tls`. */
export function tlsConnectOptions(tls: ClientTls): TlsConnectOptions {
  let o = options.get(tls);
  if (o === undefined) {
    o = {
      ...(tls.ClientCertificate !== undefined && { cert: tls.ClientCertificate }),
      ...(tls.ClientKey !== undefined && { key: tls.ClientKey }),
      ...(tls.CaCertificates !== undefined && { ca: tls.CaCertificates }),
      identity: createHash('sha256')
        .update(`${tls.ClientCertificate ?? ''}\0${tls.ClientKey ?? ''}\0${tls.CaCertificates ?? ''}`)
        .digest('hex'),
    };
    options.set(tls, o);
  }
  return o;
}

/**
 * A hook's `Auth` field: OAuth2 client credentials (RFC 6749 §4.4) for receivers behind an API
 * gateway. `ClientSecret` is write-only: create and replace take it, the API, the console and
 * hookctl show "(set)"; the stores keep the field sealed (src/store/secret-codec.ts).
 */
import type { FieldError } from '../errors/index.js';

export interface OAuth2Credentials {
  TokenUrl: string;
  ClientId: string;
  ClientSecret: string;
  Scope?: string;
}

/** The `Auth` field as stored. */
export interface HookAuth {
  OAuth2: OAuth2Credentials;
}

/** What the API shows of `Auth`: the secret only as set. */
export interface HookAuthView {
  OAuth2: Omit<OAuth2Credentials, 'ClientSecret'> & { ClientSecret: '(set)' };
}

const FIELDS = ['TokenUrl', 'ClientId', 'ClientSecret', 'Scope'] as const;
const MAX = 2048;

/** The JSON Schema of the field (the hook schema uses it). */
export const AUTH_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['OAuth2'],
  properties: {
    OAuth2: {
      type: 'object',
      additionalProperties: false,
      required: ['TokenUrl', 'ClientId', 'ClientSecret'],
      properties: {
        TokenUrl: { type: 'string', minLength: 1, maxLength: MAX },
        ClientId: { type: 'string', minLength: 1, maxLength: MAX },
        ClientSecret: { type: 'string', minLength: 1, maxLength: MAX },
        Scope: { type: 'string', minLength: 1, maxLength: MAX },
      },
    },
  },
  description:
    'OAuth2 client credentials: hookd gets a bearer token from TokenUrl (client_secret_basic) and sends it as Authorization: Bearer. ClientSecret is write-only (shown as "(set)").',
} as const;

/** Checks an `Auth` value: every problem named by its field; the value when it is good. */
export function checkAuth(value: unknown): { auth?: HookAuth; errors: FieldError[] } {
  const shape = '{"OAuth2": {"TokenUrl", "ClientId", "ClientSecret", "Scope"}}';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { errors: [{ field: 'Auth', message: `must be ${shape}` }] };
  }
  const o = (value as Record<string, unknown>).OAuth2;
  const extra = Object.keys(value).filter((k) => k !== 'OAuth2');
  if (extra.length > 0 || typeof o !== 'object' || o === null || Array.isArray(o)) {
    const field = extra.length > 0 ? `Auth.${extra[0]!.slice(0, 40)}` : 'Auth.OAuth2';
    return { errors: [{ field, message: `must be ${shape} (OAuth2 is the one kind of Auth)` }] };
  }
  const v = o as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const k of Object.keys(v)) {
    if (!(FIELDS as readonly string[]).includes(k))
      errors.push({
        field: `Auth.OAuth2.${k.slice(0, 40)}`,
        message: `is not a field of OAuth2 (${FIELDS.join(', ')})`,
      });
  }
  for (const k of FIELDS) {
    const s = v[k];
    if (s === undefined && k === 'Scope') continue;
    if (typeof s !== 'string' || s.length === 0 || s.length > MAX)
      errors.push({ field: `Auth.OAuth2.${k}`, message: `must be a text of 1 to ${MAX} characters` });
  }
  if (v.ClientSecret === '(set)')
    errors.push({
      field: 'Auth.OAuth2.ClientSecret',
      message: 'must be the secret itself: "(set)" is how hookd shows a secret it keeps',
    });
  if (typeof v.TokenUrl === 'string' && errors.length === 0) {
    let url: URL | undefined;
    try {
      url = new URL(v.TokenUrl);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:'))
      errors.push({
        field: 'Auth.OAuth2.TokenUrl',
        message: 'must be an http or https URL, e.g. https://auth.example.com/oauth2/token',
      });
    else if (url.username !== '' || url.password !== '')
      errors.push({
        field: 'Auth.OAuth2.TokenUrl',
        message: 'must not carry credentials: they go in ClientId and ClientSecret',
      });
  }
  if (errors.length > 0) return { errors };
  const auth: HookAuth = {
    OAuth2: {
      TokenUrl: v.TokenUrl as string,
      ClientId: v.ClientId as string,
      ClientSecret: v.ClientSecret as string,
      ...(typeof v.Scope === 'string' && { Scope: v.Scope }),
    },
  };
  return { auth, errors };
}

/** `Auth` as the API shows it: the secret never. */
export function presentAuth(auth: HookAuth): HookAuthView {
  const { ClientSecret: _secret, ...rest } = auth.OAuth2;
  return { OAuth2: { ...rest, ClientSecret: '(set)' } };
}

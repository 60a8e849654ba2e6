/**
 * The admin calls `hookd user …` and `hookd token …` make on a running daemon, with the admin
 * token beside its store (`<data-dir>/admin.token`). A refusal is the daemon's own problem text.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HookdError } from '../errors/index.js';

/** A user as the API answers it. */
export interface ApiUser {
  Name: string;
  Scopes: string[];
  Created: string;
}
/** A token as the API answers it (`Token` only in the answer to its creation). */
export interface ApiToken {
  Id: string;
  User: string;
  Label: string;
  Created: string;
  Token?: string;
}

export interface AdminApi {
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
}

/** The API of the daemon at `url`, called with the admin token in `dataDir`. */
export function adminApi(url: string, dataDir: string): AdminApi {
  const token = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
  return {
    async call<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await fetch(`${url}/_hookd${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      if (!res.ok) {
        let detail = text;
        try {
          const p = JSON.parse(text) as { detail?: string; title?: string };
          detail = p.detail ?? p.title ?? text;
        } catch {
          // Not a problem document: its text as it came.
        }
        throw new HookdError(
          res.status === 404 ? 'NOT_FOUND' : 'BAD_REQUEST',
          `the running daemon at ${url}: ${detail}`,
        );
      }
      return (text === '' ? undefined : JSON.parse(text)) as T;
    },
  };
}

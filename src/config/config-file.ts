import { readFileSync } from 'node:fs';
import { parseJsonText, suggest } from '../util/index.js';
import { ConfigError } from './config-error.js';
import { ALL_OPTIONS } from './options.js';

const FILE_KEYS = new Set(ALL_OPTIONS.map((o) => o.fileKey));

/** Reads and flattens a JSON config file; unknown keys come back as problems, with a suggestion. */
export function readConfigFile(file: string): { values: Record<string, unknown>; unknown: string[] } {
  const text = readTextFile(file, 'cannot read config file ');
  let doc: unknown;
  try {
    doc = parseJsonText(file, text);
  } catch (e) {
    // `FILE:LINE:COLUMN: what`, as hookctl validate reports a hook file.
    throw new ConfigError(`${(e as Error).message} (the config file is not valid JSON)`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(`config file ${file} must hold a JSON object`);
  }
  const flat: Record<string, unknown> = {};
  const unknown: string[] = [];
  const walk = (o: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(o)) {
      const key = prefix + k;
      if (k === '$schema' || k === '$comment') continue;
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && !FILE_KEYS.has(key)) {
        walk(v as Record<string, unknown>, `${key}.`);
      } else if (!FILE_KEYS.has(key)) {
        const hint = suggest(key, [...FILE_KEYS]);
        unknown.push(`${file}: unknown key "${key}"${hint ? `; did you mean "${hint}"?` : ''}`);
      } else flat[key] = v;
    }
  };
  walk(doc as Record<string, unknown>, '');
  return { values: flat, unknown };
}

/**
 * The content of a credential file (systemd `LoadCredential=`, a Docker or Kubernetes secret),
 * without the final newline. The error names the variable and the file, never its content.
 */
export function readSecretFile(variable: string, file: string): string {
  const value = readTextFile(file, `${variable}: cannot read `).trim();
  if (value === '') throw new ConfigError(`${variable}: ${file} is empty`);
  return value;
}

/**
 * A file named by the configuration, as text. The error is `<lead><file>: <errno code>`: it says
 * which setting and why, and never quotes the file (it may hold a secret).
 */
export function readTextFile(file: string, lead: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`${lead}${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** hookd's package.json, found by walking up from this module (works from src/ and from dist/src/). */
export function packageInfo(): { name: string; version: string; root: string } {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'hookd') return { name: pkg.name, version: pkg.version ?? '0.0.0', root: dir };
    }
    const up = dirname(dir);
    if (up === dir) return { name: 'hookd', version: '0.0.0', root: dir };
    dir = up;
  }
}

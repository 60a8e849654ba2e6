import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { packageInfo } from '../util/index.js';

export interface Asset {
  type: string;
  body: Buffer;
}

const require = createRequire(import.meta.url);

/**
 * The console's static files, read on the first request for one (a console nobody opens never
 * reads them): htmx and uPlot from their installed npm
 * packages, and the console's own CSS and script from the package (src/console/assets/, in the
 * release tarball through package.json "files"). Nothing is fetched from elsewhere.
 */
function loadAssets(extra: readonly [name: string, file: string, type: string][] = []): Map<string, Asset> {
  const own = join(packageInfo().root, 'src', 'console', 'assets');
  const files: [string, string, string][] = [
    ['htmx.min.js', require.resolve('htmx.org/dist/htmx.min.js'), 'text/javascript; charset=utf-8'],
    ['uPlot.iife.min.js', require.resolve('uplot/dist/uPlot.iife.min.js'), 'text/javascript; charset=utf-8'],
    ['uPlot.min.css', require.resolve('uplot/dist/uPlot.min.css'), 'text/css; charset=utf-8'],
    ['console.js', join(own, 'console.js'), 'text/javascript; charset=utf-8'],
    ['console.css', join(own, 'console.css'), 'text/css; charset=utf-8'],
    // Linked from every page (<link rel="icon">), so a browser never asks the upstream for /favicon.ico.
    ['favicon.svg', join(own, 'favicon.svg'), 'image/svg+xml'],
    ...extra,
  ];
  return new Map(files.map(([name, file, type]) => [name, { type, body: readFileSync(file) }]));
}

/** The assets by name, read by `loadAssets` on the first call and kept. */
export function assetsOnFirstUse(
  extra: readonly [name: string, file: string, type: string][] = [],
): (name: string) => Asset | undefined {
  let assets: Map<string, Asset> | undefined;
  return (name) => {
    assets ??= loadAssets(extra);
    return assets.get(name);
  };
}

import { readFileSync } from 'node:fs';
import type { FieldError } from '../errors/index.js';

/** The portal's look, as the operator's brand file or a link sets it. */
export interface Brand {
  /** The name in the portal's header and the window title, e.g. "Acme webhooks". */
  Title?: string;
  /** An http(s) URL (or a path on the console's origin) of the logo beside the title. */
  LogoUrl?: string;
  /** Buttons, links and the current tab: `#rrggbb` or `#rgb`. */
  Accent?: string;
  /** `light`, `dark`, or `auto` (the viewer's system setting). */
  Theme?: 'light' | 'dark' | 'auto';
}

export const BRAND_FIELDS = ['Title', 'LogoUrl', 'Accent', 'Theme'] as const;
const HEX = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/**
 * Checks a brand document; every problem names its field (`prefix` + field) and the rule. Unknown
 * fields are refused, so that a misspelt `Acent` does not pass silently.
 */
export function parseBrand(input: unknown, prefix = ''): { brand: Brand; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const brand: Brand = {};
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    errors.push({
      field: prefix || '(brand)',
      message: 'must be an object with Title, LogoUrl, Accent, Theme',
    });
    return { brand, errors };
  }
  const o = input as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!(BRAND_FIELDS as readonly string[]).includes(k))
      errors.push({
        field: `${prefix}${k}`,
        message: `is not a brand field; known: ${BRAND_FIELDS.join(', ')}`,
      });
  if (o.Title !== undefined) {
    if (typeof o.Title !== 'string' || o.Title.trim() === '' || o.Title.length > 80)
      errors.push({
        field: `${prefix}Title`,
        message: 'must be a text of 1 to 80 characters, e.g. "Acme webhooks"',
      });
    else brand.Title = o.Title.trim();
  }
  if (o.LogoUrl !== undefined) {
    const ok =
      typeof o.LogoUrl === 'string' && o.LogoUrl.length <= 2048 && logoSource(o.LogoUrl) !== undefined;
    if (!ok)
      errors.push({
        field: `${prefix}LogoUrl`,
        message: 'must be an https:// or http:// URL, or a path starting with /, of at most 2048 characters',
      });
    else brand.LogoUrl = o.LogoUrl as string;
  }
  if (o.Accent !== undefined) {
    if (typeof o.Accent !== 'string' || !HEX.test(o.Accent))
      errors.push({
        field: `${prefix}Accent`,
        message: 'must be a colour as #rrggbb or #rgb, e.g. "#7c3aed"',
      });
    else brand.Accent = o.Accent.toLowerCase();
  }
  if (o.Theme !== undefined) {
    if (o.Theme !== 'light' && o.Theme !== 'dark' && o.Theme !== 'auto')
      errors.push({ field: `${prefix}Theme`, message: 'must be "light", "dark" or "auto"' });
    else brand.Theme = o.Theme;
  }
  return { brand, errors };
}

/** The brand file of `--portal-brand-file`, checked; throws a message naming the file and field. */
export function loadBrandFile(file: string | undefined): Brand {
  if (file === undefined) return {};
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`--portal-brand-file ${file}: ${(err as Error).message}`);
  }
  const { brand, errors } = parseBrand(doc);
  if (errors.length > 0)
    throw new Error(
      `--portal-brand-file ${file}: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
    );
  return brand;
}

/** The CSP source the logo is loaded from: its origin, or `'self'` for a path; undefined when invalid. */
export function logoSource(url: string): string | undefined {
  if (url.startsWith('/') && !url.startsWith('//')) return "'self'";
  if (!URL.canParse(url)) return undefined;
  const u = new URL(url);
  return u.protocol === 'https:' || u.protocol === 'http:' ? u.origin : undefined;
}

const LIGHT = { bg: '#ffffff', fg: '#1f2328' };
const DARK = { bg: '#0d1117', fg: '#e6edf3' };

/**
 * The stylesheet of one session's brand: the accent where the console has its own, with the text
 * on it black or white (whichever reads better), and links in the accent only where it keeps a
 * 4.5:1 contrast with the page (else the theme's own link colour): a brand colour never makes a
 * page fail its contrast check.
 */
export function brandCss(brand: Brand): string {
  const theme = brand.Theme ?? 'light';
  const rules: string[] = [];
  if (brand.Accent) {
    const on = contrast(brand.Accent, '#ffffff') >= contrast(brand.Accent, '#000000') ? '#ffffff' : '#000000';
    rules.push(`:root { --portal-accent: ${brand.Accent}; --portal-on-accent: ${on}; }`);
    const themes = theme === 'auto' ? (['light', 'dark'] as const) : [theme];
    for (const t of themes) {
      const bg = t === 'dark' ? DARK.bg : LIGHT.bg;
      if (contrast(brand.Accent, bg) < 4.5) continue;
      const rule = `html[data-theme="${t}"] { --accent: ${brand.Accent}; }`;
      rules.push(
        theme === 'auto'
          ? `@media (prefers-color-scheme: ${t}) { html[data-theme="auto"] { --accent: ${brand.Accent}; } }`
          : rule,
      );
    }
  }
  return `${rules.join('\n')}\n`;
}

function luminance(hex: string): number {
  const h = hex.length === 4 ? hex.replace(/[0-9a-f]/gi, (c) => c + c).slice(1) : hex.slice(1);
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = Number.parseInt(h.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** The WCAG contrast ratio of two colours. */
export function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x! + 0.05) / (y! + 0.05);
}

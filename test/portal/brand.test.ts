import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { brandCss, contrast, parseBrand } from '../../src/portal/brand.js';
import { assertBuilt, HOOKD_BIN, tempDir } from '../helpers/hookd.js';

describe('portal brand', () => {
  it('checks every field and names it, unknown ones too', () => {
    const { errors } = parseBrand(
      { Title: '', LogoUrl: 'javascript:alert(1)', Accent: 'red', Theme: 'x', Logo: 1 },
      'Brand.',
    );
    assert.deepEqual(errors.map((e) => e.field).sort(), [
      'Brand.Accent',
      'Brand.Logo',
      'Brand.LogoUrl',
      'Brand.Theme',
      'Brand.Title',
    ]);
    const ok = parseBrand({ Title: ' Acme ', LogoUrl: '/logo.svg', Accent: '#ABC', Theme: 'auto' });
    assert.deepEqual(ok, {
      brand: { Title: 'Acme', LogoUrl: '/logo.svg', Accent: '#abc', Theme: 'auto' },
      errors: [],
    });
  });

  it('keeps contrast: text on the accent is black or white, links take the accent only at 4.5:1', () => {
    assert.ok(Math.abs(contrast('#000000', '#ffffff') - 21) < 0.01);
    const dark = brandCss({ Accent: '#4338ca', Theme: 'light' });
    assert.match(dark, /--portal-on-accent: #ffffff/);
    assert.match(dark, /html\[data-theme="light"\] \{ --accent: #4338ca; \}/);
    const pale = brandCss({ Accent: '#a5b4fc', Theme: 'light' });
    assert.match(pale, /--portal-on-accent: #000000/);
    assert.doesNotMatch(pale, /--accent: #a5b4fc/, 'too pale for links on white');
    assert.match(
      brandCss({ Accent: '#a5b4fc', Theme: 'dark' }),
      /html\[data-theme="dark"\] \{ --accent: #a5b4fc; \}/,
    );
    assert.equal(brandCss({}), '\n');
  });

  it('hookd refuses to start with a bad brand file, naming the file and fields (exit 2)', () => {
    assertBuilt();
    const dir = tempDir();
    const file = join(dir, 'brand.json');
    writeFileSync(file, '{"Accent": "blue", "Titel": "Acme"}');
    const r = spawnSync(
      process.execPath,
      [
        HOOKD_BIN,
        '--data-dir',
        dir,
        '--listen',
        '127.0.0.1:0',
        '--ops-listen',
        'off',
        '--portal-brand-file',
        file,
      ],
      { encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH, HOME: dir } },
    );
    assert.equal(r.status, 2, r.stderr);
    assert.match(
      r.stderr,
      /configuration error: --portal-brand-file .*brand\.json: Titel is not a brand field.*Accent must be a colour/,
    );
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  });
});

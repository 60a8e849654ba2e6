import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { skipReason } from '../helpers/require.js';

/** Debian's chromium (the browser tests drive it with playwright-core; no browser download). */
export const CHROMIUM = process.env.HOOKD_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let checked: string | undefined | null = null;

/**
 * Undefined when Chromium is there; otherwise the reason to skip (a failure with
 * HOOKD_REQUIRE_ALL=1). When it is missing and this
 * process is root, it is installed with apt-get first (as .ci/run does before the tests).
 */
export function chromiumSkipReason(): string | undefined {
  if (checked !== null) return checked;
  if (!existsSync(CHROMIUM) && process.getuid?.() === 0 && CHROMIUM === '/usr/bin/chromium') {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = () =>
      spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {
        env,
        stdio: 'ignore',
      });
    if (install().status !== 0) {
      spawnSync('apt-get', ['update'], { env, stdio: 'ignore' });
      install();
    }
  }
  checked = skipReason(
    !existsSync(CHROMIUM) && `no Chromium at ${CHROMIUM} (apt-get install chromium, or set HOOKD_CHROMIUM)`,
  );
  return checked;
}

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile of its own (its own cookie jar: one signed-in user). */
export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'hookd-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

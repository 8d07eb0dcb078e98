// What the browser scripts share: Debian's Chromium (never a browser download of a test tool's own), started headless
// by playwright-core with a throwaway profile and without the background traffic this machine's closed network
// refuses; the waits; the settings the Java tests pass in the environment.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

/** How long a script waits for anything the browser or Eddy should do. */
export const WAIT_MS = 30_000;

/** A setting the test passes in the environment; a missing one is an error. */
export function setting(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set`);
  }
  return value;
}

/** Runs {@code use(context)} in a fresh Chromium (playwright's launch {@code options} added), closed afterwards. */
export async function withChromium(options, use) {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'eddy-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, ...options });
  try {
    return await use(context);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

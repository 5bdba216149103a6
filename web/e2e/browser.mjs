// Launches headless Chromium (the system's, through playwright-core) with or without WebGPU.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];

/**
 * A fresh browser context (its own profile dir). `webgpu: false` leaves out
 * --enable-unsafe-webgpu, so the page finds no adapter and runs on the CPU.
 */
export async function launch({ webgpu = true, width = 1280, height = 800, lang = 'ko-KR' } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-chromium-'));
  const args = [...FLAGS, ...(webgpu ? ['--enable-unsafe-webgpu'] : [])];
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args,
    viewport: { width, height },
    locale: lang,
  });
  const close = async () => {
    await context.close().catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { context, close };
}

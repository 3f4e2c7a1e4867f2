// What the viewer page's browser tests share: Debian's chromium through playwright-core with
// Chromium's fake media devices (no permission prompts), waiting for a condition, and the page's
// window.imagoViewer statistics.
import { chromium } from 'playwright-core';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls fn() every 100 ms until it returns something truthy (which is returned), or throws after ms.
export async function until(what, fn, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await sleep(100);
  }
}

// Headless chromium (CHROMIUM, default /usr/bin/chromium) with fake camera and microphone;
// extraArgs add to its flags (e.g. --use-file-for-fake-audio-capture=FILE).
export function launchBrowser(extraArgs = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--autoplay-policy=no-user-gesture-required', '--no-sandbox', '--mute-audio',
           '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', ...extraArgs],
  });
}

// The viewer's statistics (window.imagoViewer) with its last 20 events.
export function viewerStats(page) {
  return page.evaluate(() => ({ ...window.imagoViewer, events: window.imagoViewer.events.slice(-20) }));
}

// The viewer page's camera in a camera_chat session, in Debian's chromium driven by playwright-core
// with Chromium's fake video capture (a generated test pattern). The page is opened with
// #billing=camera_chat, the Camera button is pressed, a question is typed; the C++ side then checks
// that the operator's (fake) model got the question with a JPEG still from the camera.
// Env: IMAGO_URL, AGENT_CODE, EMBED_TOKEN, CHROMIUM (default /usr/bin/chromium), SCREENSHOT_DIR (optional).
import path from 'node:path';
import assert from 'node:assert/strict';
import { launchBrowser, until, viewerStats } from './viewer_harness.mjs';

const url = process.env.IMAGO_URL;
const code = process.env.AGENT_CODE;
const shots = process.env.SCREENSHOT_DIR;
const browser = await launchBrowser();
let failed = false;
let last = null;
try {
  const page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.log('page:', m.text()); });
  await page.goto(`${url}/embed/${code}#token=${process.env.EMBED_TOKEN}&room=camera&billing=camera_chat`);
  const stats = () => viewerStats(page);
  await until('live', async () => (await stats()).state === 'live');
  assert.ok(await page.isVisible('#camera'), 'the Camera button is shown in a camera_chat session');

  await page.click('#camera');
  await until('a camera still sent', async () => (await stats()).cameraFrames >= 1);
  assert.ok(await page.isVisible('#selfie'), 'the viewer sees their own camera');
  await page.fill('#text', 'What do you see?');
  await page.press('#text', 'Enter');
  await until('the agent answer in the captions', async () => {
    last = await stats();
    return (last.captions || []).some((l) => l.role === 'agent' && !l.open && !l.thinking && l.text.length > 3);
  });
  if (shots) await page.screenshot({ path: path.join(shots, 'viewer-camera.png') });
  await page.click('#camera');
  last = await stats();
  assert.ok(!await page.isVisible('#selfie'), 'the preview goes when the camera is off');
  assert.ok(!String(last.lastError || '').startsWith('camera'), `camera: ${last.lastError}`);
  assert.ok(!last.events.includes('error'), `error events: ${JSON.stringify(last.events)}`);
  console.log('camera ok', last.cameraFrames, JSON.stringify(last.captions));
} catch (e) {
  failed = true;
  console.error('FAIL:', e.message, last ? JSON.stringify({ captions: last.captions, cameraFrames: last.cameraFrames,
    lastError: last.lastError, events: last.events }) : '');
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);

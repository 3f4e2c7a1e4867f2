// The viewer page's microphone in Debian's chromium driven by playwright-core, with Chromium's
// fake audio capture playing MIC_WAV: a question spoken by the service's own TTS (made by the C++
// side at test time, with silence around it; Chromium loops the file). The Mic button is pressed;
// the server must hear the question (the viewer's caption shows its words) and the agent must
// answer it (agent caption from the built-in responder, and speaking audio played).
// Env: IMAGO_URL, AGENT_CODE, EMBED_TOKEN, MIC_WAV, EXPECT_HEARD (a word the caption must contain),
// EXPECT_ANSWER (a phrase the agent's answer must contain), CHROMIUM (default /usr/bin/chromium),
// SCREENSHOT_DIR (optional).
import { chromium } from 'playwright-core';
import path from 'node:path';
import assert from 'node:assert/strict';

const url = process.env.IMAGO_URL;
const code = process.env.AGENT_CODE;
const shots = process.env.SCREENSHOT_DIR;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await sleep(100);
  }
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--autoplay-policy=no-user-gesture-required', '--no-sandbox', '--mute-audio',
         '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream',
         `--use-file-for-fake-audio-capture=${process.env.MIC_WAV}`],
});
let failed = false;
let last = null;
try {
  const page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.log('page:', m.text()); });
  await page.goto(`${url}/embed/${code}#token=${process.env.EMBED_TOKEN}&room=mic`);
  const stats = () => page.evaluate(() => ({ ...window.imagoViewer, events: window.imagoViewer.events.slice(-20) }));
  await until('live', async () => (await stats()).state === 'live');

  await page.click('#mic');
  await until('microphone chunks', async () => (await stats()).micChunks > 10);
  const heard = process.env.EXPECT_HEARD.toLowerCase();
  const answer = process.env.EXPECT_ANSWER;
  // Recognition runs on the server's CPU, which the suite shares: allow for a slow machine.
  await until('the spoken question in the viewer caption and its answer', async () => {
    last = await stats();
    const c = last.captions || [];
    const q = c.findIndex((l) => l.role === 'user' && l.text.toLowerCase().includes(heard));
    return q >= 0 && c.slice(q + 1).some((l) => l.role === 'agent' && !l.open && l.text.includes(answer));
  }, 90000);
  // Nothing else spoke in this room: speaking audio is the answer, and the page played it.
  await until('the answer spoken', async () => {
    const s = await stats();
    return s.speakingChunks > 10 && s.audioPlayed > 16000;
  }, 30000);
  const shown = await page.evaluate(() => document.getElementById('captions').textContent);
  assert.ok(shown.includes(answer), `captions on the page: ${shown}`);
  if (shots) await page.screenshot({ path: path.join(shots, 'viewer-microphone.png') });
  await page.click('#mic');
  last = await stats();
  assert.ok(!String(last.lastError || '').startsWith('microphone'), `microphone: ${last.lastError}`);
  console.log('microphone ok', JSON.stringify(last.captions));
} catch (e) {
  failed = true;
  console.error('FAIL:', e.message, last ? JSON.stringify({ captions: last.captions, micChunks: last.micChunks,
    lastError: last.lastError, events: last.events }) : '');
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);

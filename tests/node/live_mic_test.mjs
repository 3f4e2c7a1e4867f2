// The viewer page's microphone in Debian's chromium driven by playwright-core, with Chromium's
// fake audio capture playing MIC_WAV: a question spoken by the service's own TTS (made by the C++
// side at test time, with silence around it; Chromium loops the file). The Mic button is pressed;
// the server must hear the question (the viewer's caption shows its key word) and the agent must
// answer it (a final agent caption, and speaking audio played). Whether the answer is the right
// one depends on how well the rest of the words were recognised, which a busy machine changes
// (audio the recogniser cannot keep up with is dropped): it is logged, and measured
// deterministically by Recognizer.TwentySpokenQuestionsFindTheirAnswers.
// Env: IMAGO_URL, AGENT_CODE, EMBED_TOKEN, MIC_WAV, EXPECT_HEARD (a word the caption must contain),
// CHROMIUM (default /usr/bin/chromium), SCREENSHOT_DIR (optional).
import path from 'node:path';
import assert from 'node:assert/strict';
import { launchBrowser, until, viewerStats } from './viewer_harness.mjs';

const url = process.env.IMAGO_URL;
const code = process.env.AGENT_CODE;
const shots = process.env.SCREENSHOT_DIR;
const browser = await launchBrowser([`--use-file-for-fake-audio-capture=${process.env.MIC_WAV}`]);
let failed = false;
let last = null;
try {
  const page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.log('page:', m.text()); });
  await page.goto(`${url}/embed/${code}#token=${process.env.EMBED_TOKEN}&room=mic`);
  const stats = () => viewerStats(page);
  await until('live', async () => (await stats()).state === 'live');

  await page.click('#mic');
  await until('microphone chunks', async () => (await stats()).micChunks > 10);
  const heard = process.env.EXPECT_HEARD.toLowerCase();
  // Recognition runs on the server's CPU, which the suite shares: allow for a slow machine.
  await until('the spoken question in the viewer caption and its answer', async () => {
    last = await stats();
    const c = last.captions || [];
    const q = c.findIndex((l) => l.role === 'user' && l.text.toLowerCase().includes(heard));
    return q >= 0 && c.slice(q + 1).some((l) => l.role === 'agent' && !l.open && !l.thinking && l.text.length > 3);
  }, 150000);
  // Nothing else spoke in this room: speaking audio is the answer, and the page played it.
  await until('the answer spoken', async () => {
    const s = await stats();
    return s.speakingChunks > 10 && s.audioPlayed > 16000;
  }, 30000);
  const shown = await page.evaluate(() => document.getElementById('captions').textContent);
  assert.ok(shown.toLowerCase().includes(heard), `captions on the page: ${shown}`);
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

// The viewer page (/embed/{agent_code}) in Debian's chromium driven by playwright-core, on its
// fallback media (#media=jpeg+pcm: what browsers without WebCodecs get): it shows
// changing frames, receives and plays audio after a REST speak, answers typed text with captions,
// streams the (fake) microphone, and reconnects by itself after the
// server drops the socket (the C++ side restarts imagod on the same port when told to).
// Env: IMAGO_URL, AGENT_CODE, EMBED_TOKEN, API_SECRET, SYNC_DIR, CHROMIUM (default /usr/bin/chromium),
// SCREENSHOT_DIR (optional).
import fs from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { launchBrowser, sleep, until, viewerStats } from './viewer_harness.mjs';

const url = process.env.IMAGO_URL;
const code = process.env.AGENT_CODE;
const sync = process.env.SYNC_DIR;
const shots = process.env.SCREENSHOT_DIR;

// Chromium's fake microphone is a periodic beep.
const browser = await launchBrowser();
let failed = false;
try {
  const page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.log('page:', m.text()); });
  await page.goto(`${url}/embed/${code}#token=${process.env.EMBED_TOKEN}&room=browser&media=jpeg+pcm`);
  const stats = () => viewerStats(page);
  await until('live', async () => (await stats()).state === 'live');
  assert.equal((await stats()).media, 'jpeg+pcm');

  // Frames arrive, are drawn, and the picture changes (idle motion, blinks).
  const canvasHash = () => page.evaluate(() => {
    const c = document.getElementById('screen');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let h = 0;
    for (let i = 0; i < d.length; i += 7) h = (h * 31 + d[i]) >>> 0;
    return h;
  });
  await until('frames drawn', async () => (await stats()).framesDrawn > 20);
  const hashes = new Set();
  for (let i = 0; i < 15; i++) { hashes.add(await canvasHash()); await sleep(200); }
  assert.ok(hashes.size >= 3, `the canvas should change over 3 s (saw ${hashes.size} distinct pictures)`);
  if (shots) await page.screenshot({ path: path.join(shots, 'viewer-idle.png') });

  // REST speak -> speech audio reaches the page and is played.
  const before = await stats();
  const r = await fetch(`${url}/v1/agent/${code}/speak`, {
    method: 'POST',
    headers: { 'api-secret': process.env.API_SECRET, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'Hello from the browser test.', room_id: 'browser' }),
  });
  const body = await r.text();
  assert.equal(r.status, 200, body);
  assert.equal(JSON.parse(body).delivered_to_rooms, 1);
  await until('speaking audio', async () => (await stats()).speakingChunks > before.speakingChunks + 10);
  await until('playback finished', async () => (await stats()).events.includes('playback_finished'));
  const s1 = await stats();
  assert.ok(s1.audioPlayed > 24000, `the AudioWorklet should have played audio (played ${s1.audioPlayed})`);
  if (shots) await page.screenshot({ path: path.join(shots, 'viewer-speaking.png') });

  // Typed text -> the conversation answers (built-in responder): captions for both sides.
  await page.fill('#text', 'Hello!');
  await page.click('#send');
  await until('captions', async () => {
    const c = (await stats()).captions || [];
    return c.some((l) => l.role === 'user' && l.text === 'Hello!') &&
           c.some((l) => l.role === 'agent' && !l.open && l.text.length > 3);
  });
  const shown = await page.evaluate(() => document.getElementById('captions').textContent);
  assert.ok(shown.includes('You: Hello!'), `captions on the page: ${shown}`);
  if (shots) await page.screenshot({ path: path.join(shots, 'viewer-captions.png') });

  // The microphone button streams 16 kHz PCM chunks as binary messages; the server takes them.
  await page.click('#mic');
  await until('microphone chunks', async () => (await stats()).micChunks > 50);
  await page.click('#mic');
  const sm = await stats();
  assert.ok(!String(sm.lastError || '').startsWith('microphone'), `microphone: ${sm.lastError}`);
  assert.ok(!String(sm.lastError || '').startsWith('VALIDATION_ERROR'), `server: ${sm.lastError}`);

  // The server drops the socket (restart on the same port): the page comes back by itself.
  fs.writeFileSync(path.join(sync, 'ready_for_drop'), '');
  await until('restart', async () => fs.existsSync(path.join(sync, 'restarted')), 60000);
  const firstSession = s1.sessionId;
  await until('reconnected', async () => {
    const s = await stats();
    return s.connects >= 2 && s.state === 'live' && s.sessionId && s.sessionId !== firstSession;
  }, 30000);
  const drawn = (await stats()).framesDrawn;
  await until('frames after reconnect', async () => (await stats()).framesDrawn > drawn + 10);
  console.log('viewer ok', JSON.stringify(await stats()));
} catch (e) {
  failed = true;
  console.error('FAIL:', e.message);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);

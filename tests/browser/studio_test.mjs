// The agent studio and the agent list in Debian's chromium (playwright-core) against a real imagod
// started by tests/api/studio_browser_test.cpp, which passes IMAGO_URL, IMAGO_EMAIL,
// IMAGO_PASSWORD, IMAGO_FACE (a portrait) and IMAGO_NO_FACE (a picture without a face).
// IMAGO_SCREENSHOT_DIR, when set, receives PNGs at 1280x800 and 390x844. Looks at results (pixels
// of the crop, samples of the voice preview, the balance), not only at the DOM.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const base = process.env.IMAGO_URL;
const email = process.env.IMAGO_EMAIL;
const password = process.env.IMAGO_PASSWORD;
const face = process.env.IMAGO_FACE;
const noFace = process.env.IMAGO_NO_FACE;
const shots = process.env.IMAGO_SCREENSHOT_DIR;
assert.ok(base && email && password && face && noFace, 'IMAGO_URL, IMAGO_EMAIL, IMAGO_PASSWORD, IMAGO_FACE and IMAGO_NO_FACE are required');

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--autoplay-policy=no-user-gesture-required', '--mute-audio'],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
const page = await context.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('dialog', (d) => d.accept());
const step = (name) => console.log(`- ${name}`);
// The page at the desktop size and at a phone's, then back.
async function shot(name) {
  if (!shots) return;
  await page.screenshot({ path: `${shots}/${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: `${shots}/${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}
const balance = () => page.evaluate(() => fetch('/dashboard/api/v2/credit-summaries').then((r) => r.json()).then((j) => j.data.balance));
// Distinct grey levels in the crop canvas: a photo has many, a blank canvas one.
const cropLevels = () => page.evaluate(() => {
  const c = document.getElementById('crop');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const seen = new Set();
  for (let i = 0; i < d.length; i += 4 * 97) seen.add((d[i] + d[i + 1] + d[i + 2]) >> 2);
  return seen.size;
});

try {
  step('sign in');
  await page.goto(`${base}/sign-in?next=%2Fagents`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.press('#password', 'Enter');
  await page.waitForURL(`${base}/agents`);
  await page.waitForSelector('#list p');
  assert.match(await page.textContent('#list'), /No agents yet/);
  await shot('agents-empty');

  step('the studio shows the price before anything is pressed');
  await page.click('#new-agent');
  await page.waitForURL(`${base}/studio`);
  await page.waitForSelector('#cost strong');
  assert.match(await page.textContent('#cost'), /costs 250 credits/);
  assert.match(await page.textContent('#cost'), /balance is 2,000 credits, 1,750 after/);
  assert.match(await page.textContent('#create-button'), /250 credits/);
  await page.waitForSelector('#voices input[value=F3]', { state: 'attached' });
  const before = await balance();

  step('a picture without a face is refused with the reason, and nothing is charged');
  await page.setInputFiles('#photo', noFace);
  await page.waitForSelector('#face-msg.error', { timeout: 60000 });
  assert.match(await page.textContent('#face-msg'), /No face found in the image/);
  assert.match(await page.textContent('#face-msg'), /Nothing has been charged/);
  assert.equal(await page.isDisabled('#create-button'), true);
  assert.match(await page.textContent('#create-why'), /needs a face/);
  assert.equal(await page.isVisible('#face-box'), false);
  assert.ok((await cropLevels()) > 20, 'the crop shows the picture');
  await shot('studio-no-face');
  assert.equal(await balance(), before, 'the face check charged nothing');

  step('a portrait: the crop shows it with the face the service found');
  await page.setInputFiles('#photo', face);
  await page.waitForSelector('#face-msg.ok', { timeout: 60000 });
  assert.ok((await cropLevels()) > 20, 'the crop shows the photo');
  const geom = await page.evaluate(() => {
    const r = (s) => document.querySelector(s).getBoundingClientRect();
    const b = r('#face-box'), c = r('#crop');
    return { b: [b.left, b.top, b.width, b.height], c: [c.left, c.top, c.width, c.height] };
  });
  const [bx, by, bw, bh] = geom.b, [cx, cy, cw, ch] = geom.c;
  assert.ok(bw > cw * 0.1 && bh > ch * 0.1, `the face box has a size (${geom.b} in ${geom.c})`);
  assert.ok(bx >= cx - 1 && by >= cy - 1 && bx + bw <= cx + cw + 1 && by + bh <= cy + ch + 1, `the face box is inside the crop (${geom.b} in ${geom.c})`);
  assert.equal(await page.isDisabled('#create-button'), false);

  step('moving the crop by keyboard asks again; the square frame keeps a face');
  await page.selectOption('#aspect', '1:1');
  await page.waitForSelector('#face-msg.ok', { timeout: 60000 });
  const ratio = await page.evaluate(() => { const c = document.getElementById('crop'); return c.width / c.height; });
  assert.equal(ratio, 1);
  await page.focus('#crop');
  await page.keyboard.press('+');
  await page.keyboard.press('ArrowLeft');
  await page.waitForSelector('#face-msg.ok', { timeout: 60000 });
  await shot('studio-face');

  step('every built-in voice has a preview; one plays audible speech');
  const previews = await page.locator('#voices button.play').count();
  assert.equal(previews, 10);
  await page.click('button[aria-label="Preview voice F3"]');
  await page.waitForSelector('#voice-msg.ok', { timeout: 60000 });
  const audio = await page.evaluate(async () => {
    const p = document.getElementById('player');
    const buf = await window.imagoStudio.preview.arrayBuffer();
    const ctx = new OfflineAudioContext(1, 1, 22050);
    const pcm = (await ctx.decodeAudioData(buf)).getChannelData(0);
    let sum = 0;
    for (const x of pcm) sum += x * x;
    return { voice: p.dataset.voice, seconds: pcm.length / 22050, rms: Math.sqrt(sum / pcm.length) };
  });
  assert.equal(audio.voice, 'F3');
  assert.ok(audio.seconds > 1, `a preview of more than a second (${audio.seconds} s)`);
  assert.ok(audio.rms > 0.01, `the preview is not silent (rms ${audio.rms})`);
  await page.waitForFunction(() => document.getElementById('player').currentTime > 0.2, null, { timeout: 30000 });
  await page.check('#voice-F3');

  step('a persona template fills the prompt with the name');
  await page.fill('#name', 'Studio Nora');
  await page.selectOption('#template', 'guide');
  assert.match(await page.inputValue('#prompt'), /^You are Studio Nora, the friendly guide/);

  step('knowledge typed in the studio goes with the agent');
  await page.fill('#knowledge-text', 'The dinosaur hall is on the second floor.');
  await page.click('#knowledge-add');
  await page.waitForSelector('#knowledge-list li');
  await shot('studio-ready');

  step('create: exactly the price shown is charged, and the agent becomes ready');
  await page.click('#create-button');
  await page.waitForSelector('#generation-done', { timeout: 240000 });
  assert.equal(await page.textContent('#generation-done'), 'Ready.');
  assert.equal(await balance(), before - 250);

  step('the agent list: a thumbnail of the photo, the status and the cost');
  await page.goto(`${base}/agents`);
  const card = page.locator('.agent-card', { hasText: 'Studio Nora' });
  await card.locator('.thumb img').waitFor();
  const thumb = await card.locator('.thumb img').evaluate((i) => i.decode().then(() => [i.naturalWidth, i.naturalHeight]));
  assert.deepEqual(thumb, [1024, 1024], 'the thumbnail is the square crop that was sent');
  assert.match(await card.textContent(), /ready/);
  assert.match(await card.textContent(), /250 credits/);
  await shot('agents');

  step('the agent page: its settings and knowledge; more knowledge is added and deleted');
  await card.locator('a.name').click();
  await page.waitForSelector('#knowledge-list li button');
  assert.match(await page.textContent('#knowledge-list'), /The dinosaur hall is on the second floor/);
  assert.match(await page.textContent('#settings-list'), /F3 \(chosen/);
  await page.fill('#knowledge-title', 'Cafe');
  await page.fill('#knowledge-text', 'The cafe serves soup and sandwiches.');
  await page.click('#knowledge-form button[type=submit]');
  await page.waitForSelector('#knowledge-list li:has-text("Cafe")');
  assert.match(await page.textContent('#knowledge-usage'), /2 of 20 items/);
  await page.setInputFiles('#knowledge-file', { name: 'hours.md', mimeType: 'text/markdown', buffer: Buffer.from('# Hours\n\nWe open at nine.\n') });
  await page.waitForSelector('#knowledge-list li:has-text("hours.md")');
  await page.setInputFiles('#knowledge-file', { name: 'scan.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.7\0\u0001binary') });
  await page.waitForSelector('#knowledge-msg.error');
  assert.match(await page.textContent('#knowledge-msg'), /UTF-8 text/);
  await page.click('button[aria-label="Delete Cafe"]');
  await page.waitForSelector('#knowledge-list li:has-text("Cafe")', { state: 'detached' });
  await shot('agent');

  step('the video page: the price, a talking video from a text, its progress, a preview that plays');
  await page.goto(`${base}/video`);
  await page.waitForSelector('#agent option', { state: 'attached' });
  assert.match(await page.textContent('#cost'), /2 credits per started minute/);
  assert.match(await page.textContent('#curl'), /curl -s -X POST .*\/v1\/video\/generate/s);
  await page.fill('#text', 'Hello from the video page.');
  const beforeVideo = await balance();
  await page.click('#make');
  await page.waitForSelector('#video-done', { timeout: 240000 });
  assert.equal(await page.textContent('#video-done'), 'Ready.');
  const played = await page.evaluate(async () => {
    const v = document.getElementById('preview');
    v.muted = true;
    await v.play();
    await new Promise((r) => setTimeout(r, 700));
    const c = document.createElement('canvas');
    c.width = v.videoWidth; c.height = v.videoHeight;
    c.getContext('2d').drawImage(v, 0, 0);
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < d.length; i += 4 * 97) seen.add(d[i] >> 2);
    return { t: v.currentTime, w: v.videoWidth, h: v.videoHeight, levels: seen.size };
  });
  assert.ok(played.t > 0.2 && played.w > 0 && played.levels > 10, `the video plays a picture (${JSON.stringify(played)})`);
  assert.equal(await balance(), beforeVideo - 2);
  await shot('video');

  step("the agent page lists the agent's own video, and its download is the MP4");
  const agentCode = await page.$eval('#agent', (s) => s.value);
  await page.goto(`${base}/agent?code=${encodeURIComponent(agentCode)}`);
  await page.waitForSelector('#agent-video-list li');
  assert.equal(await page.locator('#agent-video-list li').count(), 1);
  assert.match(await page.textContent('#agent-video-list'), /credits/);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#agent-video-list button:has-text("Download MP4")')]);
  const mp4 = readFileSync(await dl.path());
  assert.ok(mp4.length > 1000 && mp4.subarray(4, 8).toString() === 'ftyp', `the download is an MP4 (${mp4.length} bytes)`);
  await page.click('#agent-videos details.curl-box summary');
  assert.match(await page.textContent('#agent-videos pre.curl'), /curl -s '.*\/v1\/video\?agent_code=/);
  assert.match(await page.textContent('#agent-session-list'), /No sessions yet/);
  await shot('agent-with-video');

  step('the usage page: charges in words linked to the agent, and the spend cap set');
  await page.goto(`${base}/usage`);
  await page.waitForSelector('#ledger li');
  assert.match(await page.textContent('#ledger'), /250 credits to generate agent/);
  assert.match(await page.textContent('#ledger'), /2 credits for a talking video of 1 started minute/);
  assert.match(await page.textContent('#per-agent'), /250/);
  await page.fill('#cap', '120');
  await page.click('#cap-form button');
  await page.waitForSelector('#cap-msg.ok');
  assert.match(await page.textContent('#cap-now'), /of 120 credits this month/);
  const capApi = await page.evaluate(() => fetch('/dashboard/api/v1/spend-cap').then((r) => r.json()));
  assert.equal(capApi.data.live_monthly_credits, 120);
  await shot('usage');

  assert.deepEqual(errors, [], 'no uncaught script errors');
  console.log('studio browser test: all checks passed');
} finally {
  await browser.close();
}

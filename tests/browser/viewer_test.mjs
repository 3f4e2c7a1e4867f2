// The viewer (web/embed.html, web/viewer.js), the embed page without a token, the agent page's
// Embed dialog, and the Live rooms and Sessions pages, in Debian's chromium (playwright-core, no
// browser download) against a real imagod started by tests/api/viewer_browser_test.cpp, which
// passes IMAGO_URL, IMAGO_EMAIL, IMAGO_PASSWORD, AGENT_CODE (a ready 16:9 agent), API_SECRET and
// EMBED_TOKEN. IMAGO_SCREENSHOT_DIR, when set, receives PNGs at 1280x800 and 390x844. Exits
// non-zero on the first failed check.
import assert from 'node:assert/strict';
import http from 'node:http';
import { chromium } from 'playwright-core';

const base = process.env.IMAGO_URL;
const { IMAGO_EMAIL: email, IMAGO_PASSWORD: password, AGENT_CODE: code, API_SECRET: secret, EMBED_TOKEN: token } = process.env;
const shots = process.env.IMAGO_SCREENSHOT_DIR;
assert.ok(base && email && password && code && secret && token, 'IMAGO_URL, IMAGO_EMAIL, IMAGO_PASSWORD, AGENT_CODE, API_SECRET and EMBED_TOKEN are required');

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const flags = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--mute-audio',
               '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'];
const launch = (autoplay) => chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  // Without autoplay: the policy of desktop Chrome, named, since a headless default may differ.
  args: [...flags, autoplay ? '--autoplay-policy=no-user-gesture-required' : '--autoplay-policy=document-user-activation-required'],
});
const step = (name) => console.log(`- ${name}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, fn, ms = 30000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await sleep(100);
  }
}
const shot = async (page, name, fullPage = false) => { if (shots) await page.screenshot({ path: `${shots}/${name}.png`, fullPage }); };
const stats = (frameOrPage) => frameOrPage.evaluate(() => {
  const s = window.imagoViewer || {};
  return { ...s, events: (s.events || []).slice(), captions: (s.captions || []).map((l) => ({ ...l })) };
});
const api = (method, path, body) => fetch(base + path, {
  method, headers: { 'api-secret': secret, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined,
}).then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) }));
// Waits until pred(stats of the viewer in f); on a timeout the error carries those stats.
async function untilStats(f, what, pred, ms = 30000) {
  let last = null;
  try {
    return await until(what, async () => { last = await stats(f); return pred(last) ? last : null; }, ms);
  } catch (e) {
    throw new Error(`${e.message}; viewer: ${JSON.stringify({ ...last, events: last && last.events.slice(-12), captions: undefined })}`);
  }
}
// Mean and spread of the canvas: a picture, not a blank or black canvas.
const picture = (f) => f.evaluate(() => {
  const c = document.getElementById('screen');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let sum = 0, sq = 0, n = 0;
  for (let i = 0; i < d.length; i += 28) { sum += d[i]; sq += d[i] * d[i]; n++; }
  const mean = sum / n;
  return { mean, sd: Math.sqrt(sq / n - mean * mean), w: c.width, h: c.height };
});
// Where an element is on the page, and whether it is inside the window.
const box = (page, sel) => page.evaluate((s) => {
  const e = document.querySelector(s);
  if (!e) return null;
  const r = e.getBoundingClientRect();
  return { x: r.x, y: r.y, w: r.width, h: r.height, bottom: r.bottom, right: r.right, vw: innerWidth, vh: innerHeight,
           scrollW: document.documentElement.scrollWidth };
}, sel);

const errors = [];
const watch = (page) => {
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => d.accept());
};

const browser = await launch(true);
const quiet = await launch(false);  // a browser's usual autoplay policy: sound starts off
let other = null;
try {
  step('/embed/{code} without a token explains itself (no black box, no connection)');
  for (const [vp, name] of [[DESKTOP, 'embed-no-token'], [PHONE, 'embed-no-token-phone']]) {
    const ctx = await browser.newContext({ viewport: vp });
    const page = await ctx.newPage();
    watch(page);
    const sockets = [];
    page.on('websocket', (w) => sockets.push(w.url()));
    const res = await page.goto(`${base}/embed/${code}`);
    assert.equal(res.status(), 200);
    assert.ok(await page.isVisible('#help h1'), 'the help is shown');
    assert.ok(!(await page.isVisible('#viewer')), 'the viewer is not');
    const text = (await page.innerText('#help')).replace(/\s+/g, ' ');
    assert.match(text, /embed token/);
    assert.match(text, /POST \/v1\/embed-tokens\/request/);
    assert.match(text, /Embed/);
    assert.equal(await page.textContent('#help-agent'), code, 'it names the agent of the address');
    const href = await page.getAttribute('#help a', 'href');
    assert.equal(href, '/docs/api#requestEmbedToken');
    const b = await box(page, '#help');
    assert.ok(b.scrollW <= vp.width, `no sideways scrolling (${b.scrollW} > ${vp.width})`);
    const bg = await page.evaluate(() => getComputedStyle(document.body).color);
    assert.notEqual(bg, 'rgb(0, 0, 0)');
    await shot(page, name);
    await sleep(300);
    assert.deepEqual(sockets, [], 'no connection without a token');
    if (vp === DESKTOP) {
      const docs = await page.request.get(base + href);
      assert.equal(docs.status(), 200, 'the linked docs page exists');
    }
    await ctx.close();
  }

  step('the viewer at 1280x800: the picture fills its frame at the agent\u2019s aspect ratio');
  const ctx = await browser.newContext({ viewport: DESKTOP });
  const page = await ctx.newPage();
  watch(page);
  await page.goto(`${base}/embed/${code}#token=${encodeURIComponent(token)}&room=viewer-a`);
  await untilStats(page, 'live', (s) => s.state === 'live');
  await untilStats(page, 'frames drawn', (s) => s.framesDrawn > 10);
  const s0 = await stats(page);
  assert.ok(Math.abs(s0.aspect - 16 / 9) < 0.02, `a 16:9 agent (aspect ${s0.aspect})`);
  const stage = await box(page, '#stage');
  const canvas = await box(page, '#screen');
  assert.ok(Math.abs(stage.w / stage.h - 16 / 9) < 0.03, `the frame has the agent's shape (${stage.w}x${stage.h})`);
  assert.ok(Math.abs(canvas.w - stage.w) < 2 && Math.abs(canvas.h - stage.h) < 2, 'the picture fills its frame');
  assert.ok(stage.h >= 0.75 * DESKTOP.height || stage.w >= 0.95 * (DESKTOP.width - 16),
            `the frame is as large as the window allows (${stage.w}x${stage.h})`);
  const bar = await box(page, '#bar');
  assert.ok(bar.bottom <= DESKTOP.height, 'the controls are in the window');
  const pic = await picture(page);
  assert.ok(pic.mean > 10 && pic.mean < 245 && pic.sd > 5, `a picture, not a blank canvas (${JSON.stringify(pic)})`);
  assert.equal(await page.getAttribute('#activity', 'data-state'), 'ready');

  step('every control is labelled, reachable by Tab and works with Enter and Space');
  for (const name of ['Message to the agent']) assert.equal(await page.getByRole('textbox', { name }).count(), 1);
  for (const name of ['Send', 'Mic', 'Stop', 'Mute: turn sound off', 'Full screen']) {
    assert.equal(await page.getByRole('button', { name, exact: true }).count(), 1, `a button named ${name}`);
  }
  const order = [];
  await page.focus('#text');
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press('Shift+Tab');
    order.push(await page.evaluate(() => document.activeElement.id));
  }
  assert.ok(order.includes('fullscreen'), `the full screen button is in the tab order (${order})`);
  await page.focus('#fullscreen');
  await page.keyboard.press('Enter');
  await untilStats(page, 'full screen', (s) => s.fullscreen === true, 5000);
  assert.equal(await page.getAttribute('#fullscreen', 'aria-label'), 'Exit full screen');
  const fsStage = await box(page, '#stage');
  assert.ok(fsStage.w > stage.w || fsStage.h > stage.h || fsStage.h >= 0.8 * fsStage.vh, 'the picture grows in full screen');
  await shot(page, 'viewer-fullscreen');
  await page.keyboard.press('Space');
  await untilStats(page, 'full screen left', (s) => s.fullscreen === false, 5000);
  await page.focus('#mute');
  await page.keyboard.press('Space');
  assert.equal((await stats(page)).sound, 'off');
  assert.equal(await page.getAttribute('#mute', 'aria-label'), 'Unmute: turn sound on');
  await page.keyboard.press('Enter');
  assert.equal((await stats(page)).sound, 'on');
  await page.focus('#mic');
  await page.keyboard.press('Enter');
  await untilStats(page, 'listening', (s) => s.activity === 'listening', 10000);
  assert.equal(await page.getAttribute('#mic', 'aria-pressed'), 'true');
  assert.equal(await page.textContent('#activity'), 'Listening');
  await page.keyboard.press('Space');
  await until('mic off', async () => (await page.getAttribute('#mic', 'aria-pressed')) === 'false', 5000);

  step('text sent with speak is captioned while it is spoken, with the speaking indicator');
  const spokenText = 'Welcome to the viewer test. These words come from the speak call.';
  const before = await stats(page);
  let r = await api('POST', `/v1/agent/${code}/speak`, { message: spokenText, room_id: 'viewer-a' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const during = await until('the speak text in the captions while speaking', async () => {
    const s = await stats(page);
    const shown = await page.textContent('#captions');
    return s.activity === 'speaking' && shown.includes('Agent: ' + spokenText) ? s : null;
  });
  assert.ok(!during.events.slice(before.events.length).includes('playback_finished'), 'captioned before the speech ended');
  assert.equal(await page.textContent('#activity'), 'Speaking');
  await shot(page, 'viewer-speaking');
  const talking = new Set();
  for (let i = 0; i < 10; i++) { talking.add(JSON.stringify(await picture(page))); await sleep(150); }
  assert.ok(talking.size >= 3, `the picture changes while the agent speaks (saw ${talking.size})`);
  await until('speech played', async () => {
    const s = await stats(page);
    return s.events.slice(before.events.length).includes('playback_finished') && s.activity === 'ready';
  }, 60000);
  const after = await stats(page);
  assert.ok(after.audioPlayed > before.audioPlayed + 24000, 'the speech was played');
  assert.equal(after.captions.filter((l) => l.text === spokenText).length, 1, 'captioned once, also after its transcript event');

  step('the viewer\u2019s typed words and the agent\u2019s answer share the one caption area');
  await page.fill('#text', 'Hello there!');
  await page.press('#text', 'Enter');
  await until('both sides captioned', async () => {
    const c = (await stats(page)).captions;
    const u = c.findIndex((l) => l.role === 'user' && l.text === 'Hello there!');
    return u >= 0 && c.slice(u + 1).some((l) => l.role === 'agent' && !l.open && !l.thinking && l.text.length > 3);
  }, 60000);
  const shown = await page.textContent('#captions');
  assert.ok(shown.includes('You: Hello there!'), shown);
  assert.equal(await page.locator('[aria-live]').count(), 1, 'one caption area (plus the status line)');
  await shot(page, 'viewer-captions');
  // Recorded from now on, for the Sessions page.
  r = await api('POST', '/v1/rooms/viewer-a/recording', { enabled: true });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  r = await api('POST', `/v1/agent/${code}/speak`, { message: 'This part is recorded.', room_id: 'viewer-a' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  await untilStats(page, 'recorded speech played', (s) => s.captions.some((l) => l.text === 'This part is recorded.'));
  await sleep(2500);

  step('the phone layout (390x844): picture, captions and controls fit the screen');
  await page.setViewportSize(PHONE);
  await sleep(300);
  const ps = await box(page, '#stage');
  const pb = await box(page, '#bar');
  assert.ok(ps.scrollW <= PHONE.width, `no sideways scrolling (${ps.scrollW})`);
  assert.ok(ps.w >= PHONE.width - 20, `the picture takes the width (${ps.w})`);
  assert.ok(pb.bottom <= PHONE.height && pb.right <= PHONE.width, `the controls are on the screen (${JSON.stringify(pb)})`);
  for (const id of ['send', 'mic', 'stop', 'mute']) {
    const bb = await box(page, '#' + id);
    assert.ok(bb.right <= PHONE.width && bb.bottom <= PHONE.height && bb.h >= 32, `#${id} is on the screen and large enough to tap (${JSON.stringify(bb)})`);
  }
  await shot(page, 'viewer-phone');
  await page.setViewportSize(DESKTOP);

  step('the JPEG + PCM fallback fills the same frame');
  {
    const jp = await ctx.newPage();
    watch(jp);
    await jp.goto(`${base}/embed/${code}#token=${encodeURIComponent(token)}&room=viewer-a&media=jpeg+pcm`);
    await untilStats(jp, 'jpeg frames drawn', (s) => s.framesDrawn > 10);
    const js = await stats(jp);
    assert.equal(js.media, 'jpeg+pcm');
    assert.ok(Math.abs(js.aspect - 16 / 9) < 0.02, `16:9 on the fallback too (${js.aspect})`);
    const jb = await box(jp, '#stage');
    assert.ok(Math.abs(jb.w / jb.h - 16 / 9) < 0.03 && jb.w >= 0.95 * (DESKTOP.width - 16), `the fallback fills its frame (${jb.w}x${jb.h})`);
    assert.ok((await picture(jp)).sd > 5, 'a JPEG picture on the canvas');
    await jp.close();
  }

  step('a voice_chat session says it has no picture');
  {
    const vt = await api('POST', '/v1/embed-tokens/request', { agent_id: code, fingerprint: 'voice-test', billing_type: 'voice_chat' });
    assert.equal(vt.status, 200, JSON.stringify(vt.body));
    const vp = await ctx.newPage();
    watch(vp);
    await vp.goto(`${base}/embed/${code}#token=${encodeURIComponent(vt.body.data.token)}&room=viewer-voice&billing=voice_chat`);
    await untilStats(vp, 'voice live', (s) => s.state === 'live');
    assert.ok(await vp.isVisible('#voice-only'), 'the frame says there is no picture');
    await shot(vp, 'viewer-voice');
    await vp.close();
    assert.equal((await api('DELETE', '/v1/rooms/viewer-voice')).status, 200);
  }

  step('with the browser\u2019s usual autoplay policy, sound starts off and one click turns it on');
  {
    const qctx = await quiet.newContext({ viewport: PHONE });
    // Headless Chromium does not always hold audio back under that policy (it let a context run
    // without a click in some runs), so the page gets what a browser that blocks autoplay gives:
    // an AudioContext that stays suspended, and that resume() starts only after a click or a key
    // on the page.
    await qctx.addInitScript(() => {
      let touched = false;
      for (const t of ['pointerdown', 'keydown']) addEventListener(t, () => { touched = true; }, true);
      const Real = window.AudioContext;
      window.AudioContext = class extends Real {
        constructor(...args) { super(...args); if (!touched) super.suspend(); }
        resume() { return touched ? super.resume() : Promise.resolve(); }
      };
    });
    const q = await qctx.newPage();
    watch(q);
    await q.goto(`${base}/embed/${code}#token=${encodeURIComponent(token)}&room=viewer-a`);
    await untilStats(q, 'live', (s) => s.state === 'live');
    await untilStats(q, 'the sound-off state', (s) => s.sound === 'off');
    await q.waitForSelector('#sound', { state: 'visible' });
    assert.ok(await q.isVisible('#sound'), 'the sound-off button is shown over the picture');
    assert.equal(await q.textContent('#mute'), 'Unmute');
    await shot(q, 'viewer-sound-off-phone');
    await q.click('#sound');
    await untilStats(q, 'sound on', (s) => s.sound === 'on', 5000);
    assert.ok(!(await q.isVisible('#sound')), 'the sound-off button goes away');
    assert.equal(await q.evaluate(() => document.activeElement.id), 'text', 'focus moves to the message box');
    await qctx.close();
  }

  step('the agent page: Embed gives a share link and an iframe snippet');
  const dash = await browser.newContext({ viewport: DESKTOP });
  const dp = await dash.newPage();
  watch(dp);
  await dp.goto(`${base}/sign-in`);
  await dp.fill('#email', email);
  await dp.fill('#password', password);
  await dp.press('#password', 'Enter');
  await dp.waitForURL(`${base}/`);
  await dp.goto(`${base}/agent?code=${code}`);
  await dp.waitForSelector('#embed:not([disabled])');
  await shot(dp, 'agent', true);
  await dp.focus('#embed');
  await dp.keyboard.press('Enter');
  await dp.waitForSelector('#embed-snippet');
  assert.ok(await dp.isVisible('dialog#embed-dialog[open]'));
  const snippet = await dp.inputValue('#embed-snippet');
  const link = await dp.inputValue('#embed-link');
  assert.match(snippet, new RegExp(`^<iframe src="${base}/embed/${code}#token=[^"&]+&room=share-[a-z0-9]+" `));
  assert.match(snippet, /allow="autoplay; microphone; camera; fullscreen"/);
  assert.ok(snippet.includes(link), 'the snippet frames the share link');
  const dialogText = (await dp.innerText('#embed-dialog')).replace(/\s+/g, ' ');
  for (const words of [/fingerprint/, /one hour/, /Only this site/]) assert.match(dialogText, words);
  assert.match(await dp.inputValue('#embed-curl'), new RegExp(`/v1/embed-tokens/request[^]*api-secret: \\$IMAGO_API_SECRET[^]*"agent_id": "${code}"`));
  await shot(dp, 'agent-embed-dialog');
  await dp.setViewportSize(PHONE);
  await shot(dp, 'agent-embed-dialog-phone');
  const db = await box(dp, 'dialog#embed-dialog');
  assert.ok(db.right <= PHONE.width && db.x >= 0, `the dialog fits the phone (${JSON.stringify(db)})`);
  await dp.setViewportSize(DESKTOP);
  await dp.keyboard.press('Escape');
  await until('the dialog closed', async () => !(await dp.isVisible('dialog#embed-dialog[open]')), 5000);
  assert.equal(await dp.evaluate(() => document.activeElement.id), 'embed', 'focus goes back to the Embed button');

  step('the same viewer on the agent page: the frame takes the agent\u2019s shape, the speak form is captioned in it');
  await dp.click('#start-viewer');
  const dv = await until('the viewer frame', async () => dp.frame({ url: /\/embed\// }));
  await untilStats(dv, 'the dashboard viewer is live', (s) => s.state === 'live');
  await until('the frame is sized', async () => {
    const f = await box(dp, '#viewer-frame');
    return Math.abs(f.h - Math.min(0.85 * DESKTOP.height, f.w / (16 / 9) + 96)) < 3;
  }, 10000);
  await dp.fill('#say', 'Said from the dashboard form.');
  await dp.press('#say', 'Enter');
  await until('the dashboard speak captioned in the frame', async () => (await dv.textContent('#captions')).includes('Agent: Said from the dashboard form.'));
  await dp.locator('#viewer-frame').scrollIntoViewIfNeeded();
  await shot(dp, 'agent-live');
  await dp.setViewportSize(PHONE);
  await sleep(300);
  const pf = await box(dp, '#viewer-frame');
  assert.ok(pf.right <= PHONE.width && pf.scrollW <= PHONE.width, `the viewer frame fits a phone (${JSON.stringify(pf)})`);
  await dp.locator('#viewer-frame').scrollIntoViewIfNeeded();
  await shot(dp, 'agent-live-phone');
  await dp.setViewportSize(DESKTOP);
  await dp.click('#stop-viewer');
  await dp.waitForSelector('#live-msg.ok:has-text("Viewer stopped")');

  step('the snippet works on a page of another site (another port)');
  const site = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>Another site</title><h1>Our shop</h1>${snippet}`);
  });
  await new Promise((ok) => site.listen(0, '127.0.0.1', ok));
  const siteUrl = `http://127.0.0.1:${site.address().port}/`;
  other = site;
  const sp = await dash.newPage();
  watch(sp);
  await sp.goto(siteUrl);
  const embedded = await until('the framed viewer', async () => sp.frame({ url: /\/embed\// }));
  await untilStats(embedded, 'the framed viewer is live', (s) => s.state === 'live');
  await untilStats(embedded, 'the framed viewer draws', (s) => s.framesDrawn > 10);
  const fp = await picture(embedded);
  assert.ok(fp.sd > 5, 'a picture in the frame');
  assert.ok(await embedded.evaluate(() => document.fullscreenEnabled), 'the snippet allows full screen');
  await shot(sp, 'snippet-on-another-site');
  const shareRoom = decodeURIComponent(/room=([^"&]+)/.exec(snippet)[1]);

  step('Live rooms lists the running rooms; End ends one through the API');
  await dp.goto(`${base}/rooms`);
  await dp.waitForSelector(`tr[data-room="${shareRoom}"]`);
  await dp.waitForSelector('tr[data-room="viewer-a"]');
  const rowText = await dp.textContent(`tr[data-room="${shareRoom}"]`);
  assert.ok(rowText.includes(code), rowText);
  await shot(dp, 'rooms', true);
  await dp.setViewportSize(PHONE);
  await shot(dp, 'rooms-phone', true);
  const endBox = await box(dp, `tr[data-room="${shareRoom}"] button`);
  assert.ok(endBox.right <= PHONE.width && endBox.scrollW <= PHONE.width, `End is on a phone's screen (${JSON.stringify(endBox)})`);
  await dp.setViewportSize(DESKTOP);
  await dp.getByRole('button', { name: `End room ${shareRoom}` }).click();
  await dp.waitForSelector('#msg.ok');
  assert.match(await dp.textContent('#msg'), new RegExp(`Room ${shareRoom} ended`));
  await dp.waitForSelector(`tr[data-room="${shareRoom}"]`, { state: 'detached' });
  const rooms = await api('GET', '/v1/rooms');
  assert.ok(!rooms.body.data.some((m) => m.room_id === shareRoom), 'the room is gone from the API too');
  await untilStats(embedded, 'the framed viewer says it ended', (s) => s.state === 'ended');
  assert.match(await embedded.textContent('#state'), /ended — its owner ended it/);
  assert.ok(await embedded.isVisible('#ended'), 'the end is shown over the picture');
  assert.match(await embedded.textContent('#ended-text'), /The session has ended: its owner ended it/);
  assert.ok(await embedded.isDisabled('#send') && await embedded.isDisabled('#text'), 'the controls rest');
  await shot(sp, 'snippet-ended');
  await embedded.click('#again');
  await untilStats(embedded, 'live again after Start again', (s) => s.state === 'live' && s.connects === 2);
  assert.ok(!(await embedded.isVisible('#ended')) && !(await embedded.isDisabled('#send')));
  assert.equal((await api('DELETE', `/v1/rooms/${shareRoom}`)).status, 200);
  await sp.close();
  // The first viewer's room, with its recording, ends too.
  await dp.getByRole('button', { name: 'End room viewer-a' }).click();
  await dp.waitForSelector('tr[data-room="viewer-a"]', { state: 'detached' });
  await untilStats(page, 'the viewer says it ended', (s) => s.state === 'ended');

  step('Sessions lists them; a session shows its transcript with times and its recording');
  await dp.goto(`${base}/sessions`);
  // On a loaded machine the list can take a while; when it does not come, say what the page says.
  try {
    await dp.waitForSelector('#list table', { timeout: 60000 });
  } catch (e) {
    throw new Error(`the sessions list did not appear; the page says: ${await dp.textContent('main').catch(() => '?')}`);
  }
  const sid = before.sessionId;
  assert.ok(sid, 'the viewer knew its session');
  await dp.waitForSelector(`tr[data-session="${sid}"]`);
  await shot(dp, 'sessions', true);
  await dp.click(`tr[data-session="${sid}"] button`);
  await dp.waitForSelector('#transcript tbody tr');
  const lines = await dp.$$eval('#transcript tbody tr', (rows) => rows.map((row) => [...row.cells].map((c) => c.textContent)));
  const said = lines.find((l) => l[2].startsWith(spokenText));
  assert.ok(said, `the speak text in the transcript: ${JSON.stringify(lines)}`);
  assert.match(said[0], /^\d+:\d\d$/);
  assert.equal(said[1], 'Agent');
  assert.ok(lines.some((l) => l[1] === 'Viewer' && l[2].startsWith('Hello there!')), JSON.stringify(lines));
  // The recording is uploaded shortly after the end: reload until it is ready.
  await until('the recording', async () => {
    await dp.goto(`${base}/sessions?id=${sid}`);
    await dp.waitForSelector('#transcript');
    return dp.isVisible('#recording-link');
  }, 60000);
  const recHref = await dp.getAttribute('#recording-link', 'href');
  assert.equal(recHref, `/dashboard/api/v1/sessions/${sid}/recording`);
  const rec = await dp.request.get(base + recHref);
  assert.equal(rec.status(), 200);
  assert.equal(rec.headers()['content-type'], 'video/mp4');
  assert.ok((await rec.body()).length > 1000, 'an MP4');
  await shot(dp, 'session-transcript', true);
  await dp.setViewportSize(PHONE);
  await shot(dp, 'session-transcript-phone', true);
  const sb = await box(dp, 'main');
  assert.ok(sb.scrollW <= PHONE.width + 1, `the sessions page does not scroll sideways on a phone (${sb.scrollW})`);

  assert.deepEqual(errors, [], 'no uncaught script errors');
  console.log('viewer browser test: all checks passed');
} finally {
  if (other) other.close();
  await browser.close();
  await quiet.close();
}

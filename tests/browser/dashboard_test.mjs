// The dashboard in Debian's chromium (playwright-core, no browser download) against a real imagod
// started by tests/api/dashboard_browser_test.cpp, which passes IMAGO_URL, IMAGO_EMAIL,
// IMAGO_PASSWORD and IMAGO_FACE (a photo). IMAGO_SCREENSHOT_DIR, when set, receives a PNG of
// every page. Exits non-zero on the first failed check.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const base = process.env.IMAGO_URL;
const email = process.env.IMAGO_EMAIL;
const password = process.env.IMAGO_PASSWORD;
const face = process.env.IMAGO_FACE;
const shots = process.env.IMAGO_SCREENSHOT_DIR;
assert.ok(base && email && password && face, 'IMAGO_URL, IMAGO_EMAIL, IMAGO_PASSWORD and IMAGO_FACE are required');

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  // Audio plays without a click (the viewer's AudioWorklet is the clock), muted.
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--autoplay-policy=no-user-gesture-required', '--mute-audio'],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
const page = await context.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('dialog', (d) => d.accept());
const shot = async (name) => { if (shots) await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true }); };
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

try {
  step('a signed-out visitor is sent to the sign-in page');
  await page.goto(`${base}/keys`);
  await page.waitForURL(/\/sign-in\?next=%2Fkeys/);
  await shot('sign-in');

  step('a wrong password is refused, the right one signs in (by keyboard)');
  await page.fill('#email', email);
  await page.fill('#password', 'not the password');
  await page.press('#password', 'Enter');
  await page.waitForSelector('#msg.error');
  assert.match(await page.textContent('#msg'), /Wrong email or password/);
  await page.fill('#password', password);
  await page.press('#password', 'Enter');
  await page.waitForURL(`${base}/keys`);
  const cookie = (await context.cookies()).find((c) => c.name === 'imago_session');
  assert.ok(cookie && cookie.httpOnly && cookie.sameSite === 'Lax', 'session cookie is HttpOnly and SameSite=Lax');

  step('create a key: its secret is shown once, then only prefix and last four');
  await page.waitForSelector('#list table');
  await page.fill('#alias', 'browser-test');
  await page.click('#create button[type=submit]');
  const secret = (await page.textContent('#new-secret', { timeout: 10000 })).trim();
  assert.match(secret, /^imago_sk_/);
  await shot('keys');
  await page.reload();
  await page.waitForSelector('#list table');
  assert.ok(!(await page.content()).includes(secret), 'the secret is not shown again');
  const row = page.locator('tr', { hasText: 'browser-test' });
  assert.equal(await row.count(), 1);
  assert.ok((await row.textContent()).includes(secret.slice(-4)));
  let v = await fetch(`${base}/v1/validate`, { method: 'POST', headers: { 'api-secret': secret } }).then((r) => r.json());
  assert.equal(v.valid, true);

  step('revoke it: the key stops working at once');
  await row.getByRole('button', { name: 'Revoke browser-test' }).click();
  await page.waitForSelector('tr:has-text("browser-test")', { state: 'detached' });
  v = await fetch(`${base}/v1/validate`, { method: 'POST', headers: { 'api-secret': secret } }).then((r) => r.json());
  assert.equal(v.valid, false);

  step('approve a device code at /device');
  const dc = await fetch(`${base}/v1/cli/device/code`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ hostname: 'browser-box' }) }).then((r) => r.json());
  const poll = () => fetch(`${base}/v1/cli/device/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: dc.device_code }) }).then((r) => r.json());
  assert.equal((await poll()).error.code, 'authorization_pending');
  await page.goto(`${base}/device`);
  await page.fill('#user-code', dc.user_code.toLowerCase());
  await shot('device');
  await page.press('#user-code', 'Enter');
  await page.waitForSelector('#msg.ok');
  assert.match(await page.textContent('#msg'), /cli@browser-box/);
  await new Promise((r) => setTimeout(r, 5200));
  const tok = await poll();
  assert.match(tok.data.api_secret, /^imago_sk_/);
  assert.equal(tok.data.alias, 'cli@browser-box');
  await page.goto(`${base}/keys`);
  await page.waitForSelector('tr:has-text("cli@browser-box") .badge.device');

  step('create an agent from a photo and watch it become ready');
  await page.goto(`${base}/studio`);
  await page.waitForSelector('#cost strong');
  await page.fill('#name', 'Browser Ada');
  await page.fill('#prompt', 'A cheerful guide.');
  await page.setInputFiles('#photo', face);
  await page.waitForSelector('#face-msg.ok', { timeout: 60000 });
  await page.click('#create button[type=submit]');
  await page.waitForSelector('#progress progress');
  await shot('agents-generating');
  await page.waitForSelector('#generation-done', { timeout: 240000 });
  assert.equal(await page.textContent('#generation-done'), 'Ready.');
  await page.goto(`${base}/agents`);
  await page.waitForSelector('#list a:has-text("Browser Ada")');
  await shot('agents');

  step('the agent page: detail, prompt edit, dynamics and the live section');
  await page.click('#list a:has-text("Browser Ada")');
  await page.waitForSelector('#status');
  assert.match(await page.textContent('#status'), /ready|success/);
  await page.fill('#prompt', 'A calm guide.');
  await page.click('#prompt-form button');
  await page.waitForSelector('#msg.ok');
  await page.waitForSelector('#dynamics button');
  await page.waitForSelector('#live form');
  await shot('agent');

  step('start the live viewer on the agent page and make it speak');
  await page.focus('#start-viewer');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#viewer-frame');
  const viewer = await until('the viewer frame', async () => page.frame({ url: /\/embed\// }));
  const stats = () => viewer.evaluate(() => (window.imagoViewer ? { ...window.imagoViewer, events: window.imagoViewer.events.slice() } : {}));
  await until('the viewer to be live', async () => (await stats()).state === 'live');
  await until('frames drawn', async () => (await stats()).framesDrawn > 20);
  const canvasHash = () => viewer.evaluate(() => {
    const c = document.getElementById('screen');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let h = 0;
    for (let i = 0; i < d.length; i += 7) h = (h * 31 + d[i]) >>> 0;
    return h;
  });
  const idle = new Set();
  for (let i = 0; i < 15; i++) { idle.add(await canvasHash()); await sleep(200); }
  assert.ok(idle.size >= 3, `the picture should change while idle (saw ${idle.size} distinct pictures in 3 s)`);
  const before = await stats();
  await page.fill('#say', 'Hello from the dashboard.');
  await page.press('#say', 'Enter');
  await page.waitForSelector('#live-msg.ok:has-text("Delivered to 1 room")');
  await until('speech.started', async () => (await stats()).events.includes('speech.started'));
  const talking = new Set();
  for (let i = 0; i < 10; i++) { talking.add(await canvasHash()); await sleep(150); }
  await shot('agent-live-speaking');
  await until('speaking audio chunks', async () => (await stats()).speakingChunks > before.speakingChunks + 10);
  await until('playback_finished', async () => (await stats()).events.includes('playback_finished'), 60000);
  const spoke = await stats();
  assert.ok(talking.size >= 3, `the picture should change while speaking (saw ${talking.size})`);
  assert.ok(spoke.audioPlayed > 24000, `the AudioWorklet should have played the speech (played ${spoke.audioPlayed} samples)`);
  assert.ok(spoke.framesDrawn > before.framesDrawn + 20, 'frames kept coming while it spoke');
  assert.equal(spoke.lastError, null, `viewer error: ${spoke.lastError}`);

  step('add context and a gesture reach the same room; stopping the viewer ends the session');
  await page.fill('#say', 'The visitor is called Ada.');
  await page.click('#context');
  await page.waitForSelector('#live-msg.ok:has-text("Delivered to 1 room")');
  const roomsLive = await page.evaluate(() => fetch('/dashboard/api/v1/rooms').then((r) => r.json()));
  assert.equal(roomsLive.data.length, 1, JSON.stringify(roomsLive));
  assert.equal(roomsLive.data[0].context_items, 1, JSON.stringify(roomsLive));
  await page.click('button:has-text("mini wave hello")');
  await page.waitForSelector('#live-msg.ok:has-text("dynamics are not enabled")');
  await page.click('#stop-viewer');
  await page.waitForSelector('#live-msg.ok:has-text("Viewer stopped")');
  const roomsAfter = await page.evaluate(() => fetch('/dashboard/api/v1/rooms').then((r) => r.json()));
  assert.equal(roomsAfter.data.length, 0, JSON.stringify(roomsAfter));

  step("the agent page lists the agent's own session, linked to its transcript");
  await page.reload();
  await page.waitForSelector('#agent-session-list li');
  assert.equal(await page.locator('#agent-session-list li').count(), 1);
  assert.match(await page.textContent('#agent-session-list'), /ended \(terminated\)/);
  await page.click('#agent-sessions details.curl-box summary');
  assert.match(await page.textContent('#agent-sessions pre.curl'), /curl -s '.*\/v1\/sessions\?agent_code=.*' \\\n  -H "api-secret: \$IMAGO_API_SECRET"/);
  await shot('agent-with-session');
  await page.click('#agent-session-list a:has-text("transcript")');
  await page.waitForURL(/\/sessions\?id=/);
  await page.waitForSelector('#transcript');
  assert.match(await page.textContent('#transcript'), /Hello from the dashboard\./);
  await page.goBack();

  step('the other pages render without script errors');
  for (const [path, ready, name] of [
    ['/', '#stats .card', 'overview'],
    ['/credits', '#plot svg', 'credits'],
    ['/speech', '#axes input', 'speech'],
    ['/webhooks', '#list', 'webhooks'],
    ['/account', '#members li', 'account'],
  ]) {
    await page.goto(base + path);
    await page.waitForSelector(ready);
    await shot(name);
  }
  const bars = await page.goto(`${base}/credits`).then(() => page.waitForSelector('#plot svg')).then(() => page.locator('#plot rect').count());
  assert.equal(bars, 30);

  step('the header reaches every page: one row at 1280x800, a compact menu at 390x844');
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${base}/agents`);
  await page.waitForSelector('#account-toggle');
  const links = async () => page.$$eval('header.top a[href]', (as) => as.map((a) => a.getAttribute('href')));
  const every = ['/', '/agents', '/studio', '/rooms', '/sessions', '/video', '/speech', '/usage', '/docs/api', '/account', '/credits', '/keys', '/webhooks'];
  const hrefs = new Set(await links());
  for (const h of every) assert.ok(hrefs.has(h), `the header links ${h}`);
  const desk = await page.evaluate(() => {
    const nav = [...document.querySelectorAll('header.top nav li')].map((e) => e.getBoundingClientRect());
    const all = [...nav, ...[...document.querySelectorAll('header.top .brand, #account-toggle')].map((e) => e.getBoundingClientRect())];
    const h = document.querySelector('header.top').getBoundingClientRect();
    return { height: h.height, tops: new Set(nav.map((r) => Math.round(r.top))).size, right: Math.max(...all.map((r) => r.right)), width: document.documentElement.scrollWidth };
  });
  assert.ok(desk.height < 70, `one header row at 1280 (height ${desk.height})`);
  assert.ok(desk.right <= 1280 && desk.width <= 1280, `nothing overflows at 1280 (${JSON.stringify(desk)})`);
  assert.equal(desk.tops, 1, `the bar's links share one line (${JSON.stringify(desk)})`);
  assert.equal(await page.isVisible('#menu-toggle'), false);
  assert.equal(await page.isVisible('#account-menu a[href="/keys"]'), false);
  await page.click('#account-toggle');
  await page.click('#account-menu a[href="/keys"]');
  await page.waitForURL(`${base}/keys`);
  assert.equal(await page.getAttribute('#account-menu a[href="/keys"]', 'aria-current'), 'page');
  for (const h of every.filter((x) => x !== '/docs/api')) {
    const res = await page.goto(base + h);
    assert.equal(res.status(), 200, h);
    await page.waitForSelector('#account-toggle');
    assert.equal(await page.$eval('header.top [aria-current=page]', (a) => a.getAttribute('href')), h, `the header marks ${h}`);
  }
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${base}/sessions`);
  await page.waitForSelector('#menu-toggle');
  const closed = await page.evaluate(() => ({ h: document.querySelector('header.top').getBoundingClientRect().height, w: document.documentElement.scrollWidth }));
  assert.ok(closed.h < 80 && closed.w <= 390, `a compact header on a phone (${JSON.stringify(closed)})`);
  assert.equal(await page.isVisible('header.top nav a[href="/video"]'), false);
  await shot('header-phone');
  await page.click('#menu-toggle');
  assert.equal(await page.getAttribute('#menu-toggle', 'aria-expanded'), 'true');
  for (const h of every) assert.ok(await page.isVisible(`header.top a[href="${h}"]`), `${h} in the phone menu`);
  assert.ok(await page.isVisible('#sign-out'));
  assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390, 'the open menu fits the phone');
  await shot('header-phone-menu');
  await page.keyboard.press('Escape');
  assert.equal(await page.isVisible('header.top nav a[href="/video"]'), false);
  await page.click('#menu-toggle');
  await page.click('header.top nav a[href="/video"]');
  await page.waitForURL(`${base}/video`);
  await page.setViewportSize({ width: 1280, height: 900 });

  step('speech playground plays synthesized audio');
  await page.goto(`${base}/speech`);
  await page.waitForSelector('#voice option', { state: 'attached' });
  await page.click('#tts button[type=submit]');
  await page.waitForSelector('#player:not([hidden])', { timeout: 60000 });

  step('without JavaScript the sign-in form posts: no password in the URL, and it signs in');
  {
    const nojs = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    const p2 = await nojs.newPage();
    const seen = [];
    p2.on('request', (r) => seen.push(r.method() + ' ' + r.url()));
    await p2.goto(`${base}/sign-in`);
    await p2.fill('#email', email);
    await p2.fill('#password', 'not the password');
    await p2.press('#password', 'Enter');
    await p2.waitForSelector('.msg.error');
    assert.match(await p2.textContent('.msg.error'), /Wrong email or password/);
    await p2.goto(`${base}/sign-in`);
    await p2.fill('#email', email);
    await p2.fill('#password', password);
    await p2.click('#sign-in button[type=submit]');
    await p2.waitForURL(`${base}/`);
    assert.ok(seen.every((u) => !u.includes('password')), 'no URL carries the password: ' + seen.join(', '));
    assert.ok(seen.some((u) => u === `POST ${base}/sign-in`), 'the form posted');
    const c2 = (await nojs.cookies()).find((c) => c.name === 'imago_session');
    assert.ok(c2 && c2.httpOnly, 'signed in without JavaScript');
    await nojs.close();
  }

  step('sign out ends the session');
  await page.click('#account-toggle');
  await page.click('#sign-out');
  await page.waitForURL(/\/sign-in/);
  const after = await page.evaluate(() => fetch('/dashboard/api/session').then((r) => r.status));
  assert.equal(after, 401);

  assert.deepEqual(errors, [], 'no uncaught script errors');
  console.log('dashboard browser test: all checks passed');
} finally {
  await browser.close();
}

// An embed token kept to one site (docs/embed.md, "Keeping it to your site") in Debian's chromium
// (playwright-core) against a real imagod started by tests/api/embed_site_browser_test.cpp, which
// passes IMAGO_URL, API_SECRET and AGENT_CODE (a ready agent). Two static pages on two other
// loopback ports: the shop, whose origin the token names, and another site with the same snippet.
// The shop's frame plays (its canvas shows a picture, frames keep coming); the other site gets no
// viewer (the browser refuses the frame: frame-ancestors), and its own script's WebSocket with
// the token is refused by imagod, which starts no room for either. IMAGO_SCREENSHOT_DIR, when set,
// receives PNGs of both pages.
import assert from 'node:assert/strict';
import http from 'node:http';
import { chromium } from 'playwright-core';

const base = process.env.IMAGO_URL;
const secret = process.env.API_SECRET;
const code = process.env.AGENT_CODE;
const shots = process.env.IMAGO_SCREENSHOT_DIR;
assert.ok(base && secret && code, 'IMAGO_URL, API_SECRET and AGENT_CODE are required');

const step = (name) => console.log(`- ${name}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, fn, ms = 30000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await sleep(100);
  }
}
const api = (method, path, body) => fetch(base + path, {
  method, headers: { 'api-secret': secret, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined,
}).then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) }));

// A static site on its own loopback port; `html()` is its one page.
async function site(html) {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html());
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, origin: `http://127.0.0.1:${server.address().port}` };
}
const page = (title, body) => `<!doctype html><meta charset="utf-8"><title>${title}</title><h1>${title}</h1>${body}`;

const servers = [];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--autoplay-policy=no-user-gesture-required', '--mute-audio'],
});
try {
  // The shop's port first: the token names its origin.
  let snippet = '';
  const shop = await site(() => page('The shop', snippet));
  servers.push(shop.server);

  step('a token for the shop, and the snippet the dashboard gives for it');
  const bad = await api('POST', '/v1/embed-tokens/request', { agent_id: code, fingerprint: 'shop-visitor', origin: 'shop.example' });
  assert.equal(bad.status, 400, JSON.stringify(bad.body));
  assert.equal(bad.body.error.code, 'VALIDATION_ERROR');
  const minted = await api('POST', '/v1/embed-tokens/request', { agent_id: code, fingerprint: 'shop-visitor', origin: shop.origin });
  assert.equal(minted.status, 200, JSON.stringify(minted.body));
  const token = minted.body.data.token;
  const src = (room) => `${base}/embed/${encodeURIComponent(code)}?origin=${encodeURIComponent(shop.origin)}#token=${encodeURIComponent(token)}&room=${room}`;
  snippet = `<iframe src="${src('site-shop')}" width="640" height="440" style="border:0;max-width:100%" allow="autoplay; microphone; camera; fullscreen" title="Talk with ${code}"></iframe>`;

  // The other site: the same snippet (copied from the shop), the viewer without ?origin= (the
  // restriction stripped from the address), and its own script using the token directly.
  const wsUrl = `${base.replace(/^http/, 'ws')}/v1/runtime/rooms/site-other-ws?agent_code=${encodeURIComponent(code)}`;
  const otherPage = page('Another site',
    `<iframe id="copied" src="${src('site-other')}" width="640" height="440" allow="autoplay; fullscreen"></iframe>` +
    `<iframe id="stripped" src="${base}/embed/${encodeURIComponent(code)}#token=${encodeURIComponent(token)}&room=site-stripped" width="640" height="440" allow="autoplay; fullscreen"></iframe>` +
    `<p id="ws">connecting</p><script>
      const ws = new WebSocket(${JSON.stringify(wsUrl)}, ['imago.v1', 'bearer.' + ${JSON.stringify(token)}]);
      ws.onopen = () => { document.getElementById('ws').textContent = 'open'; };
      ws.onclose = () => { if (document.getElementById('ws').textContent !== 'open') document.getElementById('ws').textContent = 'refused'; };
    </script>`);
  const other = await site(() => otherPage);
  servers.push(other.server);

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });

  step('on the shop the snippet plays: the frame is live and its canvas shows a picture');
  const sp = await context.newPage();
  const shopErrors = [];
  sp.on('pageerror', (e) => shopErrors.push(String(e)));
  await sp.goto(shop.origin + '/');
  const framed = await until('the framed viewer', async () => sp.frame({ url: /\/embed\// }));
  const stats = () => framed.evaluate(() => ({ ...window.imagoViewer, events: undefined }));
  await until('the framed viewer is live', async () => (await stats()).state === 'live');
  await until('frames drawn', async () => (await stats()).framesDrawn > 10);
  const pic = await framed.evaluate(() => {
    const c = document.getElementById('screen');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let sum = 0, sq = 0, n = 0;
    for (let i = 0; i < d.length; i += 28) { sum += d[i]; sq += d[i] * d[i]; n++; }
    const mean = sum / n;
    return { sd: Math.sqrt(sq / n - mean * mean), w: c.width };
  });
  assert.ok(pic.sd > 5 && pic.w > 0, `a picture in the shop's frame (${JSON.stringify(pic)})`);
  const drawn = (await stats()).framesDrawn;
  await until('frames keep coming', async () => (await stats()).framesDrawn > drawn + 10);
  if (shots) await sp.screenshot({ path: `${shots}/embed-site-shop.png` });
  assert.deepEqual(shopErrors, []);

  step('on another site: no viewer in the copied frame, the stripped one and the script are refused');
  const op = await context.newPage();
  await op.goto(other.origin + '/');
  await until('the script\'s WebSocket refused', async () => (await op.textContent('#ws')) === 'refused');
  const stripped = await until('the stripped frame', async () => op.frame({ url: /\/embed\/[^?]*#/ }));
  await until('the stripped viewer tried', async () => (await stripped.evaluate(() => window.imagoViewer.connects)) >= 1);
  await sleep(1500);  // time for a join that would have worked to start drawing
  const st = await stripped.evaluate(() => ({ ...window.imagoViewer, events: undefined }));
  assert.notEqual(st.state, 'live', JSON.stringify(st));
  assert.equal(st.framesDrawn, 0, JSON.stringify(st));
  // The copied frame: the browser refused to show imagod's page in it (frame-ancestors), so no
  // viewer script runs there.
  const copied = op.frames().find((f) => f.url().includes('site-other') || f.parentFrame() && f.name() === 'copied');
  const viewerInCopy = copied ? await copied.evaluate(() => typeof window.imagoViewer).catch(() => 'none') : 'none';
  assert.notEqual(viewerInCopy, 'object', 'the copied snippet must not run the viewer on another site');
  if (shots) await op.screenshot({ path: `${shots}/embed-site-other.png` });

  step('imagod started the shop\'s room only');
  const rooms = await api('GET', '/v1/rooms');
  const ids = rooms.body.data.map((r) => r.room_id).sort();
  assert.deepEqual(ids, ['site-shop'], JSON.stringify(rooms.body));
  await context.close();
  console.log('embed site browser test: all checks passed');
} finally {
  await browser.close();
  for (const s of servers) s.close();
}

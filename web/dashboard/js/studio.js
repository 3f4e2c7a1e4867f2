// The agent studio: a photo cropped to the agent's frame with the face the service finds in it
// (POST /v1/studio/face-check, free), a voice picker with previews (POST /v1/studio/preview), persona
// templates, the agent's own knowledge, and the price (GET /v1/pricing) shown before anything is
// charged.
import { api } from './api.js';
import { $, el, frame, say, errorText, curlBox } from './ui.js';
import { PERSONAS, personaPrompt } from './personas.js';

await frame('/studio');

const OUT_LONG_SIDE = 1024; // pixels of the cropped picture sent to the service
const ASPECTS = { '16:9': 16 / 9, '9:16': 9 / 16, '1:1': 1 };
const state = {
  img: null, // the decoded photo
  cx: 0, cy: 0, zoom: 1, // crop centre in photo pixels, zoom >= 1
  face: null, // the full photo's face box (photo pixels), to centre on
  check: { state: 'none' }, // none | checking | found | refused | error
  checkSeq: 0,
  price: null, balance: null,
  knowledge: [], // [{title, text} | {title, file}]
  busy: false,
};

// ---------- pricing and balance ----------
async function loadPrice() {
  try {
    const [p, c] = await Promise.all([api('GET', '/v1/pricing'), api('GET', '/v2/credit-summaries')]);
    state.price = p.data.agent_generation.by_model;
    state.balance = c.data.balance;
  } catch (e) { say('#msg', errorText(e), 'error'); }
  update();
}

// ---------- the crop ----------
function cropRect() {
  const { img } = state;
  const a = ASPECTS[$('#aspect').value];
  let w = img.naturalWidth, h = img.naturalHeight;
  if (w / h > a) w = h * a; else h = w / a;
  w /= state.zoom; h /= state.zoom;
  const x = Math.min(Math.max(state.cx - w / 2, 0), img.naturalWidth - w);
  const y = Math.min(Math.max(state.cy - h / 2, 0), img.naturalHeight - h);
  state.cx = x + w / 2; state.cy = y + h / 2;
  return { x, y, w, h };
}

function draw() {
  const c = $('#crop');
  const a = ASPECTS[$('#aspect').value];
  const W = a >= 1 ? OUT_LONG_SIDE : Math.round(OUT_LONG_SIDE * a);
  const H = a >= 1 ? Math.round(OUT_LONG_SIDE / a) : OUT_LONG_SIDE;
  if (c.width !== W || c.height !== H) { c.width = W; c.height = H; }
  $('#crop-frame').style.aspectRatio = `${W} / ${H}`;
  $('#crop-frame').style.setProperty('--ar', String(W / H));
  const r = cropRect();
  const g = c.getContext('2d');
  g.fillStyle = '#000';
  g.fillRect(0, 0, W, H);
  g.drawImage(state.img, r.x, r.y, r.w, r.h, 0, 0, W, H);
  $('#zoom-out').textContent = `${Number(state.zoom).toFixed(1)}×`;
}

function showFace(box, width, height) {
  const b = $('#face-box');
  if (!box) { b.hidden = true; return; }
  Object.assign(b.style, {
    left: `${(100 * box.x) / width}%`, top: `${(100 * box.y) / height}%`,
    width: `${(100 * box.width) / width}%`, height: `${(100 * box.height) / height}%`,
  });
  b.hidden = false;
}

let checkTimer = null;
function changed() {
  draw();
  $('#face-box').hidden = true;
  state.check = { state: 'checking' };
  say('#face-msg', 'Looking for the face…', 'info');
  update();
  clearTimeout(checkTimer);
  checkTimer = setTimeout(checkCrop, 350);
}

// Asks the service whether the crop, as it would be sent, has a face. Only the newest answer counts.
async function checkCrop() {
  const seq = ++state.checkSeq;
  const image = $('#crop').toDataURL('image/jpeg', 0.92);
  try {
    const r = await api('POST', '/v1/studio/face-check', { image });
    if (seq !== state.checkSeq) return;
    const d = r.data;
    if (d.face_found) {
      state.check = { state: 'found', image };
      showFace(d.face, d.image.width, d.image.height);
      say('#face-msg', 'Face found: the green box is what the agent will animate.', 'ok');
    } else {
      state.check = { state: 'refused', reason: d.reason };
      showFace(null);
      say('#face-msg', `This picture would be refused: ${d.reason}. Nothing has been charged. Choose another photo or move the crop onto a face.`, 'error');
    }
  } catch (e) {
    if (seq !== state.checkSeq) return;
    state.check = { state: 'error' };
    say('#face-msg', `The face check failed: ${errorText(e)}`, 'error');
  }
  update();
}

// A smaller copy of the whole photo for the first face check (to centre the crop on the face).
function scaledPhoto(max = 1600) {
  const { img } = state;
  const s = Math.min(1, max / Math.max(img.naturalWidth, img.naturalHeight));
  const c = el('canvas', { width: Math.round(img.naturalWidth * s), height: Math.round(img.naturalHeight * s) });
  c.getContext('2d').drawImage(img, 0, 0, c.width, c.height);
  return { url: c.toDataURL('image/jpeg', 0.9), scale: s };
}

function centreOnFace() {
  const { img, face } = state;
  $('#recenter').hidden = !face;
  if (!face) return;
  state.cx = face.x + face.width / 2;
  state.cy = face.y + face.height / 2;
  // The face about two fifths of the frame's height, as the builder frames it.
  const a = ASPECTS[$('#aspect').value];
  const fullH = img.naturalWidth / img.naturalHeight > a ? img.naturalHeight : img.naturalWidth / a;
  state.zoom = Math.min(4, Math.max(1, (0.4 * fullH) / face.height));
  $('#zoom').value = state.zoom;
}

async function loadPhoto(file) {
  state.face = null;
  $('#recenter').hidden = true;
  state.checkSeq++;
  if (!file) {
    state.img = null;
    state.check = { state: 'none' };
    $('#crop-area').hidden = true;
    say('#face-msg', '');
    update();
    return;
  }
  const img = new Image();
  img.src = URL.createObjectURL(file);
  try { await img.decode(); } catch {
    state.img = null;
    state.check = { state: 'error' };
    $('#crop-area').hidden = true;
    say('#face-msg', 'This file could not be read as a picture (JPEG, PNG, WebP or GIF).', 'error');
    update();
    return;
  }
  state.img = img;
  state.zoom = 1;
  state.cx = img.naturalWidth / 2;
  state.cy = img.naturalHeight / 2;
  $('#zoom').value = 1;
  $('#crop-area').hidden = false;
  draw();
  state.check = { state: 'checking' };
  say('#face-msg', 'Looking for the face…', 'info');
  update();
  // The whole photo first: a face there becomes the crop's centre.
  const seq = ++state.checkSeq;
  try {
    const { url, scale } = scaledPhoto();
    const r = await api('POST', '/v1/studio/face-check', { image: url });
    if (seq !== state.checkSeq) return;
    if (r.data.face_found) {
      const f = r.data.face;
      state.face = { x: f.x / scale, y: f.y / scale, width: f.width / scale, height: f.height / scale };
      centreOnFace();
    }
  } catch { /* the crop's own check reports problems */ }
  if (seq === state.checkSeq) changed();
}

function pan(dxScreen, dyScreen) {
  const r = cropRect();
  const k = r.w / $('#crop').clientWidth;
  state.cx -= dxScreen * k;
  state.cy -= dyScreen * k;
  changed();
}

function setupCrop() {
  const c = $('#crop');
  let drag = null;
  c.addEventListener('pointerdown', (e) => { drag = { x: e.clientX, y: e.clientY }; c.setPointerCapture(e.pointerId); });
  c.addEventListener('pointermove', (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    drag = { x: e.clientX, y: e.clientY };
    const r = cropRect();
    const k = r.w / c.clientWidth;
    state.cx -= dx * k; state.cy -= dy * k;
    draw();
  });
  const end = () => { if (drag) { drag = null; changed(); } };
  c.addEventListener('pointerup', end);
  c.addEventListener('pointercancel', end);
  c.addEventListener('keydown', (e) => {
    const step = 20;
    const moves = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
    if (moves[e.key]) { e.preventDefault(); pan(...moves[e.key]); }
    if (e.key === '+' || e.key === '=') { e.preventDefault(); setZoom(state.zoom + 0.1); }
    if (e.key === '-') { e.preventDefault(); setZoom(state.zoom - 0.1); }
  });
  $('#zoom').addEventListener('input', () => { state.zoom = Number($('#zoom').value); changed(); });
  $('#recenter').addEventListener('click', () => { centreOnFace(); changed(); });
  $('#aspect').addEventListener('change', () => { if (state.img) { centreOnFace(); changed(); } });
  $('#photo').addEventListener('change', () => loadPhoto($('#photo').files[0]));
}

function setZoom(z) {
  state.zoom = Math.min(4, Math.max(1, z));
  $('#zoom').value = state.zoom;
  changed();
}

// ---------- voices ----------
const sliders = {};
const previews = new Map(); // settings key -> {url, blob} of the WAV

function axesValue() {
  return Object.fromEntries(Object.entries(sliders).map(([k, s]) => [k, Number(s.value)]));
}
const tuned = () => Object.values(sliders).some((s) => Number(s.value) !== 0);
const chosenVoice = () => (document.querySelector('input[name=voice]:checked') || {}).value || '';

async function preview(voice, axes, button) {
  const name = $('#name').value.trim();
  const text = name ? `Hello, I'm ${name}. It is lovely to meet you.` : 'Hello! It is lovely to meet you. How can I help today?';
  const key = JSON.stringify([voice, axes, text]);
  const player = $('#player');
  try {
    if (button) button.disabled = true;
    say('#voice-msg', `Making a preview of ${voice}…`, 'info');
    if (!previews.has(key)) {
      const res = await api('POST', '/v1/studio/preview', { base_voice: voice, axes, text }, { raw: true });
      const blob = await res.blob();
      previews.set(key, { url: URL.createObjectURL(blob), blob });
    }
    player.src = previews.get(key).url;
    // What the browser tests measure (the page's CSP keeps them from fetching blob: URLs).
    window.imagoStudio = { preview: previews.get(key).blob, voice };
    player.hidden = false;
    player.dataset.voice = voice;
    await player.play().catch(() => {});
    say('#voice-msg', `Playing ${voice}${Object.values(axes).some((v) => v) ? ' (tuned)' : ''}.`, 'ok');
  } catch (e) { say('#voice-msg', errorText(e), 'error'); } finally { if (button) button.disabled = false; }
}

async function loadVoices() {
  const [voices, axes] = await Promise.all([api('GET', '/v1/voices'), api('GET', '/v1/studio/axes')]);
  const builtins = voices.voices.filter((v) => v.kind === 'builtin');
  const card = (value, title, detail, withPreview) => {
    const id = `voice-${value || 'auto'}`;
    return el('div', { class: 'voice' },
      el('input', { type: 'radio', name: 'voice', id, value, checked: value === '' }),
      el('label', { for: id }, el('strong', {}, title), el('span', { class: 'muted' }, detail)),
      withPreview ? el('button', { type: 'button', class: 'play', 'aria-label': `Preview voice ${value}`, onclick: (ev) => preview(value, axesValue(), ev.currentTarget) }, '▶ Preview') : null);
  };
  $('#voices').replaceChildren(
    card('', 'Automatic', 'fits the face in the photo', false),
    ...builtins.map((v) => card(v.id, v.id, v.description || '', true)));
  $('#axes').replaceChildren(...axes.axes.map((a) => {
    const out = el('output', { id: `axis-${a.name}-out` }, '0');
    const input = el('input', { id: `axis-${a.name}`, type: 'range', min: a.suggested_min, max: a.suggested_max, step: 0.01, value: 0, oninput: () => { out.textContent = Number(input.value).toFixed(2); update(); } });
    sliders[a.name] = input;
    return el('div', {}, el('label', { for: `axis-${a.name}` }, `${a.name} `, out), input);
  }));
}

function setupVoices() {
  $('#voices').addEventListener('change', update);
  $('#reset-axes').addEventListener('click', () => { for (const s of Object.values(sliders)) { s.value = 0; s.dispatchEvent(new Event('input')); } });
  $('#preview-tuned').addEventListener('click', (ev) => {
    const v = chosenVoice();
    if (!v) { say('#voice-msg', 'Choose a voice first: tuning applies to one of the built-in voices.', 'error'); return; }
    preview(v, axesValue(), ev.currentTarget);
  });
}

// ---------- persona ----------
function setupPersona() {
  $('#template').replaceChildren(el('option', { value: '' }, 'Choose a template…'), ...PERSONAS.map((p) => el('option', { value: p.id }, p.name)));
  const count = () => { $('#prompt-count').textContent = $('#prompt').value.length.toLocaleString(); };
  $('#template').addEventListener('change', () => {
    const p = PERSONAS.find((x) => x.id === $('#template').value);
    if (!p) return;
    if ($('#prompt').value.trim() && !confirm('Replace the prompt with this template?')) return;
    $('#prompt').value = personaPrompt(p, $('#name').value);
    count();
  });
  $('#prompt').addEventListener('input', count);
}

// ---------- knowledge (sent once the agent exists) ----------
function renderKnowledge() {
  $('#knowledge-list').replaceChildren(...state.knowledge.map((k, i) => el('li', {},
    el('span', {}, el('span', { class: 'badge' }, k.file ? 'document' : 'text'), ' ', k.title, el('span', { class: 'muted' }, ` · ${k.file ? `${Math.ceil(k.file.size / 1024)} KB` : `${k.text.length} characters`}`)),
    el('button', { type: 'button', class: 'link', 'aria-label': `Remove ${k.title}`, onclick: () => { state.knowledge.splice(i, 1); renderKnowledge(); } }, 'Remove'))));
}

function setupKnowledge() {
  $('#knowledge-add').addEventListener('click', () => {
    const text = $('#knowledge-text').value.trim();
    if (!text) { say('#knowledge-msg', 'Type some text first.', 'error'); return; }
    state.knowledge.push({ title: text.split('\n')[0].slice(0, 60), text });
    $('#knowledge-text').value = '';
    say('#knowledge-msg', 'Added: it is saved with the agent when you create it.', 'ok');
    renderKnowledge();
  });
  $('#knowledge-file').addEventListener('change', () => {
    for (const f of $('#knowledge-file').files) state.knowledge.push({ title: f.name, file: f });
    $('#knowledge-file').value = '';
    renderKnowledge();
  });
}

async function sendKnowledge(code) {
  const failed = [];
  for (const k of state.knowledge) {
    try {
      if (k.file) {
        const form = new FormData();
        form.append('file', k.file, k.file.name);
        await api('POST', `/v1/agent/${encodeURIComponent(code)}/knowledge`, form);
      } else {
        await api('POST', `/v1/agent/${encodeURIComponent(code)}/knowledge`, { text: k.text });
      }
    } catch (e) { failed.push(`${k.title}: ${errorText(e)}`); }
  }
  return failed;
}

// ---------- the price and the button ----------
function update() {
  const model = $('#model').value;
  const price = state.price ? state.price[model] : null;
  const button = $('#create-button');
  let why = '';
  if (price === null || price === undefined) why = 'Loading the price…';
  else if (state.img && state.check.state === 'checking') why = 'Checking the photo for a face…';
  else if (state.img && state.check.state !== 'found') why = 'The photo needs a face the service can find.';
  else if (state.balance !== null && state.balance < price) why = `Not enough credits: this costs ${price}, the balance is ${state.balance}.`;
  if (price !== null && price !== undefined) {
    const after = state.balance !== null ? ` Your balance is ${state.balance.toLocaleString()} credits, ${(state.balance - price).toLocaleString()} after.` : '';
    $('#cost').replaceChildren(el('strong', {}, `Creating this agent costs ${price} credits`), ` (${model} model, charged once when you press the button; refunded if the generation fails).${after}`);
    button.textContent = `Create agent · ${price} credits`;
  }
  if (!state.img && !why) why = 'No photo: a drawn avatar will be made.';
  button.disabled = state.busy || (why !== '' && why !== 'No photo: a drawn avatar will be made.');
  $('#create-why').textContent = state.busy ? '' : why;
}

// Polls at the SPEC's 5-second interval until a terminal status.
async function watch(code) {
  const bar = el('progress', { max: 1, value: 0, 'aria-label': 'Generation progress' });
  const line = el('p', {}, 'Queued…');
  $('#progress').replaceChildren(el('p', {}, 'Generating ', el('a', { href: `/agent?code=${encodeURIComponent(code)}` }, code)), bar, line);
  for (;;) {
    const d = (await api('GET', `/v1/agent/status/${encodeURIComponent(code)}`)).data;
    bar.value = d.progress ?? 0;
    line.textContent = `${d.status}: ${d.progress_msg || d.current_step || ''} (${Math.round((d.progress ?? 0) * 100)}%)`;
    if (['success', 'ready', 'failed'].includes(d.status)) {
      line.textContent = d.status === 'failed' ? `Failed: ${d.error_message}` : 'Ready.';
      line.className = d.status === 'failed' ? 'msg error' : 'msg ok';
      line.id = 'generation-done';
      if (d.status !== 'failed') $('#progress').append(el('p', {}, el('a', { class: 'button', href: `/agent?code=${encodeURIComponent(code)}` }, `Open ${d.name || code}`)));
      return;
    }
    await new Promise((res) => setTimeout(res, 5000));
  }
}

// POST /v1/agent/generate's body as the form stands (the photo is sent as a data: URI or a URL).
function createBody() {
  const body = { model: $('#model').value, aspect_ratio: $('#aspect').value };
  const name = $('#name').value.trim();
  if (name) body.name = name;
  if ($('#prompt').value.trim()) body.prompt = $('#prompt').value;
  return body;
}
$('#create-curl').replaceChildren(curlBox('POST', '/v1/agent/generate', () => {
  const body = createBody();
  if (state.img) body.image = 'https://example.com/your-photo.jpg (or a data: URI of the picture)';
  const voice = chosenVoice();
  if (voice && !tuned()) body.voice = voice;
  else if (voice) body.voice_code = 'the voice_code of POST /v1/studio/voices';
  return body;
}, 'generateAgent'));

$('#create').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  if ($('#create-button').disabled) return;
  state.busy = true;
  update();
  say('#msg', '');
  try {
    const name = $('#name').value.trim();
    const body = createBody();
    if (state.img) body.image = state.check.image;
    const voice = chosenVoice();
    if (voice && tuned()) {
      const v = await api('POST', '/v1/studio/voices', { name: `${name || 'Agent'} voice`, base_voice: voice, axes: axesValue() });
      body.voice_code = v.voice_code;
    } else if (voice) body.voice = voice;
    const r = await api('POST', '/v1/agent/generate', body);
    const failed = await sendKnowledge(r.agent_id);
    if (failed.length) say('#msg', `The agent was created, but some knowledge was not saved: ${failed.join('; ')}`, 'error');
    state.knowledge = [];
    renderKnowledge();
    loadPrice();
    await watch(r.agent_id);
  } catch (e) {
    say('#msg', errorText(e), 'error');
    $('#progress').replaceChildren();
  } finally {
    state.busy = false;
    update();
  }
});

$('#model').addEventListener('change', update);
setupCrop();
setupVoices();
setupPersona();
setupKnowledge();
update();
await Promise.all([loadPrice(), loadVoices().catch((e) => say('#voice-msg', errorText(e), 'error'))]);

import { api } from './api.js';
import { $, el, frame, say, errorText, curlBox } from './ui.js';
import { openEmbedDialog } from './embed-dialog.js';

const code = new URLSearchParams(location.search).get('code') || '';
const enc = encodeURIComponent(code);
const apiPath = (url) => { try { return new URL(url, location.href).pathname; } catch { return url; } };

async function download(url, filename) {
  const res = await api('GET', apiPath(url), undefined, { raw: true });
  const a = el('a', { href: URL.createObjectURL(await res.blob()), download: filename });
  document.body.append(a);
  a.click();
  a.remove();
}

async function renderDetail() {
  const r = await api('GET', `/v1/agent/status/${enc}`);
  const d = r.data;
  $('#title').textContent = d.name || code;
  if (document.activeElement !== $('#prompt')) $('#prompt').value = d.system_prompt || '';
  const done = ['success', 'ready'].includes(d.status);
  $('#detail').replaceChildren(...[
    el('p', {}, 'Code ', el('code', {}, code), ' · status ', el('span', { class: `badge ${d.status}`, id: 'status' }, d.status)),
    el('progress', { max: 1, value: d.progress ?? 0, 'aria-label': 'Generation progress' }),
    el('p', { class: 'muted' }, d.progress_msg || d.current_step || ''),
    d.error_message ? el('p', { class: 'msg error' }, d.error_message) : null,
    done && d.model_url ? el('button', { type: 'button', onclick: () => download(d.model_url, `${code}.imx`).catch((e) => say('#msg', errorText(e), 'error')) }, 'Download .imx model') : null,
  ].filter(Boolean));
  if (!['success', 'ready', 'failed'].includes(d.status)) setTimeout(renderDetail, 5000);
  else if (done && liveShown && !$('#viewer')) renderLive(d);  // became ready while we watched
  return d;
}

async function renderDynamics() {
  const r = await api('GET', `/v1/dynamics/${enc}`);
  const d = r.data;
  const clips = Object.entries(d.gestures || {});
  const box = $('#dynamics');
  box.replaceChildren(...[
    el('p', {}, d.url ? `Generated (${d.status}).` : d.status === 'generating' ? 'Generating…' : 'Not generated yet.'),
    el('div', { class: 'row' },
      el('button', { type: 'button', onclick: () => act(() => api('POST', '/v1/dynamics/generate', { agent_id: code }), 'Dynamics generation started (250 credits).') }, d.url ? 'Regenerate (250 credits)' : 'Generate (250 credits)'),
      el('button', { type: 'button', disabled: !d.url, onclick: () => act(() => api('PUT', `/v1/dynamics/${enc}`, { dynamics: { enabled: true }, toggle_enabled: true }), 'Dynamics enabled for live sessions.') }, 'Enable'),
      el('button', { type: 'button', disabled: !d.url, onclick: () => act(() => api('PUT', `/v1/dynamics/${enc}`, { dynamics: { enabled: false }, toggle_enabled: false }), 'Default talking model restored.') }, 'Disable')),
    clips.length ? el('ul', {}, clips.map(([name, url]) => el('li', {}, name, ' ', el('button', { type: 'button', onclick: (ev) => preview(ev.target, url) }, `Preview ${name}`)))) : null,
    curlBox('POST', '/v1/dynamics/generate', { agent_id: code }, 'generateDynamics'),
  ].filter(Boolean));
  if (d.status === 'generating') setTimeout(renderDynamics, 5000);
}

async function preview(button, url) {
  try {
    const res = await api('GET', apiPath(url), undefined, { raw: true });
    const v = el('video', { controls: true, autoplay: true, src: URL.createObjectURL(await res.blob()), width: 320 });
    button.replaceWith(v);
  } catch (e) { say('#msg', errorText(e), 'error'); }
}

async function act(fn, ok) {
  try { await fn(); say('#msg', ok, 'ok'); await renderDynamics(); } catch (e) { say('#msg', errorText(e), 'error'); }
}

// SPEC 2.2's gesture names; trigger-dynamics plays one in the agent's running sessions.
const GESTURES = ['mini_wave_hello', 'talk_head_nod_subtle', 'blow_kiss_heart', 'laugh_react', 'idle_subtle'];

// The live viewer is the embed page (/embed/{agent_code}) in a frame. It needs an embed token in
// its URL fragment (never sent to the server), so "Start" asks for one through the member's
// session and opens a room of its own; speak, add-context and gestures then go to that room (to
// every running room of the agent before the viewer is started).
let liveRoom = null;
let liveShown = false;

function startViewer() {
  const box = $('#viewer');
  return api('POST', '/v1/embed-tokens/request', { agent_id: code, fingerprint: 'dashboard' })
    .then((r) => {
      liveRoom = 'dashboard-' + Math.random().toString(36).slice(2, 10);
      const src = `/embed/${enc}#token=${encodeURIComponent(r.data.token)}&room=${encodeURIComponent(liveRoom)}`;
      box.replaceChildren(
        el('iframe', { class: 'live', id: 'viewer-frame', src, title: `Live session with ${code}`, allow: 'autoplay; microphone; camera; fullscreen' }),
        el('div', { class: 'row' },
          el('span', { class: 'muted' }, 'Room ', el('code', {}, liveRoom)),
          el('button', { type: 'button', id: 'stop-viewer', onclick: stopViewer }, 'Stop the viewer')));
      $('#stop-viewer').focus();
      say('#live-msg', `Viewer started in room ${liveRoom}.`, 'ok');
    })
    .catch((e) => say('#live-msg', errorText(e), 'error'));
}

async function stopViewer() {
  const room = liveRoom;
  liveRoom = null;
  renderViewerIdle();
  $('#start-viewer').focus();
  // Ends the session at once instead of waiting for the server to notice the closed socket.
  try { await api('DELETE', `/v1/rooms/${encodeURIComponent(room)}`); } catch { /* already gone */ }
  say('#live-msg', 'Viewer stopped.', 'ok');
}

function renderViewerIdle() {
  $('#viewer').replaceChildren(
    el('p', { class: 'muted' }, 'Starting the viewer opens a live session (billed per minute while it runs).'),
    el('button', { type: 'button', class: 'primary', id: 'start-viewer', onclick: startViewer }, 'Start the live viewer'));
}

function renderLive(agent) {
  const box = $('#live');
  liveShown = true;
  const ready = ['success', 'ready'].includes(agent.status);
  $('#embed').disabled = !ready;
  $('#embed').title = ready ? '' : 'Once the agent is ready';
  if (!ready) {
    box.replaceChildren(el('p', { class: 'muted' }, 'The live viewer opens once the agent is ready.'));
    return;
  }
  // Not a second chat box: this drives the session from outside, as the API does. Talking with the
  // agent happens in the viewer, whose captions show both.
  const speakForm = el('form', { class: 'row', id: 'speak-form' },
    el('div', { class: 'grow' },
      el('label', { for: 'say' }, 'Make the agent say, or tell it'),
      el('input', { id: 'say', type: 'text', required: true, maxlength: 2000, 'aria-describedby': 'say-hint' })),
    el('button', { type: 'submit', class: 'primary' }, 'Speak'),
    el('button', { type: 'button', id: 'context', onclick: () => send('add-context', { context: $('#say').value, type: 'add_context' }) }, 'Add as context'));
  const hint = el('p', { class: 'muted', id: 'say-hint' },
    '"Speak": the agent says this text word for word (POST /v1/agent/{code}/speak). "Add as context": it knows it from now on and says nothing. ',
    'To talk with the agent, type or use the microphone in the viewer above; its captions show what both of you said.');
  speakForm.addEventListener('submit', (ev) => { ev.preventDefault(); send('speak', { message: $('#say').value }); });
  const gestures = el('div', { class: 'row', role: 'group', 'aria-label': 'Gestures' },
    GESTURES.map((g) => el('button', { type: 'button', onclick: () => send('trigger-dynamics', { action: g }) }, g.replaceAll('_', ' '))));
  // The same calls from a shell (to every running room of the agent, or one with room_id).
  const withRoom = (b) => (liveRoom ? { ...b, room_id: liveRoom } : b);
  const curls = el('div', { class: 'curls', id: 'live-curls' },
    curlBox('POST', `/v1/agent/${enc}/speak`, () => withRoom({ message: $('#say').value || 'Hello!' }), 'speak', 'Copy "Speak" as curl'),
    curlBox('POST', `/v1/agent/${enc}/add-context`, () => withRoom({ context: $('#say').value || 'The visitor is called Ada.', type: 'add_context' }), 'addContext', 'Copy "Add as context" as curl'),
    curlBox('POST', `/v1/agent/${enc}/trigger-dynamics`, () => withRoom({ action: GESTURES[0] }), 'triggerDynamics', 'Copy a gesture as curl'));
  box.replaceChildren(el('div', { id: 'viewer' }), speakForm, hint, gestures, curls, el('p', { id: 'live-msg', class: 'msg', role: 'status', hidden: true }));
  renderViewerIdle();
}

async function send(what, body) {
  try {
    const r = await api('POST', `/v1/agent/${enc}/${what}`, liveRoom ? { ...body, room_id: liveRoom } : body);
    const rooms = `Delivered to ${r.delivered_to_rooms ?? 'the'} room(s).`;
    say('#live-msg', r.animation_triggered === false ? `${rooms} No gesture played: dynamics are not enabled for this agent.` : rooms, 'ok');
  } catch (e) { say('#live-msg', errorText(e), 'error'); }
}

$('#embed').addEventListener('click', (ev) => openEmbedDialog(code, ev.currentTarget));

// The viewer says the agent's aspect ratio once it knows it: the frame takes that shape (plus its
// controls) instead of a fixed 16:9 box around a square or portrait agent.
let viewerRatio = 0;
function fitViewer() {
  const f = $('#viewer-frame');
  if (!f || !viewerRatio) return;
  // The viewer's state line and controls; on a phone also room for the captions under the picture.
  const chrome = innerWidth <= 560 ? 250 : 96;
  f.style.minHeight = '0';
  f.style.height = Math.round(Math.min(innerHeight * 0.85, f.clientWidth / viewerRatio + chrome)) + 'px';
}
window.addEventListener('message', (ev) => {
  const f = $('#viewer-frame');
  if (!f || ev.source !== f.contentWindow || ev.origin !== location.origin) return;
  const ratio = ev.data && ev.data.type === 'imago.viewer.aspect' ? Number(ev.data.ratio) : 0;
  if (ratio > 0.2 && ratio < 5) { viewerRatio = ratio; fitViewer(); }
});
window.addEventListener('resize', fitViewer);

$('#prompt-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  try { await api('POST', `/v1/agent/${enc}`, { system_prompt: $('#prompt').value }); say('#msg', 'Prompt saved.', 'ok'); }
  catch (e) { say('#msg', errorText(e), 'error'); }
});

$('#delete').addEventListener('click', async () => {
  if (!confirm(`Delete agent ${code}? This cannot be undone.`)) return;
  try { await api('DELETE', `/v1/agent/${enc}`); location.assign('/agents'); } catch (e) { say('#msg', errorText(e), 'error'); }
});

$('#prompt-form').append(curlBox('POST', `/v1/agent/${enc}`, () => ({ system_prompt: $('#prompt').value }), 'updateAgentPrompt'));
$('#delete').after(curlBox('DELETE', `/v1/agent/${enc}`, undefined, 'deleteAgent'));

await frame('/agents');
try {
  const agent = await renderDetail();
  await renderDynamics();
  renderLive(agent);
} catch (e) { say('#msg', errorText(e), 'error'); }

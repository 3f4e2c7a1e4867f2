// The agent page's settings part: what the agent was made with (voice, model, frame) and its own
// knowledge (GET/POST/DELETE /v1/agent/{code}/knowledge).
import { api } from './api.js';
import { $, el, say, errorText, when } from './ui.js';

const code = new URLSearchParams(location.search).get('code') || '';
const base = `/v1/agent/${encodeURIComponent(code)}/knowledge`;

function voiceText(v) {
  if (!v) return 'decided when the model is built';
  const how = { requested: 'chosen', voice_code: `designed voice ${v.voice_code || ''}`, matched: 'matched to the sample', face: 'fitted to the face', default: 'default' }[v.source] || v.source;
  const axes = v.axes ? Object.entries(v.axes).filter(([, x]) => x).map(([k, x]) => `${k} ${Number(x).toFixed(2)}`).join(', ') : '';
  return `${v.id} (${how}${axes ? `; ${axes}` : ''})`;
}

async function renderSettings() {
  const d = (await api('GET', `/v1/agent/${encodeURIComponent(code)}`)).data;
  const list = (await api('GET', `/v1/agents?limit=100`)).data.find((a) => a.code === code);
  const rows = [
    ['Voice', voiceText(d.voice)],
    ['Model', list ? list.model : '—'],
    ['Created', list ? when(list.created_at) : '—'],
    ['Photo', d.image_url ? 'from a photo' : d.video_url ? 'from a video' : 'drawn (no photo)'],
  ];
  $('#settings-list').replaceChildren(...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

async function renderKnowledge() {
  const r = await api('GET', base);
  $('#knowledge-usage').textContent = `${r.data.length} of ${r.limits.items} items, ${r.limits.bytes_used.toLocaleString()} of ${r.limits.bytes.toLocaleString()} characters used.`;
  $('#knowledge-list').replaceChildren(...(r.data.length ? r.data.map((k) => el('li', {},
    el('span', {}, k.title, el('span', { class: 'muted' }, ` · ${k.bytes.toLocaleString()} characters · ${when(k.created_at)}`)),
    el('button', { type: 'button', class: 'link', 'aria-label': `Delete ${k.title}`, onclick: () => remove(k) }, 'Delete')))
    : [el('li', { class: 'muted' }, 'Nothing yet: the agent knows its prompt only.')]));
}

async function remove(k) {
  try { await api('DELETE', `${base}/${encodeURIComponent(k.id)}`); say('#knowledge-msg', `Deleted ${k.title}.`, 'ok'); await renderKnowledge(); }
  catch (e) { say('#knowledge-msg', errorText(e), 'error'); }
}

$('#knowledge-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const text = $('#knowledge-text').value;
  if (!text.trim()) { say('#knowledge-msg', 'Type some text, or choose a document.', 'error'); return; }
  const body = { text };
  if ($('#knowledge-title').value.trim()) body.title = $('#knowledge-title').value.trim();
  try {
    await api('POST', base, body);
    $('#knowledge-form').reset();
    say('#knowledge-msg', 'Added. New sessions of this agent know it.', 'ok');
    await renderKnowledge();
  } catch (e) { say('#knowledge-msg', errorText(e), 'error'); }
});

$('#knowledge-file').addEventListener('change', async () => {
  const f = $('#knowledge-file').files[0];
  if (!f) return;
  const form = new FormData();
  form.append('file', f, f.name);
  try {
    await api('POST', base, form);
    say('#knowledge-msg', `Added ${f.name}. New sessions of this agent know it.`, 'ok');
    await renderKnowledge();
  } catch (e) { say('#knowledge-msg', errorText(e), 'error'); }
  $('#knowledge-file').value = '';
});

try { await Promise.all([renderSettings(), renderKnowledge()]); } catch (e) { say('#knowledge-msg', errorText(e), 'error'); }

import { api } from './api.js';
import { $, el, frame, say, errorText, when, curlBox } from './ui.js';

await frame('/speech');
const [voices, axes, designed] = await Promise.all([api('GET', '/v1/voices'), api('GET', '/v1/studio/axes'), api('GET', '/v1/studio/voices')]);
$('#voice').replaceChildren(...voices.voices.filter((v) => v.kind === 'builtin').map((v) => el('option', { value: v.id }, v.id)));
$('#language').replaceChildren(...(voices.languages || [{ code: 'en', name: 'English' }]).map((l) => el('option', { value: l.code }, `${l.name} (${l.code})`)));

$('#language').value = 'en';
const sliders = {};
$('#axes').replaceChildren(...axes.axes.map((a) => {
  const out = el('output', { id: `axis-${a.name}-out` }, '0');
  const input = el('input', { id: `axis-${a.name}`, type: 'range', min: a.min, max: a.max, step: 0.01, value: 0, oninput: () => { out.textContent = input.value; } });
  sliders[a.name] = input;
  return el('div', {}, el('label', { for: `axis-${a.name}` }, `${a.name} `, out), input, el('div', { class: 'muted' }, `suggested ${a.suggested_min} to ${a.suggested_max}`));
}));
$('#speed').addEventListener('input', () => { $('#speed-out').textContent = $('#speed').value; });
$('#reset').addEventListener('click', () => { for (const s of Object.values(sliders)) { s.value = 0; s.dispatchEvent(new Event('input')); } });
const axesValue = () => Object.fromEntries(Object.entries(sliders).map(([k, s]) => [k, Number(s.value)]));

function renderDesigned(list) {
  $('#voice-code').replaceChildren(el('option', { value: '' }, 'none'), ...list.map((v) => el('option', { value: v.voice_code }, v.name)));
  $('#voices').replaceChildren(list.length ? el('table', {},
    el('thead', {}, el('tr', {}, ['Name', 'Voice code', 'Base', 'Created', ''].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, list.map((v) => el('tr', {}, el('td', {}, v.name), el('td', {}, el('code', {}, v.voice_code)), el('td', {}, v.base_voice), el('td', {}, when(v.created_at)),
      el('td', {}, el('button', { type: 'button', class: 'danger', onclick: async () => { await api('DELETE', `/v1/studio/voices/${v.voice_code}`); renderDesigned((await api('GET', '/v1/studio/voices')).voices); } }, 'Delete'))))))
    : el('p', { class: 'muted' }, 'No designed voices yet.'));
}
renderDesigned(designed.voices);

function ttsBody() {
  const body = { text: $('#text').value, voice: $('#voice').value, language: $('#language').value, speed: Number($('#speed').value), axes: axesValue() };
  if ($('#voice-code').value) body.voice_code = $('#voice-code').value;
  return body;
}
$('#tts').append(curlBox('POST', '/v1/tts', ttsBody, 'synthesize', 'Copy as curl (add -o speech.wav)'));

$('#tts').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  say('#msg', 'Synthesizing…');
  const body = ttsBody();
  try {
    const res = await api('POST', '/v1/tts', body, { raw: true });
    const player = $('#player');
    player.src = URL.createObjectURL(await res.blob());
    player.hidden = false;
    say('#msg', 'Done.', 'ok');
    await player.play().catch(() => {});
  } catch (e) { say('#msg', errorText(e), 'error'); }
});

$('#save').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  try {
    const v = await api('POST', '/v1/studio/voices', { name: $('#voice-name').value, base_voice: $('#voice').value, axes: axesValue() });
    say('#msg', `Saved. Voice code ${v.voice_code}`, 'ok');
    $('#voice-name').value = '';
    renderDesigned((await api('GET', '/v1/studio/voices')).voices);
  } catch (e) { say('#msg', errorText(e), 'error'); }
});

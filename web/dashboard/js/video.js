// Talking videos (POST /v1/video/generate): an agent speaks a text or an audio file; the job is
// followed until the MP4 is ready, then previewed and offered for download.
import { api } from './api.js';
import { $, el, frame, say, errorText, copyButton } from './ui.js';

await frame('/video');
let rates = null;

function body(audioRef) {
  const b = { agent_code: $('#agent').value };
  if ($('#input-type').value === 'text') {
    b.input = { type: 'text', text: $('#text').value };
    if ($('#voice').value) b.input.voice = $('#voice').value;
  } else {
    b.input = { type: 'audio', audio_url: audioRef || 'file_... (the id of your upload)' };
  }
  return b;
}

// A shell line that makes the same request with the reader's own key.
function renderCurl() {
  const json = JSON.stringify(body()).replaceAll("'", "'\\''");
  const line = `curl -s -X POST ${location.origin}/v1/video/generate \\\n  -H "api-secret: $IMAGO_API_SECRET" -H 'Content-Type: application/json' \\\n  -d '${json}'`;
  $('#curl').textContent = line;
  $('#copy-curl').replaceChildren(copyButton(line, 'Copy as curl'));
}

function renderCost() {
  const opt = $('#agent').selectedOptions[0];
  if (!rates || !opt) { $('#cost').textContent = ''; return; }
  const rate = rates[opt.dataset.model] ?? rates.essence;
  let estimate = '';
  if ($('#input-type').value === 'text') {
    // About 2.6 words a second of speech, plus 0.4 s of idle at the end.
    const words = $('#text').value.trim().split(/\s+/).filter(Boolean).length;
    const minutes = Math.max(1, Math.ceil((words / 2.6 + 0.4) / 60));
    estimate = ` This text makes about ${Math.round(words / 2.6 + 0.4)} s of video: ${minutes * rate} credits.`;
  }
  $('#cost').replaceChildren(el('strong', {}, `${rate} credits per started minute of video`), ` (${opt.dataset.model} model, at least one minute, charged when the video is queued, refunded if it fails).${estimate}`);
  $('#text-count').textContent = $('#text').value.length.toLocaleString();
}

async function watch(job) {
  const bar = el('progress', { 'aria-label': 'Rendering progress' });
  const line = el('p', {}, `Rendering ${job.duration ? `${job.duration.toFixed(1)} s of video` : 'the video'} (${job.credits} credits)…`);
  $('#progress').replaceChildren(bar, line);
  for (let i = 0; i < 600; i++) {
    const v = await api('GET', `/v1/video/${encodeURIComponent(job.job_id)}`);
    if (v.status === 'failed') {
      $('#progress').replaceChildren(el('p', { class: 'msg error', id: 'video-done' }, `Failed: ${v.error_message} (the credits were refunded)`));
      return;
    }
    if (v.status === 'completed') {
      const res = await api('GET', new URL(v.video_url).pathname, undefined, { raw: true });
      const url = URL.createObjectURL(await res.blob());
      $('#progress').replaceChildren(el('p', { class: 'msg ok', id: 'video-done' }, 'Ready.'));
      $('#result').replaceChildren(
        el('video', { id: 'preview', src: url, controls: true, playsinline: true, class: 'preview' }),
        el('div', { class: 'row' }, el('a', { class: 'button', href: url, download: `${v.agent_code}-${v.job_id}.mp4` }, 'Download MP4')));
      return;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

$('#input-type').addEventListener('change', () => {
  const text = $('#input-type').value === 'text';
  $('#text-input').hidden = !text;
  $('#audio-input').hidden = text;
  renderCost();
  renderCurl();
});
for (const id of ['#agent', '#text', '#voice']) {
  $(id).addEventListener('input', () => { renderCost(); renderCurl(); });
  $(id).addEventListener('change', () => { renderCost(); renderCurl(); });
}

$('#video-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  say('#msg', '');
  $('#result').replaceChildren();
  $('#make').disabled = true;
  try {
    let audioRef;
    if ($('#input-type').value === 'audio') {
      const f = $('#audio').files[0];
      if (!f) throw new Error('Choose an audio file first.');
      const form = new FormData();
      form.append('file', f, f.name);
      form.append('file_type', 'audio');
      audioRef = (await api('POST', '/v1/files/upload', form)).data.id;
    }
    const job = await api('POST', '/v1/video/generate', body(audioRef));
    await watch(job);
  } catch (e) { say('#msg', errorText(e), 'error'); } finally { $('#make').disabled = false; }
});

try {
  const [agents, voices, pricing] = await Promise.all([api('GET', '/v1/agents?limit=100&status=ready'), api('GET', '/v1/voices'), api('GET', '/v1/pricing')]);
  rates = pricing.data.talking_video.rates;
  $('#agent').replaceChildren(...agents.data.map((a) => el('option', { value: a.code, 'data-model': a.model }, `${a.name} (${a.code})`)));
  const pre = new URLSearchParams(location.search).get('agent');
  if (pre) $('#agent').value = pre;
  $('#voice').append(...voices.voices.filter((v) => v.kind === 'builtin').map((v) => el('option', { value: v.id }, `${v.id} ${v.description || ''}`)));
  if (!agents.data.length) say('#msg', 'No ready agent yet: create one in the agent studio first.', 'info');
} catch (e) { say('#msg', errorText(e), 'error'); }
renderCost();
renderCurl();

import { api } from './api.js';
import { $, el, frame, when, say, errorText } from './ui.js';

const PAGE = 20;
let offset = 0;

const readAsDataUrl = (file) => new Promise((resolve, reject) => {
  const r = new FileReader();
  r.onload = () => resolve(r.result);
  r.onerror = () => reject(r.error);
  r.readAsDataURL(file);
});

async function render() {
  const status = $('#filter').value;
  const q = new URLSearchParams({ limit: PAGE, offset });
  if (status) q.set('status', status);
  try {
    const r = await api('GET', `/v1/agents?${q}`);
    const rows = r.data.map((a) => el('tr', {},
      el('td', {}, el('a', { href: `/agent?code=${encodeURIComponent(a.code)}` }, a.name || a.code)),
      el('td', {}, el('code', {}, a.code)),
      el('td', {}, el('span', { class: `badge ${a.status}` }, a.status)),
      el('td', {}, `${Math.round((a.progress ?? 0) * 100)}%`),
      el('td', {}, when(a.created_at))));
    $('#list').replaceChildren(rows.length ? el('table', {},
      el('thead', {}, el('tr', {}, ['Name', 'Code', 'Status', 'Progress', 'Created'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, rows)) : el('p', {}, 'No agents.'));
    const p = r.pagination;
    $('#page').textContent = p.total ? `${p.offset + 1}–${p.offset + r.data.length} of ${p.total}` : '';
    $('#prev').disabled = offset === 0;
    $('#next').disabled = !p.has_more;
  } catch (e) { say('#msg', errorText(e), 'error'); }
}

// Polls at the SPEC's 5-second interval until a terminal status.
async function watch(code) {
  const bar = el('progress', { max: 1, value: 0, 'aria-label': 'Generation progress' });
  const line = el('p', {}, 'Queued…');
  $('#progress').replaceChildren(el('p', {}, 'Generating ', el('a', { href: `/agent?code=${encodeURIComponent(code)}` }, code)), bar, line);
  for (;;) {
    const r = await api('GET', `/v1/agent/status/${encodeURIComponent(code)}`);
    const d = r.data;
    bar.value = d.progress ?? 0;
    line.textContent = `${d.status}: ${d.progress_msg || d.current_step || ''} (${Math.round((d.progress ?? 0) * 100)}%)`;
    if (['success', 'ready', 'failed'].includes(d.status)) {
      line.textContent = d.status === 'failed' ? `Failed: ${d.error_message}` : 'Ready.';
      line.className = d.status === 'failed' ? 'msg error' : 'msg ok';
      line.id = 'generation-done';
      await render();
      return;
    }
    await new Promise((res) => setTimeout(res, 5000));
  }
}

$('#create').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const body = { prompt: $('#prompt').value || undefined, name: $('#name').value || undefined, model: $('#model').value, aspect_ratio: $('#aspect').value };
  const file = $('#photo').files[0];
  try {
    if (file) body[file.type.startsWith('video/') ? 'video' : 'image'] = await readAsDataUrl(file);
    const r = await api('POST', '/v1/agent/generate', body);
    $('#create').reset();
    await render();
    await watch(r.agent_id);
  } catch (e) { say('#msg', errorText(e), 'error'); $('#progress').replaceChildren(); }
});

$('#filter').addEventListener('change', () => { offset = 0; render(); });
$('#prev').addEventListener('click', () => { offset = Math.max(0, offset - PAGE); render(); });
$('#next').addEventListener('click', () => { offset += PAGE; render(); });

await frame('/agents');
await render();

// Session history (GET /v1/sessions) and one session's transcript with times and its recording.
import { api } from './api.js';
import { $, el, frame, when, say, errorText, curlBox } from './ui.js';

const LIMIT = 20;
let offset = 0;

const REASONS = {
  left: 'everyone left', idle: 'nothing said for a while', absent: 'nobody joined', max_duration: 'longest duration reached',
  insufficient_balance: 'out of credits', terminated: 'ended by the owner', shutdown: 'server shut down',
};

function duration(s) {
  if (s === null || s === undefined) return '—';
  const t = Math.round(Number(s));
  const h = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), sec = t % 60;
  return h ? `${h} h ${m} min` : m ? `${m} min ${sec} s` : `${sec} s`;
}

// A transcript time: minutes and seconds since the session started.
function clock(ms) {
  const t = Math.max(0, Math.floor(Number(ms) / 1000));
  return `${Math.floor(t / 60)}:${String(t % 60).padStart(2, '0')}`;
}

// The API's recording and transcript URLs, reached through the session (same handlers).
const viaSession = (url) => { try { return '/dashboard/api' + new URL(url, location.href).pathname; } catch { return url; } };

async function renderList() {
  const r = await api('GET', `/v1/sessions?limit=${LIMIT}&offset=${offset}`);
  const p = r.pagination;
  $('#page').textContent = p.total ? `${p.offset + 1}-${p.offset + r.data.length} of ${p.total}` : '';
  $('#prev').disabled = offset === 0;
  $('#next').disabled = !p.has_more;
  const heads = ['Started', 'Agent', 'Duration', 'Minutes charged', 'Ended', 'Viewers', 'Recording', ''];
  // data-label: on a phone each row is a block and the cells name themselves (live.css).
  const cells = (...tds) => tds.map((td, i) => { if (heads[i]) td.dataset.label = heads[i]; return td; });
  $('#list').replaceChildren(r.data.length ? el('table', { class: 'stack' },
    el('thead', {}, el('tr', {}, heads.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, r.data.map((s) => el('tr', { 'data-session': s.session_id }, cells(
      el('td', { class: 'nowrap' }, when(s.started_at)),
      el('td', {}, el('a', { href: `/agent?code=${encodeURIComponent(s.agent_code)}` }, s.agent_code), el('div', { class: 'muted' }, 'room ', s.room_id)),
      el('td', { class: 'nowrap' }, duration(s.duration_seconds)),
      el('td', {}, s.minutes_charged),
      el('td', {}, s.status === 'active' ? el('span', { class: 'badge ready' }, 'running') : (REASONS[s.end_reason] || s.end_reason || '—')),
      el('td', {}, s.viewers_peak),
      el('td', {}, s.recording ? s.recording.status : '—'),
      el('td', {}, el('button', { type: 'button', 'aria-label': `Transcript of the session at ${when(s.started_at)}`, onclick: () => open(s.session_id, true) }, 'Transcript'))))))) :
    el('p', { id: 'no-sessions' }, 'No sessions yet. Start one from an agent\u2019s page (Live session).'));
}

async function open(id, focus) {
  history.replaceState(null, '', `/sessions?id=${encodeURIComponent(id)}`);
  const [s, t] = await Promise.all([
    api('GET', `/v1/sessions/${encodeURIComponent(id)}`),  // the Session itself, not wrapped in data
    api('GET', `/v1/sessions/${encodeURIComponent(id)}/transcript`).then((r) => r.data),
  ]).catch((e) => { say('#msg', errorText(e), 'error'); return []; });
  if (!s) return;
  const rec = s.recording;
  let recording;
  if (rec && rec.status === 'ready') {
    const src = viaSession(rec.url);
    recording = el('div', {},
      el('video', { class: 'recording', controls: true, preload: 'metadata', src, 'aria-label': 'Recording of the session' }),
      el('a', { href: src, download: `${s.session_id}.mp4`, id: 'recording-link' }, `Download the recording (MP4, ${(rec.bytes / 1e6).toFixed(1)} MB)`));
  } else {
    recording = el('p', { class: 'muted' }, rec ? `Recording: ${rec.status}.` : 'Not recorded (a session is recorded when it is joined with record=true or POST /v1/rooms/{room_id}/recording).');
  }
  $('#detail-title').textContent = `Session ${s.session_id}`;
  $('#detail').replaceChildren(
    el('p', {}, 'Agent ', el('a', { href: `/agent?code=${encodeURIComponent(s.agent_code)}` }, s.agent_code),
      ` · room ${s.room_id} · started ${when(s.started_at)} · ${duration(s.duration_seconds)} · ${s.minutes_charged} minute${s.minutes_charged === 1 ? '' : 's'} charged · `,
      s.status === 'active' ? 'running' : `ended: ${REASONS[s.end_reason] || s.end_reason}`),
    recording,
    curlBox('GET', `/v1/sessions/${encodeURIComponent(s.session_id)}/transcript`, undefined, 'getSessionTranscript', 'Copy the transcript request as curl'),
    el('h3', {}, 'Transcript'),
    t.length ? el('div', { class: 'table-wrap' }, el('table', { class: 'transcript', id: 'transcript' },
      el('thead', {}, el('tr', {}, ['Time', 'Who', 'What was said'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, t.map((l) => el('tr', { class: l.role },
        el('td', { class: 'time', title: `${l.start_ms} to ${l.end_ms} ms` }, clock(l.start_ms)),
        el('td', { class: 'who' }, l.role === 'user' ? 'Viewer' : 'Agent'),
        el('td', {}, l.text, l.source && l.source !== 'text' ? el('span', { class: 'muted' }, ` (${l.source})`) : null))))))
      : el('p', { class: 'muted', id: 'transcript' }, 'Nothing was said.'));
  $('#detail-card').hidden = false;
  if (focus) $('#detail-title').focus();
}

async function page(delta) {
  offset = Math.max(0, offset + delta);
  try { await renderList(); } catch (e) { say('#msg', errorText(e), 'error'); }
}

$('.pager').after(curlBox('GET', () => `/v1/sessions?limit=${LIMIT}&offset=${offset}`, undefined, 'listSessions'));
$('#prev').addEventListener('click', () => page(-LIMIT));
$('#next').addEventListener('click', () => page(LIMIT));
await frame('/sessions');
await page(0);
const wanted = new URLSearchParams(location.search).get('id');
if (wanted) await open(wanted, false);

// Live rooms (GET /v1/rooms through the session) with an End button (DELETE /v1/rooms/{room_id}).
import { api } from './api.js';
import { $, el, frame, when, say, errorText, curlBox } from './ui.js';

const TYPES = { essence_cloud: 'avatar', expression_cloud: 'avatar', voice_chat: 'voice only', camera_chat: 'camera chat' };

async function render() {
  const r = await api('GET', '/v1/rooms');
  const rooms = r.data || [];
  $('#updated').textContent = `Updated ${new Date().toLocaleTimeString()}`;
  if (!rooms.length) {
    $('#list').replaceChildren(el('p', { id: 'no-rooms' }, 'No live rooms. Start one from an agent\u2019s page (Live session), or open an embed.'));
    return;
  }
  const heads = ['Room', 'Agent', 'State', 'Started', 'Viewers', 'Minutes billed', 'Type', ''];
  // data-label: on a phone each row is a block and the cells name themselves (live.css).
  const cells = (...tds) => tds.map((td, i) => { if (heads[i]) td.dataset.label = heads[i]; return td; });
  $('#list').replaceChildren(el('table', { class: 'stack' },
    el('thead', {}, el('tr', {}, heads.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, rooms.map((m) => el('tr', { 'data-room': m.room_id }, cells(
      el('td', {}, el('code', {}, m.room_id), m.remote ? el('div', { class: 'muted' }, 'on another node') : null),
      el('td', {}, el('a', { href: `/agent?code=${encodeURIComponent(m.agent_code)}` }, m.agent_code)),
      el('td', {}, el('span', { class: `badge ${m.state === 'active' ? 'ready' : ''}` }, m.state ?? '—')),
      el('td', { class: 'nowrap' }, when(m.started_at)),
      el('td', {}, m.viewers ?? '—'),
      el('td', {}, m.billed_minutes ?? '—'),
      el('td', {}, TYPES[m.billing_type] || m.billing_type || '—'),
      el('td', {}, el('button', { type: 'button', class: 'danger', 'aria-label': `End room ${m.room_id}`, onclick: (ev) => end(m, ev.currentTarget) }, 'End'))))))));
}

async function end(m, button) {
  if (!confirm(`End room ${m.room_id}? Everyone watching is disconnected.`)) return;
  button.disabled = true;
  try {
    const r = await api('DELETE', `/v1/rooms/${encodeURIComponent(m.room_id)}`);
    say('#msg', `Room ${m.room_id} ended (${r.billed_minutes} minute${r.billed_minutes === 1 ? '' : 's'} billed).`, 'ok');
  } catch (e) {
    say('#msg', errorText(e), 'error');
  }
  await refresh();
  $('#refresh').focus();
}

async function refresh() {
  try { await render(); } catch (e) { say('#msg', errorText(e), 'error'); }
}

$('#refresh').addEventListener('click', refresh);
$('#list').after(curlBox('GET', '/v1/rooms', undefined, 'listRooms', 'Copy the list as curl'),
  curlBox('DELETE', '/v1/rooms/ROOM_ID', undefined, 'endRoom', 'Copy "End" as curl'));
await frame('/rooms');
await refresh();
setInterval(() => { if (!document.hidden) refresh(); }, 10000);

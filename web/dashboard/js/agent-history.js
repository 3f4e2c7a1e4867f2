// The agent page's history: its own live sessions (GET /v1/sessions?agent_code=) and its own
// talking videos (GET /v1/video?agent_code=), each linked to its detail (transcript and recording
// on /sessions, the MP4 download here).
import { api } from './api.js';
import { $, el, say, errorText, when, curlBox } from './ui.js';

const code = new URLSearchParams(location.search).get('code') || '';
const enc = encodeURIComponent(code);
const LIMIT = 10;

function duration(s) {
  if (s === null || s === undefined) return '—';
  const t = Math.round(Number(s));
  const m = Math.floor(t / 60), sec = t % 60;
  return m ? `${m} min ${sec} s` : `${sec} s`;
}

async function renderSessions() {
  const path = `/v1/sessions?agent_code=${enc}&limit=${LIMIT}`;
  const r = await api('GET', path);
  const more = r.pagination.total > r.data.length;
  $('#agent-sessions').replaceChildren(...[
    r.data.length ? el('ul', { class: 'history', id: 'agent-session-list' }, r.data.map((s) => el('li', { 'data-session': s.session_id },
      el('a', { href: `/sessions?id=${encodeURIComponent(s.session_id)}` }, when(s.started_at)),
      ` · ${duration(s.duration_seconds)} · ${s.minutes_charged} min charged · `,
      s.status === 'active' ? el('span', { class: 'badge ready' }, 'running') : `ended (${s.end_reason || '—'})`,
      s.recording && s.recording.status === 'ready' ? ' · recorded' : '',
      ' · ', el('a', { href: `/sessions?id=${encodeURIComponent(s.session_id)}` }, 'transcript' + (s.recording && s.recording.status === 'ready' ? ' and recording' : ''))))) :
      el('p', { class: 'muted', id: 'agent-session-list' }, 'No sessions yet: start the live viewer above, or embed the agent.'),
    more ? el('p', {}, el('a', { href: '/sessions' }, `All ${r.pagination.total} sessions`)) : null,
    curlBox('GET', path, undefined, 'listSessions')].filter(Boolean));
}

async function download(url, filename, button) {
  try {
    const res = await api('GET', new URL(url, location.href).pathname, undefined, { raw: true });
    const a = el('a', { href: URL.createObjectURL(await res.blob()), download: filename });
    document.body.append(a);
    a.click();
    a.remove();
  } catch (e) { say('#msg', errorText(e), 'error'); button.focus(); }
}

async function renderVideos() {
  const path = `/v1/video?agent_code=${enc}&limit=${LIMIT}`;
  const r = await api('GET', path);
  const state = (v) => v.status === 'completed' ? `${v.duration.toFixed(1)} s, ${v.credits} credits` : v.status === 'failed' ? `failed: ${v.error_message || ''} (refunded)` : 'rendering…';
  $('#agent-videos').replaceChildren(
    r.data.length ? el('ul', { class: 'history', id: 'agent-video-list' }, r.data.map((v) => el('li', { 'data-job': v.job_id },
      when(v.created_at), ` · ${state(v)}`,
      v.video_url ? [' · ', el('button', { type: 'button', class: 'link', onclick: (ev) => download(v.video_url, `${code}-${v.job_id}.mp4`, ev.currentTarget) }, 'Download MP4')] : null))) :
      el('p', { class: 'muted', id: 'agent-video-list' }, 'No videos yet.'),
    el('p', {}, el('a', { href: `/video?agent=${enc}` }, 'Make a talking video with this agent')),
    curlBox('GET', path, undefined, 'listVideos'));
}

try { await renderSessions(); } catch (e) { $('#agent-sessions').replaceChildren(el('p', { class: 'msg error' }, errorText(e))); }
try { await renderVideos(); } catch (e) { $('#agent-videos').replaceChildren(el('p', { class: 'msg error' }, errorText(e))); }

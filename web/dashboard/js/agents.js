// The account's agents as cards: a thumbnail of the photo, the status and what the agent cost.
import { api } from './api.js';
import { $, el, frame, curlBox, when, say, errorText } from './ui.js';

const PAGE = 20;
let offset = 0;
let prices = null;
const thumbs = new Map(); // agent code -> object URL of its photo ('' when it has none)

const apiPath = (url) => { try { return new URL(url, location.href).pathname; } catch { return url; } };

function initials(name) {
  return (name || '?').split(/\s+/).filter(Boolean).slice(0, 2).map((w) => w[0].toUpperCase()).join('');
}

// The photo a file URL points at, through the member's session (downloads need the owner).
async function thumbnail(code, box, name) {
  try {
    if (!thumbs.has(code)) {
      const d = (await api('GET', `/v1/agent/${encodeURIComponent(code)}`)).data;
      let url = '';
      if (d.image_url && d.image_url.includes('/v1/files/')) {
        const res = await api('GET', apiPath(d.image_url), undefined, { raw: true });
        url = URL.createObjectURL(await res.blob());
      }
      thumbs.set(code, url);
    }
    const url = thumbs.get(code);
    box.replaceChildren(url ? el('img', { src: url, alt: `Photo of ${name}` }) : el('span', { 'aria-hidden': 'true' }, initials(name)));
  } catch { box.replaceChildren(el('span', { 'aria-hidden': 'true' }, initials(name))); }
}

function cost(a) {
  const price = prices ? prices.agent_generation.by_model[a.model] : null;
  if (price == null) return '';
  return a.status === 'failed' ? `${price} credits, refunded` : `${price} credits`;
}

async function render() {
  const status = $('#filter').value;
  const q = new URLSearchParams({ limit: PAGE, offset });
  if (status) q.set('status', status);
  try {
    const r = await api('GET', `/v1/agents?${q}`);
    const cards = r.data.map((a) => {
      const thumb = el('div', { class: 'thumb' }, el('span', { 'aria-hidden': 'true' }, initials(a.name)));
      thumbnail(a.code, thumb, a.name || a.code);
      const busy = !['ready', 'success', 'failed'].includes(a.status);
      return el('article', { class: 'agent-card', 'data-code': a.code },
        thumb,
        el('div', { class: 'body' },
          el('a', { class: 'name', href: `/agent?code=${encodeURIComponent(a.code)}` }, a.name || a.code),
          el('span', {}, el('span', { class: `badge ${a.status}` }, a.status), busy ? ` ${Math.round((a.progress ?? 0) * 100)}%` : ''),
          el('span', { class: 'muted' }, el('code', {}, a.code), ` · ${a.model}`),
          el('span', { class: 'muted cost' }, cost(a)),
          el('span', { class: 'muted' }, `Created ${when(a.created_at)}`)));
    });
    $('#list').replaceChildren(cards.length ? el('div', { class: 'agent-cards' }, cards)
      : el('p', {}, 'No agents yet. ', el('a', { href: '/studio' }, 'Create your first agent in the studio.')));
    const p = r.pagination;
    $('#page').textContent = p.total ? `${p.offset + 1}–${p.offset + r.data.length} of ${p.total}` : '';
    $('#prev').disabled = offset === 0;
    $('#next').disabled = !p.has_more;
    // Agents still generating: look again at the SPEC's 5-second interval.
    if (r.data.some((a) => !['ready', 'success', 'failed'].includes(a.status))) {
      clearTimeout(render.timer);
      render.timer = setTimeout(render, 5000);
    }
  } catch (e) { say('#msg', errorText(e), 'error'); }
}

$('#filter').addEventListener('change', () => { offset = 0; render(); });
$('.pager').after(curlBox('GET', () => `/v1/agents?limit=${PAGE}&offset=${offset}${$('#filter').value ? `&status=${$('#filter').value}` : ''}`, undefined, 'listAgents'));
$('#prev').addEventListener('click', () => { offset = Math.max(0, offset - PAGE); render(); });
$('#next').addEventListener('click', () => { offset += PAGE; render(); });

await frame('/agents');
try { prices = (await api('GET', '/v1/pricing')).data; } catch { /* the cards say nothing about cost */ }
await render();

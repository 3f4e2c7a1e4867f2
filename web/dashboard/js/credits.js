import { api } from './api.js';
import { $, el, frame, when } from './ui.js';

const PAGE = 25;
let offset = 0;
const SVG = 'http://www.w3.org/2000/svg';
const svg = (tag, attrs = {}, ...kids) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...kids);
  return e;
};

// Credits spent per day over the last 30 days, from the ledger (charges are negative amounts).
async function plot() {
  const days = 30;
  const today = new Date(); today.setHours(0, 0, 0, 0);
  const start = today.getTime() - (days - 1) * 86400000;
  const spent = new Array(days).fill(0);
  for (let off = 0; off < 1000; off += 100) {
    const r = await api('GET', `/v1/usage?limit=100&offset=${off}`);
    let older = false;
    for (const e of r.data) {
      const t = new Date(e.created_at).getTime();
      if (t < start) { older = true; continue; }
      if (e.amount < 0) spent[Math.floor((t - start) / 86400000)] -= e.amount;
    }
    if (!r.pagination.has_more || older) break;
  }
  const W = 720, H = 200, pad = 30, bw = (W - pad) / days;
  const max = Math.max(10, ...spent);
  const bars = spent.map((v, i) => {
    const h = ((H - pad) * v) / max;
    const day = new Date(start + i * 86400000).toLocaleDateString();
    return svg('rect', { class: 'bar', x: pad + i * bw + 1, y: H - pad - h, width: bw - 2, height: h }, svg('title', {}, `${day}: ${v} credits`));
  });
  const chart = svg('svg', { class: 'plot', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Credits spent per day; total ${spent.reduce((a, b) => a + b, 0)} over ${days} days` },
    svg('line', { x1: pad, y1: H - pad, x2: W, y2: H - pad, stroke: '#aeb7c5' }),
    svg('text', { x: 0, y: 12 }, String(max)), svg('text', { x: 0, y: H - pad }, '0'),
    svg('text', { x: pad, y: H - 8 }, new Date(start).toLocaleDateString()), svg('text', { x: W - 80, y: H - 8 }, 'today'),
    ...bars);
  $('#plot').replaceChildren(chart);
}

async function ledger() {
  const r = await api('GET', `/v1/usage?limit=${PAGE}&offset=${offset}`);
  $('#ledger').replaceChildren(r.data.length ? el('table', {},
    el('thead', {}, el('tr', {}, ['When', 'Kind', 'Amount', 'Balance after', 'Reason'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, r.data.map((e) => el('tr', {}, el('td', {}, when(e.created_at)), el('td', {}, e.kind), el('td', {}, e.amount > 0 ? `+${e.amount}` : String(e.amount)), el('td', {}, e.balance_after), el('td', {}, e.reason))))) : el('p', {}, 'No ledger entries.'));
  $('#page').textContent = r.pagination.total ? `${offset + 1}–${offset + r.data.length} of ${r.pagination.total}` : '';
  $('#prev').disabled = offset === 0;
  $('#next').disabled = !r.pagination.has_more;
}

await frame('/credits');
const c = (await api('GET', '/v2/credit-summaries')).data;
const card = (label, value) => el('section', { class: 'card' }, el('div', { class: 'muted' }, label), el('div', { class: 'stat' }, value));
$('#balance').replaceChildren(
  card('Balance', `${c.balance.toLocaleString()} credits`),
  card('Plan credits', c.plan_credits.toLocaleString()),
  card('Top-up credits', c.topup_credits.toLocaleString()),
  el('section', { class: 'card' }, el('div', { class: 'muted' }, 'Minutes this balance buys'),
    el('ul', {}, Object.entries(c.minutes_estimate).map(([k, v]) => el('li', {}, `${k.replaceAll('_', ' ')}: ${Math.floor(v).toLocaleString()}`)))));
$('#prev').addEventListener('click', () => { offset = Math.max(0, offset - PAGE); ledger(); });
$('#next').addEventListener('click', () => { offset += PAGE; ledger(); });
await Promise.all([ledger(), plot()]);

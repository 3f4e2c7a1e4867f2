import { api } from './api.js';
import { $, el, frame, when } from './ui.js';

await frame('/');
const [credits, agents] = await Promise.all([api('GET', '/v2/credit-summaries'), api('GET', '/v1/agents?limit=5')]);
const c = credits.data;
const stat = (label, value, href) => el('section', { class: 'card' }, el('div', { class: 'muted' }, label), el('div', { class: 'stat' }, value), href ? el('a', { href }, 'Details') : null);
$('#stats').replaceChildren(
  stat('Credit balance', c.balance.toLocaleString(), '/credits'),
  stat('Agents', agents.pagination.total, '/agents'),
  stat('Essence minutes (cloud)', Math.floor(c.minutes_estimate.essence_cloud ?? Object.values(c.minutes_estimate)[0] ?? 0)),
);
$('#recent').replaceChildren(agents.data.length
  ? el('ul', {}, agents.data.map((a) => el('li', {}, el('a', { href: `/agent?code=${encodeURIComponent(a.code)}` }, a.name || a.code), ' ', el('span', { class: `badge ${a.status}` }, a.status), ' ', el('span', { class: 'muted' }, when(a.created_at)))))
  : el('p', {}, 'No agents yet. ', el('a', { href: '/agents' }, 'Create one')));

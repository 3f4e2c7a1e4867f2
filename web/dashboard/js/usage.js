// Usage in words: each ledger entry explained and linked to what it paid for, spend per agent, and
// the monthly live spend cap (GET/PUT /v1/spend-cap), with the API calls as curl lines.
import { api } from './api.js';
import { $, el, frame, say, errorText, when, copyButton, curlLine } from './ui.js';

await frame('/usage');
const PAGE = 25;
let offset = 0;
const agentLink = (code) => el('a', { href: `/agent?code=${encodeURIComponent(code)}` }, code);
const words = (s) => s.replaceAll('_', ' ');

// One ledger entry as a sentence, with a link to the agent it was for when there is one.
export function explain(e) {
  const n = Math.abs(e.amount);
  const r = e.reason || '';
  const ref = e.reference;
  if (e.kind === 'topup') return [r === 'initial credits' ? `${n} credits to start the account with.` : `${n} credits added by the operator${r ? ` (${r})` : ''}.`];
  if (e.kind === 'refund') return [`${n} credits back: ${r.replace(/^refund: /, '')}`, ref && /^[A-Za-z0-9_-]{3,64}$/.test(ref) && !ref.startsWith('job_') && !ref.startsWith('ses') ? [' (', agentLink(ref), ')'] : '', '.'];
  if (r === 'agent_generation') return [`${n} credits to generate agent `, agentLink(ref), '.'];
  if (r === 'dynamics_generation') return [`${n} credits to generate the gestures of agent `, agentLink(ref), '.'];
  let m = r.match(/^live_minute:(.+)$/);
  if (m) return [`${n} credits for a minute of live session `, el('code', {}, ref || ''), ` (${words(m[1])}).`];
  m = r.match(/^video_render:(.+):(\d+)min$/);
  if (m) return [`${n} credits for a talking video of ${m[2]} started minute${m[2] === '1' ? '' : 's'} (${words(m[1])}).`];
  return [`${n} credits: ${r || e.kind}.`];
}

const curl = curlLine;  // the shared copy-as-curl line (ui.js)
function showCurl(pre, slot, line) {
  $(pre).textContent = line;
  $(slot).replaceChildren(copyButton(line, 'Copy as curl'));
}

async function ledger() {
  const path = `/v1/usage?limit=${PAGE}&offset=${offset}`;
  const r = await api('GET', path);
  $('#ledger').replaceChildren(...(r.data.length ? r.data.map((e) => el('li', { class: e.amount < 0 ? 'spent' : 'added' },
    el('span', { class: 'amount' }, e.amount > 0 ? `+${e.amount}` : String(e.amount)),
    el('span', { class: 'what' }, ...explain(e).flat()),
    el('span', { class: 'muted when' }, `${when(e.created_at)} · balance ${e.balance_after}`)))
    : [el('li', {}, 'No ledger entries yet.')]));
  $('#page').textContent = r.pagination.total ? `${offset + 1}–${offset + r.data.length} of ${r.pagination.total}` : '';
  $('#prev').disabled = offset === 0;
  $('#next').disabled = !r.pagination.has_more;
  showCurl('#usage-curl', '#usage-copy', curl('GET', path));
}

async function perAgent() {
  const r = await api('GET', '/v1/usage?limit=100');
  const by = new Map();
  for (const e of r.data) {
    if (!['agent_generation', 'dynamics_generation'].includes(e.reason) && !(e.kind === 'refund' && e.reference && !e.reference.startsWith('job_'))) continue;
    if (!e.reference) continue;
    by.set(e.reference, (by.get(e.reference) || 0) - e.amount);
  }
  const rows = [...by.entries()].filter(([, v]) => v !== 0).sort((a, b) => b[1] - a[1]);
  $('#per-agent').replaceChildren(rows.length ? el('table', {},
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Agent'), el('th', { scope: 'col' }, 'Credits spent'))),
    el('tbody', {}, rows.map(([code, v]) => el('tr', {}, el('td', {}, agentLink(code)), el('td', {}, String(v))))))
    : el('p', { class: 'muted' }, 'No agent charges yet.'));
}

async function cap() {
  const c = (await api('GET', '/v1/spend-cap')).data;
  const eff = c.effective_live_monthly_credits;
  $('#cap-now').textContent = eff === null
    ? `No cap: live sessions have spent ${c.live_spent_credits} credits this month (${c.period}).`
    : `Live sessions have spent ${c.live_spent_credits} of ${eff} credits this month (${c.period}); ${c.live_remaining_credits} remain.${c.operator_live_monthly_credits !== null ? ` The operator's cap is ${c.operator_live_monthly_credits}; the lower one applies.` : ''}`;
  if (document.activeElement !== $('#cap')) $('#cap').value = c.live_monthly_credits ?? '';
  showCurl('#cap-curl', '#cap-copy', curl('PUT', '/v1/spend-cap', { live_monthly_credits: c.live_monthly_credits }));
}

$('#cap-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const v = $('#cap').value.trim();
  try {
    await api('PUT', '/v1/spend-cap', { live_monthly_credits: v === '' ? null : Number(v) });
    say('#cap-msg', v === '' ? 'Cap removed.' : `Cap set to ${v} credits a month.`, 'ok');
    await cap();
  } catch (e) { say('#cap-msg', errorText(e), 'error'); }
});
$('#prev').addEventListener('click', () => { offset = Math.max(0, offset - PAGE); ledger(); });
$('#next').addEventListener('click', () => { offset += PAGE; ledger(); });

const c = (await api('GET', '/v2/credit-summaries')).data;
const card = (label, value) => el('section', { class: 'card' }, el('div', { class: 'muted' }, label), el('div', { class: 'stat' }, value));
$('#summary').replaceChildren(card('Balance', `${c.balance.toLocaleString()} credits`), card('Plan credits', c.plan_credits.toLocaleString()), card('Top-up credits', c.topup_credits.toLocaleString()));
await Promise.all([ledger(), perAgent(), cap()]);

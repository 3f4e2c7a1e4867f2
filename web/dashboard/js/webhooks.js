import { api } from './api.js';
import { $, el, frame, when, say, errorText, copyButton } from './ui.js';

async function render() {
  const r = await api('GET', '/v1/webhooks');
  $('#list').replaceChildren(r.data.length ? el('table', {},
    el('thead', {}, el('tr', {}, ['URL', 'Events', 'Created', ''].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, r.data.map((w) => el('tr', {},
      el('td', {}, el('code', {}, w.url), w.description ? el('div', { class: 'muted' }, w.description) : null),
      el('td', {}, w.events.join(', ')),
      el('td', {}, when(w.created_at)),
      el('td', {},
        el('button', { type: 'button', onclick: () => test(w) }, 'Send test'), ' ',
        el('button', { type: 'button', onclick: () => deliveries(w) }, 'Deliveries'), ' ',
        el('button', { type: 'button', class: 'danger', onclick: () => remove(w) }, 'Delete')))))) : el('p', {}, 'No webhooks yet.'));
}

async function test(w) {
  try {
    const r = await api('POST', `/v1/webhooks/${w.id}/test`);
    say('#msg', r.data.delivered ? `Test delivered (HTTP ${r.data.status_code}).` : `Test failed: ${r.data.error || 'HTTP ' + r.data.status_code}`, r.data.delivered ? 'ok' : 'error');
    await deliveries(w);
  } catch (e) { say('#msg', errorText(e), 'error'); }
}

async function deliveries(w) {
  const r = await api('GET', `/v1/webhooks/${w.id}/deliveries?limit=50`);
  $('#deliveries-card').hidden = false;
  $('#deliveries-title').textContent = `Deliveries to ${w.url}`;
  $('#deliveries').replaceChildren(r.data.length ? el('table', {},
    el('thead', {}, el('tr', {}, ['When', 'Event', 'State', 'HTTP', 'Attempts', 'Error'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, r.data.map((d) => el('tr', {}, el('td', {}, when(d.created_at)), el('td', {}, d.event_type), el('td', {}, d.state), el('td', {}, d.status_code ?? '—'), el('td', {}, d.attempts), el('td', {}, d.last_error || ''))))) : el('p', {}, 'No deliveries yet.'));
}

async function remove(w) {
  if (!confirm(`Delete the webhook to ${w.url}?`)) return;
  try { await api('DELETE', `/v1/webhooks/${w.id}`); await render(); } catch (e) { say('#msg', errorText(e), 'error'); }
}

$('#create').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const events = [...document.querySelectorAll('input[name=events]:checked')].map((i) => i.value);
  try {
    const r = await api('POST', '/v1/webhooks', { url: $('#url').value, events, description: $('#description').value || undefined });
    $('#secret').replaceChildren(el('p', { class: 'msg ok' }, 'Webhook added. Its signing secret (shown once):'), el('code', { class: 'secret' }, r.data.secret), copyButton(r.data.secret));
    $('#create').reset();
    await render();
  } catch (e) { say('#msg', errorText(e), 'error'); }
});

await frame('/webhooks');
await render();

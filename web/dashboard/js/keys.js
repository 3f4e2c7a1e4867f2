import { request } from './api.js';
import { $, el, frame, when, say, errorText, copyButton } from './ui.js';

function showOnce(title, key) {
  $('#shown-once').replaceChildren(
    el('p', { class: 'msg ok' }, `${title} Copy the secret now: it is shown only this once.`),
    el('code', { class: 'secret', id: 'new-secret' }, key.api_secret),
    el('div', { class: 'row' }, copyButton(key.api_secret, 'Copy secret'),
      el('button', { type: 'button', onclick: () => $('#shown-once').replaceChildren() }, 'Done')),
  );
}

async function render() {
  const r = await request('GET', '/dashboard/api/keys');
  if (!r.data.length) {
    $('#list').replaceChildren(el('p', {}, 'No active keys.'));
    return;
  }
  const rows = r.data.map((k) =>
    el('tr', { 'data-key': k.id },
      el('td', {}, k.alias, ' ', k.device ? el('span', { class: 'badge device', title: 'created by imago login' }, 'device') : null),
      el('td', {}, el('code', {}, `${k.prefix}…${k.last4}`)),
      el('td', {}, when(k.created_at)),
      el('td', {}, when(k.last_used_at)),
      el('td', {},
        el('button', { type: 'button', 'aria-label': `Rotate ${k.alias}`, onclick: () => rotate(k) }, 'Rotate'), ' ',
        el('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${k.alias}`, onclick: () => revoke(k) }, 'Revoke')),
    ));
  $('#list').replaceChildren(el('table', {},
    el('thead', {}, el('tr', {}, ['Alias', 'Key', 'Created', 'Last used', ''].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, rows)));
}

async function revoke(k) {
  if (!confirm(`Revoke "${k.alias}"? Anything using it stops working at once.`)) return;
  try {
    await request('DELETE', `/dashboard/api/v1/keys/${encodeURIComponent(k.id)}`);
    say('#msg', `Revoked ${k.alias}.`, 'ok');
    await render();
  } catch (e) { say('#msg', errorText(e), 'error'); }
}

async function rotate(k) {
  if (!confirm(`Rotate "${k.alias}"? The old secret stops working at once.`)) return;
  try {
    const r = await request('POST', `/dashboard/api/v1/keys/${encodeURIComponent(k.id)}/rotate`);
    showOnce(`Rotated ${k.alias}.`, r.data);
    await render();
  } catch (e) { say('#msg', errorText(e), 'error'); }
}

$('#create').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  try {
    const r = await request('POST', '/dashboard/api/v1/keys', { alias: $('#alias').value });
    $('#alias').value = '';
    showOnce(`Created ${r.data.alias}.`, r.data);
    await render();
    $('#new-secret').focus?.();
  } catch (e) { say('#msg', errorText(e), 'error'); }
});

await frame('/keys');
await render();

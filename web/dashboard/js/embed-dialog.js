// The agent page's Embed dialog (docs/embed.md): a share link and a copy-ready <iframe> snippet,
// both carrying an embed token minted now through the member's session, and what a site owner
// needs to mint tokens on their own server.
import { api } from './api.js';
import { $, el, say, errorText, copyButton } from './ui.js';

const TOKEN_LIFE = 'one hour';

function snippetFor(url, code) {
  // The viewer fits the picture to whatever size the frame has; 640x440 suits a 16:9 agent.
  return `<iframe src="${url}" width="640" height="440" style="border:0;max-width:100%" ` +
    `allow="autoplay; microphone; camera; fullscreen" title="Talk with ${code}"></iframe>`;
}

function curlFor(code, site) {
  return `curl -s -X POST ${location.origin}/v1/embed-tokens/request \\\n` +
    `  -H "api-secret: $IMAGO_API_SECRET" -H "content-type: application/json" \\\n` +
    `  -d '{"agent_id": "${code}", "fingerprint": "visitor-session-hash"${site ? `, "origin": "${site}"` : ''}}'`;
}

// The form that makes the snippet for one site: a token restricted to that origin, and a frame
// address that lets only that site show the viewer.
function siteForm(dialog, code, site) {
  const form = el('form', { class: 'row', id: 'embed-site-form' },
    el('div', { class: 'grow' },
      el('label', { for: 'embed-site' }, 'Only on this site (optional)'),
      el('input', { id: 'embed-site', type: 'url', placeholder: 'https://shop.example', value: site, 'aria-describedby': 'embed-site-hint' })),
    el('button', { type: 'submit' }, site ? 'Change the site' : 'Restrict to this site'),
    site ? el('button', { type: 'button', onclick: () => fill(dialog, code, '') }, 'Any site') : null);
  form.addEventListener('submit', (ev) => { ev.preventDefault(); fill(dialog, code, $('#embed-site', dialog).value.trim()); });
  return [form, el('p', { class: 'muted', id: 'embed-site-hint' },
    'The scheme, host and port of the pages that will show the agent, as the browser\u2019s address bar has them. ',
    'The token then works only there: the frame\u2019s address carries ', el('code', {}, '?origin='), ', so the browser shows the viewer in no other site, and Imago refuses the token\u2019s live connection from any other page.')];
}

function field(id, label, value, rows) {
  const box = rows
    ? el('textarea', { id, readonly: true, rows, spellcheck: 'false', class: 'code' }, value)
    : el('input', { id, type: 'text', readonly: true, value, class: 'code' });
  box.addEventListener('focus', () => box.select());
  return el('div', { class: 'embed-field' }, el('label', { for: id }, label), box, el('div', { class: 'row' }, copyButton(value, `Copy ${label.toLowerCase()}`)));
}

async function fill(dialog, code, site = '') {
  const body = $('#embed-body', dialog);
  body.replaceChildren(el('p', { class: 'muted' }, 'Making a token…'));
  try {
    const req = { agent_id: code, fingerprint: 'dashboard-share' };
    if (site) req.origin = site;
    const r = await api('POST', '/v1/embed-tokens/request', req);
    const room = 'share-' + Math.random().toString(36).slice(2, 10);
    const page = `${location.origin}/embed/${encodeURIComponent(code)}${site ? `?origin=${encodeURIComponent(site)}` : ''}`;
    const link = `${page}#token=${encodeURIComponent(r.data.token)}&room=${room}`;
    body.replaceChildren(...[
      el('p', {}, site ? 'The snippet carries an embed token made just now for ' : 'Both carry an embed token made just now: it lets anyone who has it talk with this agent (never anything else of the account) for ',
        site ? [el('strong', {}, site), ' only: pages of that site can talk with this agent (never anything else of the account) for '] : null,
        el('strong', {}, TOKEN_LIFE), ', and it stops working when you sign out of the dashboard. Live minutes are charged to this account while someone watches.'),
      ...siteForm(dialog, code, site),
      site ? el('p', { class: 'muted', id: 'embed-link' }, 'No share link for a token kept to one site: it plays only inside a frame on that site. Clear the site for a share link.') : field('embed-link', 'Share link', link),
      site ? null : el('p', {}, el('a', { href: link, target: '_blank', rel: 'noopener', id: 'embed-open' }, 'Open the share link in a new tab')),
      field('embed-snippet', 'Iframe snippet', snippetFor(link, code), 3),
      el('h3', {}, 'On your own site'),
      el('p', {}, 'A token in a page is public, so a site makes one for each visitor, on its server, with its API secret (never put the secret in a page), and writes it into the frame\u2019s address after ',
        el('code', {}, '#token='), '. The part after # never reaches any server, so the token stays out of logs.'),
      field('embed-curl', 'Token request', curlFor(code, site), 3),
      el('ul', {},
        el('li', {}, el('strong', {}, 'fingerprint'), ': a label of your choosing (1-128 characters) for whom the token is for, such as a hash of your visitor\u2019s session id. Required; Imago checks its length and does not keep it.'),
        el('li', {}, el('strong', {}, 'Lifetime'), `: ${TOKEN_LIFE}. An open viewer renews its token every minute, so a conversation can go on; a page opened later needs a new token.`),
        el('li', {}, el('strong', {}, 'Only this site'), ': add "origin": "https://your.site" to the request and put ', el('code', {}, '?origin=https%3A%2F%2Fyour.site'), ' in the frame\u2019s address (before the #). Only that site can then frame the viewer, and Imago refuses the token from any other page. Without it a token works anywhere for its hour: make tokens only in pages you serve, one per visitor; a leaked token stops at the end of its hour, or at once when you revoke the API key that made it.'),
        el('li', {}, el('strong', {}, 'Session type'), ': add "billing_type": "voice_chat" (voice only) or "camera_chat"; the holder cannot choose another.')),
      el('p', {}, el('a', { href: '/docs/api#requestEmbedToken' }, 'The embed-token call in the API reference')),
    ].filter(Boolean));
  } catch (e) {
    // A site the server refused: the form again, with the reason, to correct it.
    if (site) body.replaceChildren(...siteForm(dialog, code, site), el('p', { class: 'msg error', role: 'alert', id: 'embed-site-error' }, errorText(e)));
    else body.replaceChildren(el('p', { class: 'msg error', role: 'alert' }, errorText(e)));
  }
}

export function openEmbedDialog(code, opener) {
  let dialog = $('#embed-dialog');
  if (!dialog) {
    dialog = el('dialog', { id: 'embed-dialog', class: 'embed', 'aria-labelledby': 'embed-title' },
      el('div', { class: 'embed-head' },
        el('h2', { id: 'embed-title' }, `Embed or share ${code}`),
        el('button', { type: 'button', id: 'embed-close', 'aria-label': 'Close', onclick: () => dialog.close() }, 'Close')),
      el('div', { id: 'embed-body' }));
    dialog.addEventListener('close', () => opener && opener.focus());
    document.body.append(dialog);
  }
  dialog.showModal();
  $('#embed-close', dialog).focus();
  return fill(dialog, code).catch((e) => say('#msg', errorText(e), 'error'));
}

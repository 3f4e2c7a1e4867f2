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

function curlFor(code) {
  return `curl -s -X POST ${location.origin}/v1/embed-tokens/request \\\n` +
    `  -H "api-secret: $IMAGO_API_SECRET" -H "content-type: application/json" \\\n` +
    `  -d '{"agent_id": "${code}", "fingerprint": "visitor-session-hash"}'`;
}

function field(id, label, value, rows) {
  const box = rows
    ? el('textarea', { id, readonly: true, rows, spellcheck: 'false', class: 'code' }, value)
    : el('input', { id, type: 'text', readonly: true, value, class: 'code' });
  box.addEventListener('focus', () => box.select());
  return el('div', { class: 'embed-field' }, el('label', { for: id }, label), box, el('div', { class: 'row' }, copyButton(value, `Copy ${label.toLowerCase()}`)));
}

async function fill(dialog, code) {
  const body = $('#embed-body', dialog);
  body.replaceChildren(el('p', { class: 'muted' }, 'Making a token…'));
  try {
    const r = await api('POST', '/v1/embed-tokens/request', { agent_id: code, fingerprint: 'dashboard-share' });
    const room = 'share-' + Math.random().toString(36).slice(2, 10);
    const link = `${location.origin}/embed/${encodeURIComponent(code)}#token=${encodeURIComponent(r.data.token)}&room=${room}`;
    body.replaceChildren(
      el('p', {}, 'Both carry an embed token made just now: it lets anyone who has it talk with this agent (never anything else of the account) for ',
        el('strong', {}, TOKEN_LIFE), ', and stops working when you sign out of the dashboard. Live minutes are charged to this account while someone watches.'),
      field('embed-link', 'Share link', link),
      el('p', {}, el('a', { href: link, target: '_blank', rel: 'noopener', id: 'embed-open' }, 'Open the share link in a new tab')),
      field('embed-snippet', 'Iframe snippet', snippetFor(link, code), 3),
      el('h3', {}, 'On your own site'),
      el('p', {}, 'A token in a page is public, so a site makes one for each visitor, on its server, with its API secret (never put the secret in a page), and writes it into the frame\u2019s address after ',
        el('code', {}, '#token='), '. The part after # never reaches any server, so the token stays out of logs.'),
      field('embed-curl', 'Token request', curlFor(code), 3),
      el('ul', {},
        el('li', {}, el('strong', {}, 'fingerprint'), ': a label of your choosing (1-128 characters) for whom the token is for, such as a hash of your visitor\u2019s session id. Required; Imago checks its length and does not keep it.'),
        el('li', {}, el('strong', {}, 'Lifetime'), `: ${TOKEN_LIFE}. An open viewer renews its token every minute, so a conversation can go on; a page opened later needs a new token.`),
        el('li', {}, el('strong', {}, 'Only this site'), ': a token is not bound to a site. Keep it to yours by making tokens only in pages you serve, one per visitor, and by not publishing share links; a leaked token stops at the end of its hour, or at once when you revoke the API key that made it.'),
        el('li', {}, el('strong', {}, 'Session type'), ': add "billing_type": "voice_chat" (voice only) or "camera_chat"; the holder cannot choose another.')),
      el('p', {}, el('a', { href: '/docs/api#requestEmbedToken' }, 'The embed-token call in the API reference')),
    );
  } catch (e) {
    body.replaceChildren(el('p', { class: 'msg error', role: 'alert' }, errorText(e)));
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

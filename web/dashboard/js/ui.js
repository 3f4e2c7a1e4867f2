// Small DOM helpers shared by the pages: element building, messages, dates, the page frame.
import { loadSession, request } from './api.js';

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

export const $ = (sel, root = document) => root.querySelector(sel);

export function when(ts) {
  if (ts === null || ts === undefined || ts === '') return '—';
  const d = typeof ts === 'number' ? new Date(ts * 1000) : new Date(ts);
  return isNaN(d) ? String(ts) : d.toLocaleString();
}

// A status line announced to screen readers.
export function say(target, message, kind = 'info') {
  const box = typeof target === 'string' ? $(target) : target;
  box.textContent = message;
  box.className = 'msg ' + kind;
  box.hidden = !message;
}

export function errorText(e) {
  return e && e.code ? `${e.message} (${e.code})` : String(e && e.message ? e.message : e);
}

const NAV = [
  ['/', 'Overview'],
  ['/agents', 'Agents'],
  ['/rooms', 'Live'],
  ['/speech', 'Speech'],
  ['/credits', 'Credits & usage'],
  ['/webhooks', 'Webhooks'],
  ['/keys', 'API keys'],
  ['/account', 'Account'],
  ['/docs/api', 'API reference'],
];

// Loads the session (redirecting to sign-in when there is none) and draws the header.
export async function frame(active) {
  const s = await loadSession();
  const nav = el(
    'nav',
    { 'aria-label': 'Dashboard' },
    el(
      'ul',
      {},
      NAV.map(([href, label]) =>
        el('li', {}, el('a', { href, 'aria-current': href === active ? 'page' : undefined }, label)),
      ),
    ),
  );
  const who = el(
    'div',
    { class: 'who' },
    el('span', {}, `${s.member.email} · ${s.account.name} (${s.account.plan})`),
    el(
      'button',
      {
        type: 'button',
        class: 'link',
        onclick: async () => {
          await request('POST', '/dashboard/api/sign-out');
          location.assign('/sign-in');
        },
      },
      'Sign out',
    ),
  );
  const header = el('header', { class: 'top' }, el('a', { href: '/', class: 'brand' }, 'Imago'), nav, who);
  document.body.prepend(el('a', { href: '#main', class: 'skip' }, 'Skip to content'), header);
  return s;
}

// Copies text and says so next to the button.
export function copyButton(text, label = 'Copy') {
  const b = el('button', { type: 'button' }, label);
  b.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      b.textContent = 'Copied';
    } catch {
      b.textContent = 'Select and copy it by hand';
    }
  });
  return b;
}

// The same request as a shell line with the reader's own key (IMAGO_API_SECRET in the shell).
export function curlLine(method, path, body) {
  const json = body === undefined ? '' : JSON.stringify(body).replaceAll("'", "'\\''");
  const data = body === undefined ? '' : ` -H 'Content-Type: application/json' \\\n  -d '${json}'`;
  return `curl -s${method === 'GET' ? '' : ` -X ${method}`} '${location.origin}${path}' \\\n  -H "api-secret: $IMAGO_API_SECRET"${data}`;
}

// "Copy as curl" beside an action: the request folded away, a copy button, and the API reference
// (`ref` is the operation's anchor there, e.g. 'speak'). `path` and `body` may be functions, read
// each time the box is opened (so the line has what the form holds then).
export function curlBox(method, path, body, ref = '', label = 'Copy as curl') {
  const pre = el('pre', { class: 'curl' });
  const copy = el('span', {});
  const box = el('details', { class: 'curl-box' }, el('summary', {}, label), pre,
    el('div', { class: 'row' }, copy, el('a', { href: '/docs/api' + (ref ? '#' + ref : '') }, 'API reference')));
  const fill = () => {
    const line = curlLine(method, typeof path === 'function' ? path() : path, typeof body === 'function' ? body() : body);
    pre.textContent = line;
    copy.replaceChildren(copyButton(line, 'Copy'));
  };
  box.addEventListener('toggle', () => { if (box.open) fill(); });
  return box;
}

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

// Every page of the dashboard is one click from the header: the main pages in the bar, the
// account's own pages (and sign-out) in the account menu. On a narrow screen (app.css) the bar
// folds into one "Menu" button that opens both lists.
const NAV = [
  ['/', 'Overview'],
  ['/agents', 'Agents'],
  ['/studio', 'Studio'],
  ['/rooms', 'Live'],
  ['/sessions', 'Sessions'],
  ['/video', 'Videos'],
  ['/speech', 'Speech'],
  ['/usage', 'Usage'],
  ['/docs/api', 'API reference'],
];
const ACCOUNT_NAV = [
  ['/account', 'Account and members'],
  ['/credits', 'Credits'],
  ['/keys', 'API keys'],
  ['/webhooks', 'Webhooks'],
];

// A button that shows and hides `panel`; Escape or a click elsewhere closes it.
function disclosure(button, panel, onToggle = () => {}) {
  const set = (open) => {
    button.setAttribute('aria-expanded', String(open));
    panel.classList.toggle('open', open);
    onToggle(open);
  };
  button.addEventListener('click', (ev) => {
    ev.stopPropagation();
    set(button.getAttribute('aria-expanded') !== 'true');
  });
  document.addEventListener('click', (ev) => {
    if (button.getAttribute('aria-expanded') === 'true' && !panel.contains(ev.target)) set(false);
  });
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && button.getAttribute('aria-expanded') === 'true') {
      set(false);
      button.focus();
    }
  });
}

// Loads the session (redirecting to sign-in when there is none) and draws the header.
export async function frame(active) {
  const s = await loadSession();
  const link = ([href, label]) =>
    el('li', {}, el('a', { href, 'aria-current': href === active ? 'page' : undefined }, label));
  const nav = el('nav', { 'aria-label': 'Dashboard' }, el('ul', {}, NAV.map(link)));
  const signOut = el(
    'button',
    {
      type: 'button',
      class: 'link',
      id: 'sign-out',
      onclick: async () => {
        await request('POST', '/dashboard/api/sign-out');
        location.assign('/sign-in');
      },
    },
    'Sign out',
  );
  const accountMenu = el(
    'div',
    { class: 'account-menu', id: 'account-menu' },
    el('p', { class: 'who-line' }, s.member.email, el('br'), `${s.account.name} (${s.account.plan})`),
    el('ul', { 'aria-label': 'Account' }, ACCOUNT_NAV.map(link), el('li', {}, signOut)),
  );
  const accountToggle = el(
    'button',
    {
      type: 'button',
      class: 'account-toggle',
      id: 'account-toggle',
      'aria-expanded': 'false',
      'aria-controls': 'account-menu',
      title: `${s.member.email} · ${s.account.name}`,
    },
    el('span', { class: 'email' }, s.member.email),
    ' ▾',
  );
  const who = el('div', { class: 'who' }, accountToggle, accountMenu);
  const menu = el('div', { class: 'site-menu', id: 'site-menu' }, nav, who);
  const menuToggle = el(
    'button',
    { type: 'button', class: 'menu-toggle', id: 'menu-toggle', 'aria-expanded': 'false', 'aria-controls': 'site-menu' },
    'Menu',
  );
  const header = el('header', { class: 'top' }, el('a', { href: '/', class: 'brand' }, 'Imago'), menuToggle, menu);
  disclosure(accountToggle, accountMenu);
  disclosure(menuToggle, menu, (open) => header.classList.toggle('menu-open', open));
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
  // Filled now and again on opening (a path given as a function may have changed): the text is
  // there as soon as the box opens, not a task later.
  try { fill(); } catch { /* what the path needs is not there yet: filled on opening */ }
  box.addEventListener('toggle', () => { if (box.open) fill(); });
  return box;
}

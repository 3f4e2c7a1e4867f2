import { request } from './api.js';
import { $, el, say, errorText, copyButton } from './ui.js';
import { nextFromSearch } from './next-path.js';

// Only pages of this server, parsed as the browser parses them: never an open redirect.
const next = () => nextFromSearch(location.search, location.origin);

$('#sign-in').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  say('#msg', 'Signing in…');
  try {
    await request('POST', '/dashboard/api/sign-in', { email: $('#email').value, password: $('#password').value });
    location.assign(next());
  } catch (e) {
    say('#msg', errorText(e), 'error');
    $('#password').select();
  }
});

$('#sign-up').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  try {
    const r = await request('POST', '/dashboard/api/sign-up', {
      email: $('#su-email').value,
      password: $('#su-password').value,
      account_name: $('#su-name').value || undefined,
    });
    const box = $('#first-key');
    box.hidden = false;
    box.replaceChildren(
      el('p', { class: 'msg ok' }, 'Account created. This is your first API key; it is shown only this once:'),
      el('code', { class: 'secret' }, r.data.first_key.api_secret),
      el('div', { class: 'row' }, copyButton(r.data.first_key.api_secret), el('a', { class: 'button', href: next() }, 'Continue')),
    );
  } catch (e) {
    say('#msg', errorText(e), 'error');
  }
});

request('GET', '/dashboard/api/config').then((r) => {
  $('#sign-up-card').hidden = !r.data.allow_signup;
});

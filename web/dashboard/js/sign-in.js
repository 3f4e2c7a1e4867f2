import { request } from './api.js';
import { $, el, say, errorText } from './ui.js';
import { nextFromSearch } from './next-path.js';

// Only pages of this server, parsed as the browser parses them: never an open redirect.
const next = () => nextFromSearch(location.search, location.origin);
// If the form is ever posted by the browser itself, the server sends it to the same place.
$('#next').value = next();

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
  const email = $('#su-email').value;
  const password = $('#su-password').value;
  try {
    // The server answers the same whether or not the email already has an account (no session,
    // no key), so the page signs in next, as any member would.
    await request('POST', '/dashboard/api/sign-up', {
      email,
      password,
      account_name: $('#su-name').value || undefined,
    });
  } catch (e) {
    say('#msg', errorText(e), 'error');
    return;
  }
  try {
    await request('POST', '/dashboard/api/sign-in', { email, password });
  } catch (e) {
    say('#msg', 'Could not sign in. If this email already has an account, sign in above with its password.', 'error');
    return;
  }
  const box = $('#first-key');
  box.hidden = false;
  box.replaceChildren(
    el('p', { class: 'msg ok' }, 'You are signed in. Create your first API key on the API keys page (it is shown once).'),
    el('div', { class: 'row' }, el('a', { class: 'button', href: '/keys' }, 'API keys'), el('a', { class: 'button', href: next() }, 'Continue')),
  );
});

request('GET', '/dashboard/api/config').then((r) => {
  $('#sign-up-card').hidden = !r.data.allow_signup;
});

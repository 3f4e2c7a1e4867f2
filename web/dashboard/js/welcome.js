import { request } from './api.js';
import { $, say, errorText } from './ui.js';

// The token is in the fragment (#...), which browsers never send to a server or put in a Referer;
// it leaves the address bar as soon as the page has read it.
const token = decodeURIComponent(location.hash.slice(1));
if (token) history.replaceState(null, '', location.pathname);
if (!token) say('#msg', 'This page is opened with the one-time link imagod printed at its first start.', 'error');

$('#welcome').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  if ($('#password').value !== $('#again').value) {
    say('#msg', 'The two passwords differ.', 'error');
    return;
  }
  say('#msg', 'Creating the owner…');
  try {
    await request('POST', '/dashboard/api/first-run', { token, email: $('#email').value, password: $('#password').value });
    location.assign('/agents');
  } catch (e) {
    say('#msg', errorText(e), 'error');
  }
});

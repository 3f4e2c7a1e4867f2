import { request } from './api.js';
import { $, el, frame, when, say, errorText } from './ui.js';

const s = await frame('/account');
$('#me').replaceChildren(el('p', {}, `${s.member.email} — member of “${s.account.name}” (${s.account.id}), plan ${s.account.plan}. Signed in ${when(s.session.created_at)}; this session ends by ${when(s.session.expires_at)} if unused.`));

$('#password').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  try {
    await request('POST', '/dashboard/api/password', { current_password: $('#current').value, new_password: $('#new').value });
    $('#current').value = $('#new').value = '';
    say('#msg', 'Password changed. Other sessions were signed out.', 'ok');
  } catch (e) { say('#msg', errorText(e), 'error'); }
});

$('#everywhere').addEventListener('click', async () => {
  if (!confirm('Sign out of every browser, including this one?')) return;
  await request('POST', '/dashboard/api/sign-out-everywhere');
  location.assign('/sign-in');
});

const m = await request('GET', '/dashboard/api/members');
$('#members').replaceChildren(el('ul', {}, m.data.map((x) => el('li', {}, x.email, ' ', el('span', { class: 'muted' }, `since ${when(x.created_at)}`)))));

import { request } from './api.js';
import { $, frame, say, errorText } from './ui.js';

await frame('');
const given = new URLSearchParams(location.search).get('user_code');
if (given) $('#user-code').value = given;

async function decide(approve) {
  try {
    const r = await request('POST', '/dashboard/api/device/approve', { user_code: $('#user-code').value, approve });
    say('#msg', approve ? `Approved: the CLI on ${r.hostname} gets its own key (${r.alias}). You can close this page.` : 'Denied. The CLI will stop waiting.', 'ok');
    $('#device').hidden = true;
  } catch (e) { say('#msg', errorText(e), 'error'); }
}
$('#device').addEventListener('submit', (ev) => { ev.preventDefault(); decide(true); });
$('#deny').addEventListener('click', () => decide(false));

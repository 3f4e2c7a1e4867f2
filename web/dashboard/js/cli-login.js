// Approves `imago login`: the CLI opened this page with its challenge (a hash, not a secret), its
// host name, its loopback port and a state value. Approving sends the browser to the CLI's
// loopback callback with a one-time code that only the CLI's verifier can redeem.
import { request } from './api.js';
import { $, frame, say, errorText } from './ui.js';

await frame('');
const q = new URLSearchParams(location.search);
const hostname = q.get('hostname') || '';
const port = Number(q.get('port'));
$('#what').textContent = `The imago command-line tool on “${hostname}” asks for its own API key, named cli@${hostname}. Approve only if you just ran “imago login”.`;

$('#approve').addEventListener('click', async () => {
  try {
    const r = await request('POST', '/dashboard/api/cli-login/approve', { challenge: q.get('challenge'), hostname, port, state: q.get('state') });
    say('#msg', 'Approved. Handing the sign-in to the CLI…', 'ok');
    location.assign(r.redirect_url);
  } catch (e) { say('#msg', errorText(e), 'error'); }
});
$('#deny').addEventListener('click', () => {
  if (port > 0) location.assign(`http://127.0.0.1:${port}/callback?error=access_denied&state=${encodeURIComponent(q.get('state') || '')}`);
  else say('#msg', 'Denied.', 'ok');
});
$('#approve').focus();

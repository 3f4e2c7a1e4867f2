// Talks to imagod for the dashboard. API routes are reached under /dashboard/api/v1/... with the
// session cookie (same handlers as /v1/... with an api-secret); every state-changing request
// carries the session's CSRF token.
let session = null;

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function parse(res) {
  const type = res.headers.get('content-type') || '';
  if (!type.startsWith('application/json')) return res;
  const body = await res.json();
  if (!res.ok) {
    const e = body && body.error ? body.error : { code: 'HTTP_' + res.status, message: res.statusText };
    throw new ApiError(res.status, e.code, e.message);
  }
  return body;
}

export async function request(method, path, body, { raw = false, headers = {} } = {}) {
  const h = { ...headers };
  if (method !== 'GET' && method !== 'HEAD' && session) h['X-CSRF-Token'] = session.csrf_token;
  let payload;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    h['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(path, { method, headers: h, body: payload, credentials: 'same-origin' });
  if (res.status === 401 && !path.startsWith('/dashboard/api/sign-in')) {
    location.assign('/sign-in?next=' + encodeURIComponent(location.pathname + location.search));
    return new Promise(() => {}); // the page is going away; nothing after this should run

  }
  if (raw) {
    if (!res.ok) await parse(res);
    return res;
  }
  return parse(res);
}

// The public API through the member's session: api('GET', '/v1/agents').
export const api = (method, path, body, opts) => request(method, '/dashboard/api' + path, body, opts);

export async function loadSession() {
  const r = await request('GET', '/dashboard/api/session');
  session = r.data;
  return session;
}

export function currentSession() {
  return session;
}

export function setSession(s) {
  session = s;
}

// Where the dashboard goes after signing in: only a page of this server, never an open redirect.
//
// A prefix check on the raw value is not enough: the browser parses the value again when it
// navigates (the WHATWG URL parser), and to that parser a backslash is a slash, tabs and newlines
// vanish and leading spaces and control characters are trimmed. So "/\evil.example",
// "/<tab>/evil.example" and "?next=/%5Cevil.example" (URLSearchParams decodes it to the first one)
// all start with one slash and still leave the site. Here the value is parsed by that same parser
// against this origin, and only a same-origin result is kept; anything else is the dashboard home.

const HOME = '/';

// The path (with query and fragment) to go to for `raw`, or '/' unless it is a page of `origin`.
export function safeNextPath(raw, origin) {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2048) return HOME;
  // Our own links are plain absolute paths: no scheme, no authority, no backslash, no control
  // character or space anywhere (the parser would drop or rewrite them, so the check below would
  // no longer judge what the browser sees).
  if (raw[0] !== '/' || /[\u0000-\u0020\u007f\\]/.test(raw)) return HOME;
  let here;
  let url;
  try {
    here = new URL(origin);
    url = new URL(raw, here);
  } catch {
    return HOME;
  }
  if (url.origin !== here.origin || url.username !== '' || url.password !== '') return HOME;
  // "/.//evil.example" normalizes to the path "//evil.example", which a navigation would read as
  // another host. Decoded, a path must not start with two slashes or a slash and a backslash.
  let decoded;
  try {
    decoded = decodeURIComponent(url.pathname);
  } catch {
    return HOME;
  }
  if (/^[/\\]{2}/.test(url.pathname) || /^[/\\]{2}/.test(decoded)) return HOME;
  return url.pathname + url.search + url.hash;
}

// The `next` query parameter of a page's `search` string, made safe.
export function nextFromSearch(search, origin) {
  return safeNextPath(new URLSearchParams(search).get('next'), origin);
}

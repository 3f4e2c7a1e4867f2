// Unit tests of web/dashboard/js/next-path.js (the sign-in page's redirect target), run by ctest
// with node's test runner. Node's URL is the WHATWG parser browsers use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { safeNextPath, nextFromSearch } from '../../web/dashboard/js/next-path.js';

const ORIGIN = 'https://imago.example:8443';

// What a browser does with the result: resolve it against the page and navigate there.
const landsOn = (path) => new URL(path, ORIGIN + '/sign-in').origin;

// Query strings as they arrive in location.search, each of which left the site before.
const attacks = [
  '?next=/%5Cevil.example/x',
  '?next=/%5C%5Cevil.example',
  '?next=%2F%5Cevil.example',
  '?next=//evil.example',
  '?next=/%2F%2Fevil.example',
  '?next=%2F%2Fevil.example',
  '?next=/%09/evil.example',
  '?next=/%0A/evil.example',
  '?next=/%0D/evil.example',
  '?next=/%00/evil.example',
  '?next=%09//evil.example',
  '?next=%20//evil.example',
  '?next=/.//evil.example',
  '?next=/./%2Fevil.example',
  '?next=/%2E//evil.example',
  '?next=https://evil.example/',
  '?next=https:evil.example',
  '?next=http:/evil.example',
  '?next=javascript:alert(1)',
  '?next=%6Aavascript:alert(1)',
  '?next=data:text/html,hi',
  '?next=\\\\evil.example',
  '?next=/\\evil.example',
  '?next=evil.example',
  '?next=@evil.example',
  '?next=/@evil.example/..//evil.example',
  '?next=',
  '?next',
  '',
];

// Raw values (already decoded), including ones a query string cannot easily carry.
const rawAttacks = [
  '/\\evil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/\r\n/evil.example',
  ' /evil.example',
  '\u0000//evil.example',
  '/\u007f/evil.example',
  '//evil.example',
  '///evil.example',
  '/./\\evil.example',
  '/%2F%2Fevil.example',
  '/%5C%5Cevil.example',
  '/%5Cevil.example',
  '/..//evil.example',
  'https://imago.example:8443@evil.example/',
  '/' + 'a'.repeat(3000),
  null,
  undefined,
  42,
];

test('attack query strings fall back to the dashboard home', () => {
  for (const q of attacks) {
    const got = nextFromSearch(q, ORIGIN);
    assert.equal(landsOn(got), ORIGIN, `${JSON.stringify(q)} -> ${got}`);
    assert.equal(got, '/', `${JSON.stringify(q)} -> ${got}`);
  }
});

test('attack raw values fall back to the dashboard home', () => {
  for (const raw of rawAttacks) {
    const got = safeNextPath(raw, ORIGIN);
    assert.equal(got, '/', `${JSON.stringify(raw)} -> ${got}`);
  }
});

test('pages of this server are kept with their query and fragment', () => {
  const ok = [
    ['?next=/agents', '/agents'],
    ['?next=%2Fagent%3Fcode%3Dabc%23live', '/agent?code=abc#live'],
    ['?next=/credits?page=2', '/credits?page=2'],
    ['?next=/device%3Fuser_code%3DABCDEFGH', '/device?user_code=ABCDEFGH'],
    ['?next=/', '/'],
    ['?next=/a/b/../c', '/a/c'],
  ];
  for (const [q, want] of ok) {
    assert.equal(nextFromSearch(q, ORIGIN), want, q);
  }
  // The page's own redirect (api.js: encodeURIComponent(pathname + search)) round-trips.
  const back = '/agent?code=x1&tab=live';
  assert.equal(nextFromSearch('?next=' + encodeURIComponent(back), ORIGIN), back);
});

// Checks the black-box suite's HTTP traffic against the API description: every request the
// tests/support harness sent to imagod and every answer it got (JSON lines in TRAFFIC_DIR, one file
// per test process) must match docs/openapi.yaml. Any mismatch fails, with the request named.
//
// What "match" means, per recorded exchange:
//   - the path and method are a documented operation, or the answer is the documented 404/405
//     envelope for an unknown path or method (tests probe those on purpose);
//   - the status is one of the operation's documented responses;
//   - the answer's content type is documented for that status and a JSON body validates against
//     its schema; the documented required headers are present;
//   - a request the server accepted (2xx) validates too: its JSON body against the request body
//     schema and its query against the parameters. Requests that the server rejected are often
//     wrong on purpose (validation tests), so for those only the error answer is checked.
// Paths outside the document (the dashboard's /dashboard/api/*, static pages, /embed/*) are
// counted and skipped.
// Usage: node validate_traffic.mjs docs/openapi.yaml TRAFFIC_DIR
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import YAML from 'yaml';

const [docPath, dir] = process.argv.slice(2);
const doc = YAML.parse(readFileSync(docPath, 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const PUBLIC = [/^\/v1\//, /^\/v2\//, /^\/admin\/v1\//, /^\/(healthz|readyz|metrics|openapi\.json)$/];

function deref(obj) {
  let o = obj;
  while (o && o.$ref) {
    o = o.$ref.replace(/^#\//, '').split('/').reduce((a, k) => a[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return o;
}

// Path templates, literal segments before parameters (the router's rule).
const templates = Object.keys(doc.paths).map((p) => ({ p, segs: p.split('/') }));
function matchPath(path) {
  const segs = path.split('/');
  let best = null;
  let bestScore = -1;
  for (const t of templates) {
    if (t.segs.length !== segs.length) continue;
    let ok = true;
    let score = 0;
    const params = {};
    for (let i = 0; i < segs.length; i++) {
      const m = /^\{(.+)\}$/.exec(t.segs[i]);
      if (m) { params[m[1]] = decodeURIComponent(segs[i]); if (!segs[i]) ok = false; }
      else if (t.segs[i] === segs[i]) score += 1 << (segs.length - i);
      else { ok = false; break; }
    }
    if (ok && score > bestScore) { best = { template: t.p, params }; bestScore = score; }
  }
  return best;
}

const compiled = new Map();
function validator(key, schema) {
  if (!compiled.has(key)) {
    // The schema's "#/components/..." references resolve inside this wrapper.
    compiled.set(key, ajv.compile({ $id: `https://imago.invalid/${compiled.size}`, ...schema, components: doc.components }));
  }
  return compiled.get(key);
}
function schemaErrors(key, schema, value) {
  const v = validator(key, schema);
  if (v(value)) return null;
  return ajv.errorsText(v.errors, { separator: '; ' });
}

function mediaType(ct) { return (ct || '').split(';')[0].trim().toLowerCase(); }
function findContent(content, ct) {
  if (!content) return null;
  const mt = mediaType(ct);
  if (content[mt]) return content[mt];
  for (const [k, v] of Object.entries(content)) {
    if (k.endsWith('/*') && mt.startsWith(k.slice(0, -1))) return v;
    if (k === '*/*') return v;
  }
  return null;
}
function findResponse(responses, status) {
  const s = String(status);
  return responses[s] ?? responses[`${s[0]}XX`] ?? responses.default ?? null;
}

let checked = 0;
let skipped = 0;
const mismatches = [];
const perOp = new Map();
function fail(rec, msg) {
  mismatches.push(`${rec.method} ${rec.path}${rec.query ? '?' + rec.query : ''} -> ${rec.status}: ${msg}`);
}

const envelope = doc.components.schemas.Error;
function checkUnknown(rec, why) {
  const allowed = why === 'method' ? [405] : [404];
  if (!allowed.includes(rec.status)) return fail(rec, `not in the document (${why}) but answered ${rec.status}`);
  const e = schemaErrors('#envelope', { $ref: '#/components/schemas/Error' }, rec.response_body);
  if (e) fail(rec, `error envelope: ${e}`);
}

function check(rec) {
  if (!PUBLIC.some((re) => re.test(rec.path))) { skipped++; return; }
  checked++;
  const m = matchPath(rec.path);
  if (!m) return checkUnknown(rec, 'path');
  const item = doc.paths[m.template];
  const op = item[rec.method.toLowerCase()];
  if (!op) return rec.method === 'HEAD' ? null : checkUnknown(rec, 'method');
  const opKey = `${rec.method} ${m.template}`;
  perOp.set(opKey, (perOp.get(opKey) ?? 0) + 1);
  const res = deref(findResponse(op.responses, rec.status));
  if (!res) return fail(rec, `status ${rec.status} is not documented for ${opKey}`);
  const headers = rec.response_headers || {};
  for (const [name, h] of Object.entries(res.headers || {})) {
    if (deref(h).required && !(name.toLowerCase() in headers)) fail(rec, `required header ${name} missing`);
  }
  if (rec.method !== 'HEAD') {
    const ct = headers['content-type'];
    const size = rec.response_body_size ?? (rec.response_body === undefined ? 0 : 1);
    if (!res.content) {
      if (size > 0) fail(rec, `a body (${ct}) where ${rec.status} documents none`);
    } else {
      const media = findContent(res.content, ct);
      if (!media) fail(rec, `content type ${ct} not documented for ${rec.status} (${Object.keys(res.content).join(', ')})`);
      else if (media.schema && rec.response_body !== undefined) {
        const e = schemaErrors(`${opKey} ${rec.status} ${mediaType(ct)}`, media.schema, rec.response_body);
        if (e) fail(rec, `response body: ${e}`);
      }
    }
  }
  if (rec.status < 200 || rec.status >= 300) return;
  // The server accepted the request: it must be one the document allows, credentials included.
  const security = op.security ?? doc.security ?? [];
  if (security.length && !security.some((req) => Object.keys(req).length === 0)) {
    const sent = rec.request_headers || {};
    const ok = security.some((req) => Object.keys(req).every((name) => {
      const scheme = doc.components.securitySchemes[name];
      if (scheme.type === 'apiKey' && scheme.in === 'header') return scheme.name.toLowerCase() in sent;
      if (scheme.type === 'http') return 'authorization' in sent;
      return true;
    }));
    if (!ok) fail(rec, 'accepted without any of the documented credentials');
  }
  const params = [...(item.parameters || []), ...(op.parameters || [])].map(deref);
  const query = new URLSearchParams(rec.query || '');
  for (const p of params) {
    if (p.in === 'query') {
      if (!query.has(p.name)) { if (p.required) fail(rec, `required query parameter ${p.name} missing`); continue; }
      let v = query.get(p.name);
      const t = p.schema?.type;
      if (t === 'integer' || t === 'number') v = Number(v);
      else if (t === 'boolean') v = v === 'true' ? true : v === 'false' ? false : v;
      const e = schemaErrors(`${opKey} q ${p.name}`, p.schema || {}, v);
      if (e) fail(rec, `query ${p.name}: ${e}`);
    } else if (p.in === 'path') {
      const e = schemaErrors(`${opKey} p ${p.name}`, p.schema || {}, m.params[p.name]);
      if (e) fail(rec, `path parameter ${p.name}: ${e}`);
    }
  }
  for (const k of query.keys()) {
    if (!params.some((p) => p.in === 'query' && p.name === k)) fail(rec, `undocumented query parameter ${k}`);
  }
  const body = deref(op.requestBody);
  const reqCt = rec.request_headers?.['content-type'];
  if (rec.body !== undefined || rec.body_size) {
    if (!body) return fail(rec, 'a request body where the operation documents none');
    const media = findContent(body.content, reqCt);
    if (!media) return fail(rec, `request content type ${reqCt} not documented`);
    if (media.schema && rec.body !== undefined) {
      const e = schemaErrors(`${opKey} req ${mediaType(reqCt)}`, media.schema, rec.body);
      if (e) fail(rec, `request body: ${e}`);
    }
  } else if (body?.required) {
    fail(rec, 'request body required but none sent');
  }
}

let files = [];
if (existsSync(dir)) files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
for (const f of files) {
  for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let rec;
    try { rec = JSON.parse(line); } catch { mismatches.push(`${f}: unreadable line`); continue; }
    try { check(rec); } catch (e) { fail(rec, `validator error: ${e.message}`); }
  }
}

const documentedOps = Object.entries(doc.paths).flatMap(([p, item]) =>
  METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${p}`));
const unexercised = documentedOps.filter((o) => !perOp.has(o));
console.log(`openapi traffic: ${checked} exchanges checked against ${docPath} (${files.length} files, ${skipped} outside the document), ` +
  `${perOp.size}/${documentedOps.length} operations exercised, ${mismatches.length} mismatches`);
if (process.env.IMAGO_OPENAPI_VERBOSE) console.log(`not exercised: ${unexercised.join(', ')}`);
const shown = new Map();
for (const m of mismatches) shown.set(m.replace(/\/[A-Za-z]+_[A-Za-z0-9]{8,}|\/[0-9A-Za-z-]{16,}|\d{6,}/g, "/…").replace(/ -> .*?:/, " "), m);
for (const m of [...shown.values()].slice(0, 200)) console.log(`MISMATCH ${m}`);
process.exit(mismatches.length ? 1 : 0);

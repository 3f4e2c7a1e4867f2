// The API reference page (/docs/api): renders the server's own /openapi.json, so the page and the
// document can never disagree. No framework and nothing from a CDN (the page's CSP allows only self).
const $ = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const k of kids.flat()) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
};

// `code` spans of the document's prose as <code>, the rest as text (never as HTML).
const prose = (text) =>
  String(text || '')
    .split('`')
    .map((part, i) => (i % 2 ? $('code', {}, part) : document.createTextNode(part)));

let doc;
const deref = (o) => {
  while (o && o.$ref) o = o.$ref.slice(2).split('/').reduce((a, k) => a[k.replace(/~1/g, '/')], doc);
  return o;
};

// A compact, readable rendering of a JSON Schema (references named, not expanded).
function schemaText(s, depth = 0) {
  if (!s) return 'any';
  if (s.$ref) return s.$ref.split('/').pop();
  if (s.allOf) return s.allOf.map((x) => schemaText(x, depth)).join(' & ');
  const t = Array.isArray(s.type) ? s.type.join(' | ') : s.type;
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((x) => JSON.stringify(x)).join(' | ');
  if (t === 'array') return `${schemaText(s.items, depth)}[]`;
  if (s.properties && depth < 3) {
    const pad = '  '.repeat(depth + 1);
    const req = new Set(s.required || []);
    const lines = Object.entries(s.properties).map(
      ([k, v]) => `${pad}${k}${req.has(k) ? '' : '?'}: ${schemaText(v, depth + 1)}`);
    return `{\n${lines.join(',\n')}\n${'  '.repeat(depth)}}`;
  }
  return t || 'any';
}

function operation(path, method, op) {
  const id = op.operationId || `${method}-${path}`;
  const sec = $('section', { class: 'op', id });
  sec.append($('h2', {}, $('span', { class: `method ${method}` }, method.toUpperCase()), ' ', $('code', {}, path)));
  sec.append($('p', {}, prose(op.summary)));
  if (op.description) sec.append($('p', {}, prose(op.description)));
  const auth = (op.security ?? doc.security ?? []).map((r) => Object.keys(r).join(' + ')).join(' or ');
  sec.append($('p', {}, $('strong', {}, 'Authentication: '), auth || 'none'));
  const params = (op.parameters || []).map(deref);
  if (params.length) {
    sec.append($('table', {}, $('tr', {}, $('th', {}, 'parameter'), $('th', {}, 'in'), $('th', {}, 'type'), $('th', {}, 'notes')),
      params.map((p) => $('tr', {}, $('td', {}, $('code', {}, p.name), p.required ? ' (required)' : ''), $('td', {}, p.in),
        $('td', {}, schemaText(p.schema)), $('td', {}, prose(p.description))))));
  }
  const body = deref(op.requestBody);
  if (body) {
    for (const [type, media] of Object.entries(body.content || {})) {
      sec.append($('h3', {}, `Request body (${type})${body.required ? '' : ', optional'}`), $('pre', {}, schemaText(media.schema)));
      if (media.example !== undefined) sec.append($('details', {}, $('summary', {}, 'Example'), $('pre', {}, JSON.stringify(media.example, null, 2))));
    }
  }
  sec.append($('h3', {}, 'Responses'));
  const rows = Object.entries(op.responses || {}).map(([status, r0]) => {
    const r = deref(r0);
    const media = Object.entries(r.content || {});
    const types = media.map(([t, m]) => `${t}: ${schemaText(m.schema)}`).join('\n');
    const examples = media
      .filter(([, m]) => m.example !== undefined)
      .map(([t, m]) => $('details', {}, $('summary', {}, `Example (${t}, from a real answer)`), $('pre', {}, JSON.stringify(m.example, null, 2))));
    return $('tr', {}, $('td', {}, status), $('td', {}, prose(r.description)), $('td', {}, $('pre', {}, types), examples));
  });
  sec.append($('table', {}, rows));
  return sec;
}

async function main() {
  doc = await (await fetch('/openapi.json')).json();
  const main = document.getElementById('ops');
  const toc = document.getElementById('toc');
  main.replaceChildren($('p', {}, prose(doc.info.description)));
  const byTag = new Map((doc.tags || []).map((t) => [t.name, []]));
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      const tag = (op.tags || ['other'])[0];
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push([path, method, op]);
    }
  }
  for (const [tag, ops] of byTag) {
    if (!ops.length) continue;
    toc.append($('h3', {}, tag));
    main.append($('h1', {}, tag));
    for (const [path, method, op] of ops) {
      toc.append($('a', { href: `#${op.operationId}` }, `${method.toUpperCase()} ${path}`));
      main.append(operation(path, method, op));
    }
  }
  main.append($('h1', {}, 'Schemas'));
  for (const [name, s] of Object.entries(doc.components?.schemas || {})) {
    main.append($('h3', { id: `schema-${name}` }, name), $('pre', {}, schemaText(s)));
  }
}

main().catch((e) => {
  document.getElementById('ops').replaceChildren($('p', {}, `Could not load /openapi.json: ${e.message}`));
});

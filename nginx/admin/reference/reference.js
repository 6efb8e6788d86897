// reference.js: the API reference at /docs/, built in the browser from purser's own OpenAPI
// document (GET /docs, open, generated from the route table): the operations by area, each
// with its RBAC action, parameters, request and answer schemas and a curl line. Everything the
// document says goes in as text (dom.js's h()), never as HTML.
import { h, failure } from '/admin/dom.js';

// Areas by a path's first segment after /organizations/{org} ('' is the organization itself):
// one for each kind of the registry that has a title (the document's x-purser-kinds, from
// lib/registry: its areas), then the service's own routes. An operation under a segment none
// names lands in "Other": none is ever left out.
let areas = [];
const service = ['service', 'Health & docs', ['healthz', 'docs', 'docs.yaml', 'metrics']];
const methods = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];
const boundWords = [
  ['minimum', v => `≥ ${v}`], ['maximum', v => `≤ ${v}`], ['minLength', v => `length ≥ ${v}`],
  ['maxLength', v => `length ≤ ${v}`], ['minItems', v => `items ≥ ${v}`], ['maxItems', v => `items ≤ ${v}`],
  ['pattern', v => `matches ${v}`], ['default', v => `default ${JSON.stringify(v)}`],
];
const helper = `. var/stack.env
api() { curl -s --cacert $PURSER_CA -H "Authorization: Bearer $PURSER_ADMIN_TOKEN" \\
           -H 'Content-Type: application/json' "$@"; }`;

let doc; // the OpenAPI document

function areaOf(path) {
  const first = path.replace(/^\/organizations\/\{org\}(?=\/|$)/, '').split('/')[1] || '';
  const area = areas.find(a => a[2].includes(first));
  return area ? area[0] : 'other';
}

/** What a $ref (#/components/...) points at, followed until it is no $ref. */
function deref(node) {
  for (let i = 0; node && node.$ref && i < 16; i++)
    node = node.$ref.slice(2).split('/').reduce((o, k) => (o || {})[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  return node || {};
}
const refName = node => (node && node.$ref ? node.$ref.split('/').pop() : '');

/** A schema's type in a few words: "array of string", "Labels", "\"put\" | \"delete\"". */
function typeOf(s) {
  if (s.$ref) return refName(s);
  if (s.enum) return s.enum.map(v => JSON.stringify(v)).join(' | ');
  const either = s.oneOf || s.anyOf;
  let t = either ? either.map(typeOf).join(' or ')
    : s.type === 'array' ? `array of ${typeOf(s.items || {})}`
    : s.type === 'object' && typeof s.additionalProperties === 'object' ? `object of ${typeOf(s.additionalProperties)}`
    : s.type || 'any';
  if (s.format) t += ` (${s.format})`;
  if (s.nullable) t += ' or null';
  return t;
}
const typeLine = s => (s.$ref ? `${refName(s)}: ${typeOf(deref(s))}` : typeOf(s));
const boundsOf = s => boundWords.filter(([k]) => s[k] !== undefined).map(([k, f]) => f(s[k])).join(', ');

/** Bounds and description of a schema, or null. */
function note(schema) {
  const s = deref(schema);
  const text = [boundsOf(s), schema.description || s.description].filter(Boolean).join('; ');
  return text ? h('span.note', {}, text) : null;
}

/** A schema's fields as a nested list, $refs followed; a schema already open above (a cycle)
 *  is named, not opened again. Null when it has none. */
function fields(schema, open) {
  const name = refName(schema), s = deref(schema);
  if (name && open.includes(name)) return null;
  const inner = name ? [...open, name] : open;
  if (s.properties) {
    const required = new Set(s.required || []);
    return h('ul.schema', {}, Object.entries(s.properties).map(([key, p]) => h('li', {},
      h('code.name', {}, key), required.has(key) ? h('span.required', {}, 'required') : null,
      h('span.type', {}, typeLine(p)), note(p), fields(p, inner))),
    s.additionalProperties === true ? h('li.more', {}, 'other fields are allowed') : null);
  }
  if (s.items) return fields(s.items, inner);
  if (typeof s.additionalProperties === 'object') return fields(s.additionalProperties, inner);
  const shown = new Set(); // (an array of X or one X: X's fields once)
  const parts = (s.oneOf || s.anyOf || []).map(alt => {
    const key = typeOf(alt.items || alt), list = shown.has(key) ? null : fields(alt, inner);
    shown.add(key);
    return list ? h('li', {}, h('span.type', {}, `${typeOf(alt)}:`), list) : null;
  }).filter(Boolean);
  return parts.length ? h('ul.schema', {}, parts) : null;
}

/** content ({media type: {schema}}): one block a schema, its media types together. */
function bodies(content) {
  const bySchema = new Map();
  for (const [media, { schema = {} }] of Object.entries(content || {})) {
    const key = JSON.stringify(schema);
    if (!bySchema.has(key)) bySchema.set(key, { media: [], schema });
    bySchema.get(key).media.push(media);
  }
  return [...bySchema.values()].map(({ media, schema }) => h('div.body', {},
    h('p.media', {}, h('code', {}, media.join(', ')), h('span.type', {}, typeLine(schema)), note(schema)),
    fields(schema, [])));
}

/** The answers by status; statuses with the same answer together, the error forms folded. */
function answers(op) {
  const same = new Map();
  for (const [status, r] of Object.entries(op.responses || {})) {
    const key = JSON.stringify([r.description, r.content, r.headers]);
    if (!same.has(key)) same.set(key, { statuses: [], r });
    same.get(key).statuses.push(status);
  }
  return [...same.values()].map(({ statuses, r }) => {
    const head = [h('strong.status', {}, statuses.join(', ')),
      r.description && r.description !== op.summary ? ` ${r.description}` : null];
    const body = [
      r.headers ? h('ul.headers', {}, Object.entries(r.headers).map(([name, x]) =>
        h('li', {}, 'header ', h('code', {}, name), x.description ? ` ${x.description}` : null))) : null,
      r.content ? bodies(r.content) : h('p', {}, 'No body.')];
    return statuses.every(s => /^[45]/.test(s))
      ? h('details.answer', {}, h('summary', {}, head, r.content ? ` (${typeOf(Object.values(r.content)[0].schema || {})})` : null), body)
      : h('div.answer', {}, h('p', {}, head), body);
  });
}

/** The parameters as a list like a schema's fields (a table is too wide for a phone). */
function parameters(op) {
  const list = (op.parameters || []).map(deref);
  return list.length ? h('ul.schema.parameters', {}, list.map(p => h('li', {},
    h('code.name', {}, p.name), h('span.in', {}, p.in), p.required ? h('span.required', {}, 'required') : null,
    h('span.type', {}, typeOf(p.schema || {})), note({ ...(p.schema || {}), description: p.description })))) : null;
}

/** The operation as a curl line in the manual's style: docs/operator/identity.md's api() helper (the admin's token,
 *  JSON) for JSON bodies; open routes without a token; a body of another type sent as it is
 *  (api() would send a second Content-Type, and the first wins). */
function curl(method, path, op) {
  const url = '$PURSER_URL' + path.replace(/\{org\}/g, '$PURSER_ORG').replace(/\{([^}]+)\}/g, (_, n) => n.toUpperCase());
  const query = (op.parameters || []).map(deref).filter(p => p.in === 'query' && p.required)
    .map(p => `${p.name}=${p.name.toUpperCase()}`);
  const target = query.length ? `"${url}?${query.join('&')}"` : url;
  const verb = method === 'get' ? [] : ['-X', method.toUpperCase()];
  const [media, body] = Object.entries((op.requestBody || {}).content || {})[0] || [];
  const name = refName(body && body.schema).replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
  const file = !/json|yaml/.test(media) ? 'FILE'
    : `${/^(any-object|deckhand-any)$/.test(name) || !name ? 'body' : name}.${/yaml/.test(media) ? 'yaml' : 'json'}`;
  if (!op.security || !op.security.length) return ['curl -s --cacert $PURSER_CA', ...verb, target].join(' ');
  if (!media || media === 'application/json') return ['api', ...verb, media ? `-d @${file}` : null, target].filter(Boolean).join(' ');
  return ['curl -s --cacert $PURSER_CA -H "Authorization: Bearer $PURSER_ADMIN_TOKEN"', `-H 'Content-Type: ${media}'`,
    ...verb, `--data-binary @${file}`, target].join(' ');
}

function operation(method, path, op) {
  const action = op['x-purser-action'], group = op['x-purser-policy-group'];
  const open = !op.security || !op.security.length;
  const params = parameters(op);
  return h('section.op', { id: op.operationId, 'aria-labelledby': `${op.operationId}-title` },
    h('h3', { id: `${op.operationId}-title` }, h(`span.method.${method}`, {}, method.toUpperCase()), ' ',
      h('code.path', {}, path), ' ', h('a.permalink', { href: `#${op.operationId}`, title: 'Link to this operation' }, '#')),
    h('p.summary', {}, op.summary || ''),
    h('dl.facts', {},
      h('dt', {}, 'Action'), h('dd', {}, action ? h('code', {}, action) : 'none',
        group ? ` (a grant limited to policy groups is checked on {${group}})` : null),
      h('dt', {}, 'Sign-in'), h('dd', {}, open ? 'open: no token needed' : 'a bearer token or Chef\'s signed headers')),
    params ? [h('h4', {}, 'Parameters'), params] : null,
    op.requestBody ? [h('h4', {}, op.requestBody.required ? 'Request body' : 'Request body (optional)'),
      bodies(op.requestBody.content)] : null,
    h('h4', {}, 'Answers'), answers(op),
    h('h4', {}, 'Example'), h('pre.curl', {}, h('code', {}, curl(method, path, op))));
}

/** The search: every word typed in an operation's method, path, summary, action or id. */
function search(entries, groups, count) {
  return h('div.search', {}, h('label', { for: 'search' }, 'Search'),
    h('input', { id: 'search', type: 'search', placeholder: 'policy_groups, PUT, write_cluster…', oninput: e => {
      const words = e.target.value.toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      for (const x of entries) {
        x.section.hidden = x.link.hidden = !words.every(w => x.text.includes(w));
        if (!x.section.hidden) shown++;
      }
      for (const g of groups) g.section.hidden = g.toc.hidden = g.entries.every(x => x.section.hidden);
      count.textContent = `${shown} of ${entries.length} operations`;
    } }), count);
}

function render() {
  const entries = [];
  const groups = [...areas, ['other', 'Other', []]].map(([id, title]) => ({ id, title, entries: [] }));
  for (const [path, item] of Object.entries(doc.paths || {}))
    for (const method of methods.filter(m => item[m])) {
      const op = item[method];
      const x = { section: operation(method, path, op),
        link: h('li', {}, h('a', { href: `#${op.operationId}`, title: path }, h(`span.method.${method}`, {}, method.toUpperCase()),
          h('span', {}, path.replace(/^\/organizations\/\{org\}\//, '…/')))),
        text: [method, path, op.summary, op['x-purser-action'], op.operationId].join(' ').toLowerCase() };
      entries.push(x);
      groups.find(g => g.id === areaOf(path)).entries.push(x);
    }
  const used = groups.filter(g => g.entries.length);
  for (const g of used) {
    g.section = h('section.area', { id: `area-${g.id}` }, h('h2', {}, g.title), g.entries.map(x => x.section));
    g.toc = h('li', {}, h('a.area', { href: `#area-${g.id}` }, `${g.title} (${g.entries.length})`),
      h('ul', {}, g.entries.map(x => x.link)));
  }
  const count = h('span.count', { role: 'status', 'aria-live': 'polite' }, `${entries.length} operations`);
  const info = doc.info || {};
  const main = document.getElementById('main');
  main.replaceChildren(h('div.reference', {},
    h('details.toc', { open: matchMedia('(min-width: 64rem)').matches },
      h('summary', {}, `Contents (${entries.length} operations)`), h('ul', {}, used.map(g => g.toc))),
    h('div.operations', {},
      h('h1', {}, `${info.title || 'purser'} API reference`),
      h('p', {}, info.description || ''),
      h('p', {}, `OpenAPI ${doc.openapi}, API version ${info.version}: generated from `, h('a', { href: '/docs' }, 'GET /docs'),
        ' (the route table). The curl lines use the README\'s helper, after the stack\'s environment:'),
      h('pre.curl', {}, h('code', {}, helper)),
      search(entries, used, count),
      used.map(g => g.section))));
  // the address's #operationId: the section exists only now, so navigate to it again
  if (location.hash && document.getElementById(location.hash.slice(1))) location.replace(location.hash);
}

try {
  const res = await fetch('/docs', { headers: { Accept: 'application/json' }, cache: 'no-cache' });
  if (!res.ok) throw Object.assign(new Error(`GET /docs answered ${res.status}`), { status: res.status });
  doc = await res.json();
  areas = [...(doc['x-purser-kinds'] || []).filter(k => k.title && k.areas).map(k => [k.plural, k.title, k.areas]), service];
  render();
} catch (err) {
  document.getElementById('main').replaceChildren(h('h1', {}, 'purser API reference'), failure(err));
}

// docs.js: document revisions with tags and validation status, a revision's documents with
// the API's filters, the rendered view, and the diff of two revisions (its buckets, then each
// changed document as YAML, unified or side by side, as GitHub shows a diff). The
// document API answers JSON when asked (Accept), YAML otherwise. Encrypted documents are read
// redacted (cleartext-secrets=false), marked, and read in clear one at a time, on a click.
import { api, enc } from '../api.js';
import { h, table, grid, link, when, failure, confirmDialog } from '../dom.js';
import { yaml, diffView, diffModes } from '../diff.js';

const docsBase = org => `/organizations/${enc(org)}/api/v1.0`;

// a revision's status (Deckhand's: from its ValidationPolicy documents, succeeded without any),
// with each policy's status (a list or a map, as the API gives them)
function revisionStatus(r) {
  const v = r.validationPolicies;
  const list = Array.isArray(v) ? v : Object.entries(v || {}).map(([name, p]) => ({ name, ...(p || {}) }));
  const policies = list.map(p => `${p.name}: ${p.status}`).join(', ');
  const text = `${r.status || ''}${policies ? ` (${policies})` : ''}`;
  return r.status === 'failed' ? h('strong.bad', {}, text) : text;
}

// The filter box's text as a filter= condition on text (a name, a schema, a tag or a bucket
// holds it; '*' any text).
const textFilter = q => `text==${q.includes('*') ? q : `*${q}*`}`;

// The revisions as pages from the API (sorted by id or creation, filtered by tag or bucket).
export async function revisions(ctx) {
  const load = async ({ sort, q, token, size }) => {
    const params = new URLSearchParams({ page_size: size, sort: (sort || '-id').replace(/^-/, ''),
      order: (sort || '-id').startsWith('-') ? 'desc' : 'asc' });
    if (token) params.set('page_token', token);
    if (q) params.set('filter', textFilter(q));
    const page = await api('GET', `${docsBase(ctx.org)}/revisions?${params}`);
    return { items: page.results || [], next: page.next_page_token, total: page.total };
  };
  const pick = h('form.inline', { onsubmit: e => {
    e.preventDefault();
    ctx.go(`/o/${enc(ctx.org)}/diff/${enc(e.target.a.value)}/${enc(e.target.b.value)}`);
  } }, h('label', { for: 'diff-a' }, 'Diff revision'), h('input', { id: 'diff-a', name: 'a', size: 4, required: true, inputmode: 'numeric' }),
    h('label', { for: 'diff-b' }, 'with'), h('input', { id: 'diff-b', name: 'b', size: 4, required: true, inputmode: 'numeric' }),
    h('button', { type: 'submit' }, 'Compare'));
  const list = grid(ctx, { noun: 'revisions', load, sort: '-id',
    filter: { label: 'Filter by bucket or tag', placeholder: 'site or release-*' },
    columns: [
      { title: 'Revision', sort: 'id', cell: r => link(`/o/${enc(ctx.org)}/documents/${r.id}`, String(r.id)) },
      { title: 'Created', sort: 'createdAt', cell: r => when(r.createdAt) },
      { title: 'Buckets', cell: r => (r.buckets || []).join(', ') },
      { title: 'Tags', cell: r => (r.tags || []).join(', ') },
      { title: 'Status', cell: r => revisionStatus(r) },
    ] });
  ctx.show(h('h1', {}, 'Document revisions'), pick, list);
  await list.ready;
}

// a column's sort key as the document API's sort path
const docSort = { schema: 'schema', name: 'metadata.name', layer: 'metadata.layeringDefinition.layer', bucket: 'status.bucket' };

export async function revisionPage(ctx) {
  const { rev } = ctx.params;
  const rendered = ctx.query.get('view') === 'rendered';
  const params = new URLSearchParams();
  for (const key of ['schema', 'metadata.name', 'metadata.label', 'status.bucket'])
    if (ctx.query.get(key)) params.set(key, ctx.query.get(key));
  const path = `${docsBase(ctx.org)}/revisions/${enc(rev)}/${rendered ? 'rendered-documents' : 'documents'}`;
  const filters = h('form.filters', { onsubmit: e => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const el of e.target.querySelectorAll('input, select')) if (el.value) q.set(el.name, el.value);
    ctx.go(`/o/${enc(ctx.org)}/documents/${enc(rev)}?${q}`);
  } },
    ...['schema', 'metadata.name', 'metadata.label', 'status.bucket'].map(key => h('span', {},
      h('label', { for: `f-${key}` }, key), h('input', { id: `f-${key}`, name: key, value: ctx.query.get(key) || '' }))),
    h('label', { for: 'f-view' }, 'view'),
    h('select', { id: 'f-view', name: 'view' }, h('option', { value: '' }, 'as stored'),
      h('option', { value: 'rendered', selected: rendered }, 'rendered')),
    h('button', { type: 'submit' }, 'Apply'));
  const title = h('h1', {}, `Revision ${rev}${rendered ? ' (rendered)' : ''}`);
  const back = link(`/o/${enc(ctx.org)}/documents`, '← all revisions');
  ctx.context(title, back, filters);
  // a revision that is not there: its title, back link, filters and the API's message alone
  const revision = await api('GET', `${docsBase(ctx.org)}/revisions/${enc(rev)}`);
  params.set('cleartext-secrets', 'false');
  // one page from the API: its total and the next page's token in the answer's headers
  const load = async ({ sort, q, token, size }) => {
    const p = new URLSearchParams(params);
    p.set('page_size', size);
    if (token) p.set('page_token', token);
    if (sort) { p.set('sort', docSort[sort.replace(/^-/, '')]); p.set('order', sort.startsWith('-') ? 'desc' : 'asc'); }
    if (q) p.set('filter', textFilter(q));
    let headers = null;
    const docs = await api('GET', `${path}?${p}`, undefined, { onHeaders: h_ => { headers = h_; } });
    const total = headers && headers.get('X-Total-Count');
    return { items: Array.isArray(docs) ? docs : [], next: (headers && headers.get('X-Next-Page-Token')) || '',
      total: total === null || total === undefined ? undefined : Number(total) };
  };
  const meta = d => d.metadata || {};
  const list_ = grid(ctx, { noun: 'documents', load, pageSize: 50, sort: '',
    filter: { label: 'Filter by name or schema', placeholder: 'web or deckhand/*' }, columns: [
      { title: 'Schema', sort: 'schema', cell: d => d.schema || '' },
      { title: 'Name', sort: 'name', cell: d => [meta(d).name || '', encrypted(d) ? h('span.encrypted', {}, 'encrypted') : null] },
      { title: 'Layer', sort: 'layer', cell: d => (meta(d).layeringDefinition || {}).layer || '' },
      { title: 'Bucket', sort: 'bucket', cell: d => (d.status || {}).bucket || '' },
      { title: 'Data', cell: d => encrypted(d) ? secretCell(ctx, path, d)
        : h('details', {}, h('summary', {}, 'show'), h('pre.yaml', {}, yaml(d.data === undefined ? null : d.data))) },
    ] });
  ctx.show(title, back, actions(ctx, rev, revision), filters, list_);
  await list_.ready;
}

// A revision's tags (added, deleted after a confirmation) and a rollback to it (a new revision
// with its documents, after a confirmation), for who may; each says what it did.
function actions(ctx, rev, revision) {
  const base = docsBase(ctx.org), o = enc(ctx.org);
  const result = h('div', { id: 'revision-result' }), tags = h('span', {}), checks = h('span', { id: 'validations' }, '…');
  const done = (...nodes) => result.replaceChildren(h('p.done', { role: 'status' }, ...nodes));
  const loadTags = async () => {
    const list = await api('GET', `${base}/revisions/${enc(rev)}/tags`).catch(err => { result.replaceChildren(failure(err)); return []; });
    const names = (Array.isArray(list) ? list : Object.keys(list || {})).map(t => typeof t === 'string' ? t : t.tag || t.name).filter(Boolean);
    tags.replaceChildren(...(names.length ? names.map(t => h('span.tag', {}, t, ctx.can('write_tag')
      ? h('button.danger', { type: 'button', 'aria-label': `Delete tag ${t}`, onclick: async () => {
          if (!await confirmDialog(`Delete tag ${t} of revision ${rev}?`, ['The revision and its documents stay.'], 'Delete')) return;
          try { await api('DELETE', `${base}/revisions/${enc(rev)}/tags/${enc(t)}`); done(`Tag ${t} deleted.`); await loadTags(); }
          catch (err) { result.replaceChildren(failure(err)); }
        } }, '×') : null)) : ['none']));
  };
  const tagForm = ctx.can('write_tag') ? h('form.inline', { id: 'add-tag', onsubmit: async e => {
    e.preventDefault();
    const t = e.target.tag.value.trim();
    try { await api('POST', `${base}/revisions/${enc(rev)}/tags/${enc(t)}`); done(`Revision ${rev} tagged ${t}.`); e.target.reset(); await loadTags(); }
    catch (err) { result.replaceChildren(failure(err)); }
  } }, h('label', { for: 'tag' }, 'New tag'), h('input', { id: 'tag', name: 'tag', required: true, autocomplete: 'off' }),
    h('button', { type: 'submit' }, 'Tag')) : null;
  const rollback = ctx.can('write_cleartext_document') ? h('button.danger', { type: 'button', id: 'rollback', onclick: async () => {
    if (!await confirmDialog(`Roll back to revision ${rev}?`, ['A new revision is made with the documents of this one.',
      'Every bucket is set back as it was here; what came later stays in the history.'], 'Roll back')) return;
    try {
      const made = await api('POST', `${base}/rollback/${enc(rev)}`);
      done('Rolled back: revision ', link(`/o/${o}/documents/${made.id}`, String(made.id)), ` has the documents of revision ${rev}.`);
    } catch (err) { result.replaceChildren(failure(err)); }
  } }, `Roll back to revision ${rev}`) : null;
  // every validation reported on it, each by its latest entry (failures first)
  const loadValidations = async () => {
    if (!ctx.can('read_validation')) return checks.replaceChildren('not yours to read');
    const found = await api('GET', `${base}/revisions/${enc(rev)}/validations`).catch(err => { checks.replaceChildren(failure(err)); return null; });
    if (!found) return;
    const list = (found.results || []).slice().sort((a, b) => (a.status === 'success') - (b.status === 'success') || a.name.localeCompare(b.name));
    checks.replaceChildren(...(list.length ? list.flatMap((v, i) => [i ? ', ' : '', v.status === 'success' ? `${v.name}: ${v.status}`
      : h('strong.bad', {}, `${v.name}: ${v.status}`)]) : ['none reported']));
  };
  loadTags();
  loadValidations();
  return h('div.revision-actions', {}, h('p', {}, 'Status: ', revisionStatus(revision)), h('p', {}, 'Validations: ', checks),
    h('p', {}, 'Tags: ', tags), tagForm, rollback, result);
}

const encrypted = d => (d.metadata || {}).storagePolicy === 'encrypted';

// An encrypted document's value: a reveal button (for who may read it) that reads this one
// document in clear and shows it, and a hide button that forgets it again.
function secretCell(ctx, path, d) {
  const cell = h('div', {});
  const { name } = d.metadata;
  const hidden = () => cell.replaceChildren(ctx.can('read_encrypted_document')
    ? h('button.reveal', { type: 'button', 'aria-label': `Reveal the value of ${name}`, onclick: reveal }, 'Reveal')
    : h('span', {}, 'hidden'));
  async function reveal() {
    try {
      const q = new URLSearchParams({ schema: d.schema, 'metadata.name': name });
      const found = (await api('GET', `${path}?${q}`) || []).find(x => x.schema === d.schema && x.metadata.name === name);
      cell.replaceChildren(h('pre.yaml', {}, yaml(found ? found.data : null)),
        h('button', { type: 'button', 'aria-label': `Hide the value of ${name}`, onclick: hidden }, 'Hide'));
    } catch (err) { cell.replaceChildren(failure(err)); }
  }
  hidden();
  return cell;
}

// A document's identity in a revision: its schema and name (Deckhand's key).
const docKey = d => `${d.schema} ${(d.metadata || {}).name}`;
// A document as the diff shows it: what was written, without where and when it appeared.
const docShown = d => { const { status, ...rest } = d; return rest; };

export async function diffPage(ctx) {
  const { a, b } = ctx.params;
  const base = `${docsBase(ctx.org)}/revisions/${enc(a)}`;
  const title = h('h1', {}, `Revision ${a} and ${b}`), back = link(`/o/${enc(ctx.org)}/documents`, '← all revisions');
  ctx.context(title, back);
  const diff = await api('GET', `${base}/diff/${enc(b)}`);
  const changed = Object.entries(diff || {}).filter(([, v]) => v !== 'unmodified').map(([bucket]) => bucket);
  // both revisions' documents of the buckets that changed, at once, secrets redacted
  const read = rev => {
    const q = new URLSearchParams({ 'cleartext-secrets': 'false' });
    for (const bucket of changed) q.append('status.bucket', bucket);
    return changed.length ? api('GET', `${docsBase(ctx.org)}/revisions/${enc(rev)}/documents?${q}`) : [];
  };
  const [before, after] = await Promise.all([read(a), read(b)]);
  const old = new Map((before || []).map(d => [docKey(d), d])), now = new Map((after || []).map(d => [docKey(d), d]));
  const keys = [...new Set([...old.keys(), ...now.keys()])].sort();
  const docs = keys.map(k => ({ k, from: old.get(k), to: now.get(k) }))
    .map(x => ({ ...x, a: x.from ? yaml(docShown(x.from)) : '', b: x.to ? yaml(docShown(x.to)) : '' }))
    .filter(x => x.a !== x.b);
  const views = h('div', {});
  const modes = diffModes(ctx, mode => views.replaceChildren(...docs.map(x => h('section.doc-diff', {},
    h('h3', {}, `${x.from && x.to ? 'changed' : x.to ? 'added' : 'deleted'}: ${x.k}`,
      (x.from || x.to).metadata && (x.from || x.to).metadata.storagePolicy === 'encrypted' ? h('span.encrypted', {}, 'encrypted') : null),
    diffView(x.a, x.b, mode, `${x.k}, revision ${a} → ${b}`)))));
  ctx.show(title, back,
    h('h2', {}, 'Buckets'),
    table([{ title: 'Bucket', cell: r => r[0] }, { title: 'Change', cell: r => String(r[1]) }], Object.entries(diff || {})),
    h('h2', {}, `Documents (${docs.length} changed)`), docs.length ? modes : h('p', {}, 'No document changed.'), views);
}

// The pages this module serves (app.js routes them; lib/registry names this module as theirs).
export const pages = [
  ['/o/:org/documents', revisions], ['/o/:org/documents/:rev', revisionPage], ['/o/:org/diff/:a/:b', diffPage],
];

// inventory.js: clusters with labels and facts, their dynamic-facts history, creating one
// and resetting its bootstrap token (shown once).
import { api, enc } from '../api.js';
import { h, table, grid, link, failure, secretOnce, confirmDialog, when } from '../dom.js';
import { yaml } from '../diff.js';

const base = org => `/organizations/${enc(org)}/clusters`;
const labelsText = labels => Object.entries(labels || {}).map(([k, v]) => `${k}=${v}`).join(', ');

// "k=v, k2=v2" as labels (an entry without "=" is a 400 from the API when written, so kept as
// a key with an empty value here would hide the mistake: it is refused here instead).
function parseLabels(text) {
  const labels = {};
  for (const pair of text.split(',').map(x => x.trim()).filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`labels: "${pair}" is not key=value`);
    labels[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return labels;
}

// justCreated: a cluster this page just registered, shown with its token once above the list
// read again (so that it is in it).
export async function clusters(ctx, justCreated) {
  const selector = ctx.query.get('labels') || '';
  const load = async ({ sort, q, token, size }) => {
    const params = new URLSearchParams({ page_size: size, sort: sort || 'name' });
    if (selector) params.set('labels', selector);
    if (token) params.set('page_token', token);
    // a pattern with *, else the ids holding what is typed (as every list's filter)
    if (q) params.set('filter', `name==${q.includes('*') ? q : `*${q}*`}`);
    const page = await api('GET', `${base(ctx.org)}?${params}`);
    return { items: page.items || [], next: page.next_page_token };
  };
  const filter = h('form.inline', { onsubmit: e => {
    e.preventDefault();
    if (e.target.labels.value) ctx.query.set('labels', e.target.labels.value); else ctx.query.delete('labels');
    ctx.go(`/o/${enc(ctx.org)}/clusters${ctx.query.toString() ? '?' + ctx.query : ''}`);
  } }, h('label', { for: 'labels' }, 'Label selector'), h('input', { id: 'labels', name: 'labels', value: selector, placeholder: 'env=prod' }),
    h('button', { type: 'submit' }, 'Filter'));
  const created = h('div', {});
  const create = ctx.can('write_cluster') ? h('form.create', { onsubmit: async e => {
    e.preventDefault();
    try {
      const labels = parseLabels(e.target.newlabels.value);
      const f = e.target;
      const c = await api('POST', base(ctx.org), { metadata: { name: f.newname.value || undefined, labels, description: f.newdescription.value || undefined },
        spec: f.newdisplay.value ? { display_name: f.newdisplay.value } : undefined });
      await clusters(ctx, c);
    } catch (err) { created.replaceChildren(failure(err)); }
  } }, h('h2', {}, 'Register a cluster'),
    h('label', { for: 'newname' }, 'Name'), h('input', { id: 'newname', name: 'newname' }),
    h('label', { for: 'newlabels' }, 'Labels (k=v, ...)'), h('input', { id: 'newlabels', name: 'newlabels' }),
    h('label', { for: 'newdisplay' }, 'Display name'), h('input', { id: 'newdisplay', name: 'newdisplay' }),
    h('label', { for: 'newdescription' }, 'Description'), h('input', { id: 'newdescription', name: 'newdescription' }),
    h('button', { type: 'submit' }, 'Create')) : null;
  const list = grid(ctx, { noun: 'clusters', load, sort: 'name', filter: { label: 'Cluster id', placeholder: 'edge or c-edge-*' }, controls: null, columns: [
    { title: 'Cluster', sort: 'name', cell: c => link(`/o/${enc(ctx.org)}/clusters/${enc(c.metadata.name)}`, c.metadata.name) },
    { title: 'Labels', cell: c => labelsText(c.metadata.labels) },
    { title: 'Display name', sort: 'display_name', cell: c => (c.spec || {}).display_name || '' },
    { title: 'Created', sort: 'created_at', cell: c => when(c.metadata.created_at) },
    { title: 'Updated', cell: c => when(c.metadata.updated_at) },
  ] });
  ctx.show(h('h1', {}, 'Clusters'), filter, created, list, create);
  await list.ready;
  if (justCreated)
    created.replaceChildren(h('p.done', { role: 'status' }, 'Created ', link(`/o/${enc(ctx.org)}/clusters/${enc(justCreated.metadata.name)}`, justCreated.metadata.name)),
      ...bootstrapShown(justCreated.bootstrap_token));
}

// A bootstrap token as its creation or reset answers it, shown once: the token, the install URL
// that carries it (what the new machine runs), and until when it can be redeemed.
function bootstrapShown(t) {
  return [secretOnce('Bootstrap token', t.token), t.install_url ? secretOnce('Install URL', t.install_url) : null,
    t.expires_at ? h('p', {}, 'It can be redeemed once, until ', when(t.expires_at), '.') : null];
}

// A cluster's labels, display name and description, changed with a merge patch conditional on
// the revision the page read (a change made meanwhile is a 412 that says to reload).
function editForm(ctx, c, done) {
  const id = c.metadata.name;
  return h('form.create', { id: 'edit-cluster', onsubmit: async e => {
    e.preventDefault();
    const f = e.target;
    try {
      const labels = parseLabels(f.editlabels.value);
      for (const k of Object.keys(c.metadata.labels || {})) if (!(k in labels)) labels[k] = null;
      const patch = { metadata: { labels, description: f.editdescription.value || null }, spec: { display_name: f.editdisplay.value || null } };
      const now = await api('PATCH', `${base(ctx.org)}/${enc(id)}`, patch,
        { contentType: 'application/merge-patch+json', headers: { 'If-Match': `"${c.metadata.revision}"` } });
      done(now, null);
    } catch (err) { done(null, err); }
  } }, h('h2', {}, 'Edit'),
    h('label', { for: 'editdisplay' }, 'Display name'), h('input', { id: 'editdisplay', name: 'editdisplay', value: (c.spec || {}).display_name || '' }),
    h('label', { for: 'editlabels' }, 'Labels (k=v, ...)'), h('input', { id: 'editlabels', name: 'editlabels', value: labelsText(c.metadata.labels) }),
    h('label', { for: 'editdescription' }, 'Description'), h('input', { id: 'editdescription', name: 'editdescription', value: c.metadata.description || '' }),
    h('button', { type: 'submit' }, 'Save'));
}

export async function clusterPage(ctx) {
  const { id } = ctx.params;
  ctx.context(h('h1', {}, `Cluster ${id}`), link(`/o/${enc(ctx.org)}/clusters`, '← all clusters'));
  const c = await api('GET', `${base(ctx.org)}/${enc(id)}`);
  const tokenHolder = h('div', {});
  const result = h('div', { id: 'cluster-result' });
  const statusHolder = h('div', { id: 'cluster-status' }, h('pre.yaml', {}, yaml(c.status || {})));
  ctx.show(h('h1', {}, `Cluster ${c.metadata.name}`), link(`/o/${enc(ctx.org)}/clusters`, '← all clusters'),
    table([{ title: 'Field', cell: r => r[0] }, { title: 'Value', cell: r => r[1] }], [
      ['Labels', labelsText(c.metadata.labels)], ['Annotations', labelsText(c.metadata.annotations)],
      ['Description', c.metadata.description || ''], ['Revision', c.metadata.revision || ''],
      ['Created', when(c.metadata.created_at)], ['Updated', when(c.metadata.updated_at)],
    ]),
    h('h2', {}, 'Spec'), h('pre.yaml', {}, yaml(c.spec || {})),
    h('h2', {}, 'Status'), statusHolder,
    ctx.can('reset_bootstrap_token') ? h('button', { type: 'button', id: 'reset-token', onclick: async () => {
      if (!await confirmDialog(`Reset the bootstrap token of ${c.metadata.name}?`, ['The current token stops working.'], 'Reset')) return;
      try {
        const t = await api('POST', `${base(ctx.org)}/${enc(id)}/bootstrap-token`);
        tokenHolder.replaceChildren(...bootstrapShown(t.bootstrap_token));
        statusHolder.replaceChildren(h('pre.yaml', {}, yaml(t.status || {}))); // the new token's expiry, not the old
        result.replaceChildren(); // (an earlier action's message is not this one's)
      } catch (err) { tokenHolder.replaceChildren(failure(err)); }
    } }, 'Reset bootstrap token') : null,
    tokenHolder,
    ctx.can('write_cluster') ? editForm(ctx, c, async (now, err) => {
      if (err) return result.replaceChildren(failure(err));
      await clusterPage(ctx);
      document.getElementById('cluster-result').replaceChildren(h('p.done', { role: 'status' }, `Saved: revision ${now.metadata.revision}.`));
    }) : null,
    ctx.can('delete_cluster') ? h('button.danger', { type: 'button', id: 'delete-cluster', onclick: async () => {
      if (!await confirmDialog(`Delete cluster ${c.metadata.name}?`, ['Its facts history goes with it.',
        'The client its bootstrap made (its key and token) stops working at once.'], 'Delete')) return;
      try {
        await api('DELETE', `${base(ctx.org)}/${enc(id)}`);
        ctx.show(h('h1', {}, `Cluster ${c.metadata.name}`), h('p.done', { role: 'status' }, `Cluster ${c.metadata.name} deleted. `),
          link(`/o/${enc(ctx.org)}/clusters`, '← all clusters'));
      } catch (err) { result.replaceChildren(failure(err)); }
    } }, 'Delete cluster') : null,
    result,
    h('h2', {}, 'Dynamic facts history'),
    grid(ctx, { key: 'facts', noun: 'versions', pageSize: 20, filter: null, load: async ({ token, size }) => {
      const page = await api('GET', `${base(ctx.org)}/${enc(id)}/facts/history?page_size=${size}${token ? `&page_token=${enc(token)}` : ''}`);
      return { items: page.items || [], next: page.next_page_token };
    }, columns: [{ title: 'Version', cell: v => String(v.version) }, { title: 'When', cell: v => when(v.created_at) },
      { title: 'By', cell: v => v.author || '' }, { title: 'Facts', cell: v => h('pre.yaml', {}, yaml(v.facts)) }] }));
}

// The pages this module serves (app.js routes them; lib/registry names this module as theirs).
export const pages = [['/o/:org/clusters', clusters], ['/o/:org/clusters/:id', clusterPage]];

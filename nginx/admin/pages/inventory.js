// inventory.js: clusters with labels and facts, their dynamic-facts history, creating one
// and resetting its bootstrap token (shown once).
import { api, enc } from '../api.js';
import { h, paged, table, link, pre, failure, secretOnce, confirmDialog, when } from '../dom.js';

const base = org => `/organizations/${enc(org)}/clusters`;
const labelsText = labels => Object.entries(labels || {}).map(([k, v]) => `${k}=${v}`).join(', ');

// justCreated: a cluster this page just registered, shown with its token once above the list
// read again (so that it is in it).
export async function clusters(ctx, justCreated) {
  const selector = ctx.query.get('labels') || '';
  const pageToken = ctx.query.get('page_token') || '';
  const q = new URLSearchParams({ page_size: '100' });
  if (selector) q.set('labels', selector);
  if (pageToken) q.set('page_token', pageToken);
  const list = await api('GET', `${base(ctx.org)}?${q}`);
  const items = list.items || [];
  const filter = h('form.inline', { onsubmit: e => {
    e.preventDefault();
    const nq = new URLSearchParams();
    if (e.target.labels.value) nq.set('labels', e.target.labels.value);
    ctx.go(`/o/${enc(ctx.org)}/clusters${nq.toString() ? '?' + nq : ''}`);
  } }, h('label', { for: 'labels' }, 'Label selector'), h('input', { id: 'labels', name: 'labels', value: selector, placeholder: 'env=prod' }),
    h('button', { type: 'submit' }, 'Filter'));
  const created = h('div', {});
  const create = ctx.can('write_cluster') ? h('form.create', { onsubmit: async e => {
    e.preventDefault();
    const labels = {};
    for (const pair of e.target.newlabels.value.split(',').map(s => s.trim()).filter(Boolean)) {
      const [k, ...v] = pair.split('='); labels[k] = v.join('=');
    }
    try {
      const c = await api('POST', base(ctx.org), { metadata: { name: e.target.newname.value || undefined, labels } });
      await clusters(ctx, c);
    } catch (err) { created.replaceChildren(failure(err)); }
  } }, h('h2', {}, 'Register a cluster'),
    h('label', { for: 'newname' }, 'Name'), h('input', { id: 'newname', name: 'newname' }),
    h('label', { for: 'newlabels' }, 'Labels (k=v, ...)'), h('input', { id: 'newlabels', name: 'newlabels' }),
    h('button', { type: 'submit' }, 'Create')) : null;
  ctx.show(h('h1', {}, 'Clusters'), filter, paged([
    { title: 'Cluster', cell: c => link(`/o/${enc(ctx.org)}/clusters/${enc(c.metadata.name)}`, c.metadata.name) },
    { title: 'Labels', cell: c => labelsText(c.metadata.labels) },
    { title: 'Display name', cell: c => (c.spec || {}).display_name || '' },
    { title: 'Updated', cell: c => when(c.metadata.updated_at) },
  ], items, `${items.length} clusters on this page`),
  list.next_page_token ? link(`/o/${enc(ctx.org)}/clusters?${new URLSearchParams({ ...(selector ? { labels: selector } : {}), page_token: list.next_page_token })}`, 'Next page →') : null,
  create, created);
  if (justCreated)
    created.replaceChildren(h('p', {}, 'Created ', link(`/o/${enc(ctx.org)}/clusters/${enc(justCreated.metadata.name)}`, justCreated.metadata.name)),
      secretOnce('Bootstrap token', justCreated.bootstrap_token.token));
}

export async function clusterPage(ctx) {
  const { id } = ctx.params;
  ctx.context(h('h1', {}, `Cluster ${id}`), link(`/o/${enc(ctx.org)}/clusters`, '← all clusters'));
  const c = await api('GET', `${base(ctx.org)}/${enc(id)}`);
  const history = await api('GET', `${base(ctx.org)}/${enc(id)}/facts/history?page_size=20`);
  const tokenHolder = h('div', {});
  const statusHolder = h('div', { id: 'cluster-status' }, pre(c.status || {}));
  ctx.show(h('h1', {}, `Cluster ${c.metadata.name}`), link(`/o/${enc(ctx.org)}/clusters`, '← all clusters'),
    table([{ title: 'Field', cell: r => r[0] }, { title: 'Value', cell: r => r[1] }], [
      ['Labels', labelsText(c.metadata.labels)], ['Annotations', labelsText(c.metadata.annotations)],
      ['Description', c.metadata.description || ''], ['Revision', c.metadata.revision || ''],
      ['Created', when(c.metadata.created_at)], ['Updated', when(c.metadata.updated_at)],
    ]),
    h('h2', {}, 'Spec'), pre(c.spec || {}),
    h('h2', {}, 'Status'), statusHolder,
    ctx.can('reset_bootstrap_token') ? h('button', { type: 'button', id: 'reset-token', onclick: async () => {
      if (!await confirmDialog(`Reset the bootstrap token of ${c.metadata.name}?`, ['The current token stops working.'], 'Reset')) return;
      try {
        const t = await api('POST', `${base(ctx.org)}/${enc(id)}/bootstrap-token`);
        tokenHolder.replaceChildren(secretOnce('New bootstrap token', t.bootstrap_token.token));
        statusHolder.replaceChildren(pre(t.status || {})); // the new token's expiry, not the old

      } catch (err) { tokenHolder.replaceChildren(failure(err)); }
    } }, 'Reset bootstrap token') : null,
    tokenHolder,
    h('h2', {}, 'Dynamic facts history'),
    table([{ title: 'Version', cell: v => String(v.version) }, { title: 'When', cell: v => when(v.created_at) },
           { title: 'By', cell: v => v.author || '' }, { title: 'Facts', cell: v => pre(v.facts) }], history.items || []));
}

// policy.js: Policyfile pages: policies and their revisions, a revision's lock, policy
// groups with what they point at, the diff of a policy between two groups, promotion, nodes.
import { api, enc } from '../api.js';
import { h, paged, table, link, filtered, confirmDialog, failure, pre, spinner, when } from '../dom.js';

const base = org => `/organizations/${enc(org)}`;

export async function policies(ctx) {
  const list = await api('GET', `${base(ctx.org)}/policies`);
  const rows = Object.entries(list || {}).map(([name, p]) => {
    const revs = Object.entries(p.revisions || {});
    const latest = revs.map(([, r]) => r.created_at || '').sort().pop() || '';
    return { name, count: revs.length, latest };
  }).sort((a, b) => a.name.localeCompare(b.name));
  ctx.show(h('h1', {}, 'Policies'), filtered(ctx, [
    { title: 'Policy', cell: r => link(`/o/${enc(ctx.org)}/policies/${enc(r.name)}`, r.name) },
    { title: 'Revisions', cell: r => String(r.count) },
    { title: 'Latest upload', cell: r => when(r.latest) },
  ], rows, 'policies', r => r.name));
}

export async function policyPage(ctx) {
  const { name } = ctx.params;
  ctx.context(h('h1', {}, `Policy ${name}`), link(`/o/${enc(ctx.org)}/policies`, '← all policies'));
  const p = await api('GET', `${base(ctx.org)}/policies/${enc(name)}`);
  const groups = await api('GET', `${base(ctx.org)}/policy_groups`);
  const pointing = {};
  for (const [g, v] of Object.entries(groups || {}))
    for (const [pn, ptr] of Object.entries(v.policies || {}))
      if (pn === name) (pointing[ptr.revision_id] = pointing[ptr.revision_id] || []).push(g);
  const rows = Object.entries(p.revisions || {}).map(([rev, r]) => ({ rev, ...r }))
    .sort((a, b) => (b.created_at || '').localeCompare(a.created_at || ''));
  ctx.show(h('h1', {}, `Policy ${name}`), link(`/o/${enc(ctx.org)}/policies`, '← all policies'),
    paged([
      { title: 'Revision', cell: r => link(`/o/${enc(ctx.org)}/policies/${enc(name)}/${enc(r.rev)}`, r.rev) },
      { title: 'Uploaded', cell: r => when(r.created_at) },
      { title: 'By', cell: r => r.created_by || '' },
      { title: 'Groups pointing at it', cell: r => (pointing[r.rev] || []).join(', ') },
    ], rows, `${rows.length} revisions, newest first`));
}

export async function revisionPage(ctx) {
  const { name, rev } = ctx.params;
  ctx.context(h('h1', {}, `${name} revision ${rev}`), link(`/o/${enc(ctx.org)}/policies/${enc(name)}`, `← ${name}`));
  const lock = await api('GET', `${base(ctx.org)}/policies/${enc(name)}/revisions/${enc(rev)}`);
  const cookbooks = Object.entries(lock.cookbook_locks || {}).map(([cb, l]) => ({ cb, ...l }));
  ctx.show(h('h1', {}, `${name} revision ${rev}`),
    link(`/o/${enc(ctx.org)}/policies/${enc(name)}`, `← ${name}`),
    h('h2', {}, 'Run list'), h('ol', {}, (lock.run_list || []).map(item => h('li', {}, item))),
    h('h2', {}, 'Cookbooks'),
    table([{ title: 'Cookbook', cell: r => r.cb }, { title: 'Version', cell: r => r.version || '' },
           { title: 'Identifier', cell: r => r.identifier || '' }], cookbooks),
    h('h2', {}, 'Default attributes'), pre(lock.default_attributes || {}),
    h('h2', {}, 'Override attributes'), pre(lock.override_attributes || {}),
    h('h2', {}, 'Groups pointing at it'), h('p', {}, (lock.policy_group_list || []).join(', ') || 'none'));
}

export async function groups(ctx) {
  const list = await api('GET', `${base(ctx.org)}/policy_groups`);
  const rows = Object.entries(list || {}).map(([group, g]) => ({ group, policies: g.policies || {} }))
    .sort((a, b) => a.group.localeCompare(b.group));
  const pointsAt = r => Object.entries(r.policies).map(([p, v]) => `${p} → ${v.revision_id}`).join(', ');
  ctx.show(h('h1', {}, 'Policy groups'), filtered(ctx, [
    { title: 'Group', cell: r => link(`/o/${enc(ctx.org)}/groups/${enc(r.group)}`, r.group) },
    { title: 'Points at', cell: pointsAt },
  ], rows, 'groups', r => `${r.group} ${pointsAt(r)}`));
}

export async function groupPage(ctx) {
  const { group } = ctx.params;
  ctx.context(h('h1', {}, `Policy group ${group}`), link(`/o/${enc(ctx.org)}/groups`, '← all groups'));
  const g = await api('GET', `${base(ctx.org)}/policy_groups/${enc(group)}`);
  const all = await api('GET', `${base(ctx.org)}/policy_groups`);
  const others = Object.keys(all || {}).filter(x => x !== group).sort();
  const from = ctx.query.get('from') || others[0] || '';
  const pointers = Object.entries(g.policies || {}).map(([p, v]) => ({ p, rev: v.revision_id }));
  const diffHolder = h('div', {});
  const select = h('select', { id: 'from-group' }, others.map(o => h('option', { value: o, selected: o === from }, o)));
  const showDiff = async source => {
    diffHolder.replaceChildren(spinner());
    const theirs = (all[source] || {}).policies || {};
    const names = [...new Set([...Object.keys(theirs), ...Object.keys(g.policies || {})])].sort();
    // every policy's diff at once (one round trip, not one per policy)
    const rows = await Promise.all(names.map(async n => {
      const a = (theirs[n] || {}).revision_id, b = ((g.policies || {})[n] || {}).revision_id;
      let detail = '';
      if (a && b && a !== b) {
        try {
          detail = diffSummary(await api('GET', `${base(ctx.org)}/policies/${enc(n)}/diff?from_group=${enc(group)}&to_group=${enc(source)}`));
        } catch (err) { detail = failure(err); }
      }
      return { n, here: b || '—', there: a || '—', detail };
    }));
    const changes = rows.filter(r => r.there !== '—' && r.here !== r.there);
    diffHolder.replaceChildren(
      h('div.side-by-side', {}, table([
        { title: 'Policy', cell: r => r.n },
        { title: group, cell: r => r.here },
        { title: source, cell: r => r.there },
        { title: 'What changes', cell: r => r.detail || (r.here === r.there ? 'the same' : '') },
      ], rows, `${group} and ${source} side by side`)),
      ctx.can('promote_policy_group', group) && ctx.can('read_policy_group', source) && changes.length
        ? h('button', { type: 'button', id: 'promote', onclick: async () => {
            const ok = await confirmDialog(`Promote from ${source} to ${group}?`,
              changes.map(c => `${c.n}: ${c.here} → ${c.there}`), 'Promote');
            if (!ok) return;
            try {
              await api('POST', `${base(ctx.org)}/policy_groups/${enc(group)}/promote`, { from: source, policies: changes.map(c => c.n) });
              await groupPage(ctx);
            } catch (err) { diffHolder.prepend(failure(err)); }
          } }, `Promote ${changes.length} from ${source}`)
        : null);
  };
  select.addEventListener('change', e => { ctx.query.set('from', e.target.value); ctx.setQuery(ctx.query); showDiff(e.target.value); });
  ctx.show(h('h1', {}, `Policy group ${group}`), link(`/o/${enc(ctx.org)}/groups`, '← all groups'),
    table([{ title: 'Policy', cell: r => link(`/o/${enc(ctx.org)}/policies/${enc(r.p)}`, r.p) },
           { title: 'Revision', cell: r => link(`/o/${enc(ctx.org)}/policies/${enc(r.p)}/${enc(r.rev)}`, r.rev) }], pointers),
    others.length ? h('div.filter', {}, h('label', { for: 'from-group' }, 'Compare with'), select) : null,
    diffHolder);
  if (from) await showDiff(from);
}

// A cookbook's version and identifier as a person reads them (either may be missing).
const cookbookText = (version, identifier) =>
  `${version || 'no version'}${identifier ? ` (${identifier})` : ''}`;

/** A policy diff (GET .../diff) as lines: the run list's added and removed items, each
 *  cookbook from version (identifier) to version (identifier), the attribute paths added,
 *  removed and changed; collapsed under a one-line count. */
export function diffSummary(d) {
  const lines = [];
  const rl = d.run_list || {}, cb = d.cookbooks || {}, at = d.attributes || {};
  for (const item of rl.added || []) lines.push(['+', `run list: ${item}`]);
  for (const item of rl.removed || []) lines.push(['−', `run list: ${item}`]);
  for (const [name, v] of Object.entries(cb.added || {})) lines.push(['+', `cookbook ${name} ${cookbookText(v)}`]);
  for (const [name, v] of Object.entries(cb.removed || {})) lines.push(['−', `cookbook ${name} ${cookbookText(v)}`]);
  for (const [name, c] of Object.entries(cb.changed || {}))
    lines.push(['~', `cookbook ${name} ${cookbookText(c.from, c.from_identifier)} → ${cookbookText(c.to, c.to_identifier)}`]);
  for (const path of at.added || []) lines.push(['+', `attribute ${path}`]);
  for (const path of at.removed || []) lines.push(['−', `attribute ${path}`]);
  for (const path of at.changed || []) lines.push(['~', `attribute ${path} changes`]);
  if (!lines.length) return 'the same content';
  return h('details.diff', {}, h('summary', {}, `${lines.length} change${lines.length === 1 ? '' : 's'}`),
    h('ul', {}, lines.map(([mark, text]) => h('li', { 'data-mark': mark }, h('span.mark', { 'aria-hidden': 'true' }, mark), ' ', text))));
}

export async function nodes(ctx) {
  const group = ctx.query.get('group') || '';
  const policyName = group ? ctx.query.get('policy') || '' : '';
  let list;
  if (group && policyName) list = await api('GET', `${base(ctx.org)}/policy_groups/${enc(group)}/policies/${enc(policyName)}/nodes`);
  else if (group) list = await api('GET', `${base(ctx.org)}/policy_groups/${enc(group)}/nodes`);
  else list = await api('GET', `${base(ctx.org)}/nodes`);
  const rows = Object.keys(list || {}).sort().map(name => ({ name }));
  const groupsList = await api('GET', `${base(ctx.org)}/policy_groups`) || {};
  const policyNames = group ? Object.keys((groupsList[group] || {}).policies || {}).sort() : [];
  const choose = (key, value) => {
    if (value) ctx.query.set(key, value); else ctx.query.delete(key);
    if (key === 'group') ctx.query.delete('policy');
    ctx.go(`/o/${enc(ctx.org)}/nodes${ctx.query.toString() ? '?' + ctx.query : ''}`);
  };
  ctx.show(h('h1', {}, 'Nodes'),
    h('div.filter', {}, h('label', { for: 'node-group' }, 'Policy group'),
      h('select', { id: 'node-group', onchange: e => choose('group', e.target.value) },
        h('option', { value: '' }, 'all groups'),
        Object.keys(groupsList).sort().map(g => h('option', { value: g, selected: g === group }, g))),
      group ? h('label', { for: 'node-policy' }, 'Policy') : null,
      group ? h('select', { id: 'node-policy', onchange: e => choose('policy', e.target.value) },
        h('option', { value: '' }, 'all policies'),
        policyNames.map(p => h('option', { value: p, selected: p === policyName }, p))) : null),
    filtered(ctx, [{ title: 'Node', cell: r => r.name }], rows, 'nodes', r => r.name));
}

// policy.js: Policyfile pages: policies and their revisions, a revision's lock, policy
// groups with what they point at, the diff of a policy between two groups, promotion, nodes.
import { api, enc } from '../api.js';
import { h, table, link, grid, confirmDialog, destroy, failure, spinner, when } from '../dom.js';
import { yaml, diffView, diffModes } from '../diff.js';

const base = org => `/organizations/${enc(org)}`;

// A list's pages from the API (GET path?page_size&sort&page_token&filter: {items,
// next_page_token, total}): the filter box narrows by field (name; '*' any text, else the field
// holds it), conds() the other conditions.
export const serverPages = (path, conds = () => [], field = 'name') => async ({ sort, q, token, size }) => {
  const all = [...(q ? [`${field}==${q.includes('*') ? q : `*${q}*`}`] : []), ...conds()];
  const params = new URLSearchParams({ page_size: size, sort: sort || field });
  if (token) params.set('page_token', token);
  if (all.length) params.set('filter', all.join(';'));
  const page = await api('GET', `${path}?${params}`);
  return { items: page.items, next: page.next_page_token, total: page.total };
};

// The policies list: pages from the API (each policy's revision count and newest upload),
// sorted and filtered by the server.
export async function policies(ctx) {
  const list = grid(ctx, { noun: 'policies', load: serverPages(`${base(ctx.org)}/policies`), sort: 'name',
    filter: { label: 'Name', placeholder: 'web or web-*' }, columns: [
      { title: 'Policy', sort: 'name', cell: r => link(`/o/${enc(ctx.org)}/policies/${enc(r.name)}`, r.name) },
      { title: 'Revisions', sort: 'revision_count', cell: r => String(r.revision_count) },
      { title: 'Latest upload', sort: 'latest_at', cell: r => when(r.latest_at) },
    ] });
  ctx.show(h('h1', {}, 'Policies'), list, ctx.can('collect_policies') ? collector(ctx) : null);
  await list.ready;
}

// collect_policies: a dry run first, listing what would go; then, confirmed, the collection
// itself, reporting what went.
function collector(ctx) {
  const result = h('div', { id: 'collect-result' });
  const url = `${base(ctx.org)}/collect_policies`;
  const what = c => [`${c.revisions.length} revision${c.revisions.length === 1 ? '' : 's'}`,
    `${c.cookbook_artifacts.length} cookbook artifact${c.cookbook_artifacts.length === 1 ? '' : 's'}`,
    `${c.files.length} stored file${c.files.length === 1 ? '' : 's'}`].join(', ');
  const listing = c => h('ul', {}, c.revisions.map(r => h('li', {}, `revision ${r.revision_id} of ${r.policy}`)),
    c.cookbook_artifacts.map(a => h('li', {}, `cookbook artifact ${a.name} ${a.identifier}`)));
  return h('form.create', { id: 'collect', onsubmit: async e => {
    e.preventDefault();
    const f = e.target, body = { keep: Number(f.keep.value), dry_run: true };
    const names = f.only.value.split(',').map(x => x.trim()).filter(Boolean);
    if (names.length) body.policies = names;
    try {
      const dry = await api('POST', url, body);
      if (!dry.revisions.length && !dry.cookbook_artifacts.length && !dry.files.length)
        return result.replaceChildren(h('p.done', { role: 'status' }, `Nothing to collect: every revision is among the newest ${body.keep} or pointed at by a group.`));
      result.replaceChildren(h('div.done', { role: 'status' }, h('p', {}, `Would go: ${what(dry)}.`), listing(dry),
        h('button.danger', { type: 'button', id: 'collect-now', onclick: async () => {
          if (!await confirmDialog(`Collect ${what(dry)}?`, dry.revisions.map(r => `${r.policy} ${r.revision_id}`).slice(0, 20)
            .concat(dry.revisions.length > 20 ? [`and ${dry.revisions.length - 20} more revisions`] : [], ['They cannot be brought back but by uploading them again.']), 'Collect')) return;
          try {
            const gone = await api('POST', url, { ...body, dry_run: false });
            result.replaceChildren(h('div.done', { role: 'status' }, h('p', {}, `Collected: ${what(gone)}.`), listing(gone)));
          } catch (err) { result.replaceChildren(failure(err)); }
        } }, 'Collect these')));
    } catch (err) { result.replaceChildren(failure(err)); }
  } }, h('h2', {}, 'Collect old revisions'),
    h('p', {}, 'Revisions no group points at beyond the newest of each policy, then the cookbook artifacts and files nothing names any more. A dry run shows what would go first.'),
    h('label', { for: 'keep' }, 'Keep the newest'), h('input', { id: 'keep', name: 'keep', type: 'number', min: 0, value: '3', required: true }),
    h('label', { for: 'only' }, 'Only policies (optional)'), h('input', { id: 'only', name: 'only', placeholder: 'web, db', autocomplete: 'off' }),
    h('button', { type: 'submit' }, 'Preview'), result);
}

export async function policyPage(ctx) {
  const { name } = ctx.params;
  ctx.context(h('h1', {}, `Policy ${name}`), link(`/o/${enc(ctx.org)}/policies`, '← all policies'));
  // its revisions as pages from the API, each with the groups pointing at it; the newest 200
  // for the compare form
  const path = `${base(ctx.org)}/policies/${enc(name)}/revisions`;
  const newestPage = await api('GET', `${path}?page_size=200&sort=-created_at`);
  const newest = (newestPage.items || []).map(r => r.revision_id);
  const result = h('div', { id: 'policy-result' });
  const say = text => document.getElementById('policy-result').replaceChildren(h('p.done', { role: 'status' }, text));
  const pick = (id, label, chosen) => [h('label', { for: id }, label),
    h('select', { id, name: id }, newest.map(r => h('option', { value: r, selected: r === chosen }, r)))];
  const compare = newest.length > 1 ? h('form.inline', { id: 'compare-revisions', onsubmit: e => {
    e.preventDefault();
    ctx.go(`/o/${enc(ctx.org)}/policies/${enc(name)}/compare/${enc(e.target['rev-a'].value)}/${enc(e.target['rev-b'].value)}`);
  } }, pick('rev-a', 'Compare revision', newest[1]), pick('rev-b', 'with', newest[0]), h('button', { type: 'submit' }, 'Compare')) : null;
  const groupsOf = r => r.policy_group_list || [];
  // a principal limited to some policy groups sees only those pointing at a revision: the others
  // may point at it too, and then the server refuses the delete
  const unseen = (ctx.perms.policy_groups || {}).read_policy_group ? ' Groups you cannot see may point at it too: then the delete is refused.' : '';
  const pointing = groups => groups.length
    ? `Groups point at it (${groups.join(', ')}): they lose this policy, and their nodes find none on their next run.${unseen}`
    : unseen ? `No group you can see points at it.${unseen}` : 'No group points at it.';
  const list = grid(ctx, { noun: 'revisions', load: serverPages(path, () => [], 'revision_id'), sort: '-created_at',
    filter: { label: 'Filter by revision id', placeholder: 'a1b2 or a1*' }, columns: [
      { title: 'Revision', sort: 'revision_id', cell: r => link(`/o/${enc(ctx.org)}/policies/${enc(name)}/${enc(r.revision_id)}`, r.revision_id) },
      { title: 'Uploaded', sort: 'created_at', cell: r => when(r.created_at) },
      { title: 'By', sort: 'created_by', cell: r => r.created_by || '' },
      { title: 'Groups pointing at it', cell: r => groupsOf(r).join(', ') },
      ...(ctx.can('delete_policy') ? [{ title: 'Actions', cell: r => destroy({ label: 'Delete', aria: `Delete revision ${r.revision_id}`,
        title: `Delete revision ${r.revision_id} of ${name}?`, lines: ['Its lock goes; cookbook files only it used are collected later.',
          pointing(groupsOf(r))],
        run: () => api('DELETE', `${base(ctx.org)}/policies/${enc(name)}/revisions/${enc(r.revision_id)}`),
        done: async () => { await policyPage(ctx); say(`Revision ${r.revision_id} deleted.`); }, fail: err => result.replaceChildren(failure(err)) }) }] : []),
    ] });
  // the policy's delete names every group pointing at any of its revisions: read when asked
  const everyGroup = async () => {
    const all = await api('GET', path);
    return [...new Set(Object.values(all || {}).flatMap(groupsOf))].sort();
  };
  ctx.show(h('h1', {}, `Policy ${name}`), link(`/o/${enc(ctx.org)}/policies`, '← all policies'), compare, list,
    ctx.can('delete_policy') ? destroy({ label: `Delete policy ${name}`, id: 'delete-policy', title: `Delete policy ${name}?`,
      lines: async () => { const groups = await everyGroup(); return [`All ${newestPage.total} of its revisions go with it.`, pointing(groups)]; },
      run: () => api('DELETE', `${base(ctx.org)}/policies/${enc(name)}`),
      done: () => ctx.show(h('h1', {}, `Policy ${name}`), h('p.done', { role: 'status' }, `Policy ${name} deleted. `),
        link(`/o/${enc(ctx.org)}/policies`, '← all policies')),
      fail: err => result.replaceChildren(failure(err)) }) : null, result);
  await list.ready;
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
    h('h2', {}, 'Default attributes'), h('pre.yaml', {}, yaml(lock.default_attributes || {})),
    h('h2', {}, 'Override attributes'), h('pre.yaml', {}, yaml(lock.override_attributes || {})),
    h('h2', {}, 'Groups pointing at it'), h('p', {}, (lock.policy_group_list || []).join(', ') || 'none'));
}

// The policy groups list: pages from the API (those the caller may read, with what they point
// at), sorted and filtered by the server.
export async function groups(ctx) {
  const pointsAt = r => Object.entries(r.policies || {}).map(([p, v]) => `${p} → ${v.revision_id}`).join(', ');
  const list = grid(ctx, { noun: 'groups', load: serverPages(`${base(ctx.org)}/policy_groups`), sort: 'name',
    filter: { label: 'Group name', placeholder: 'prod or prod-*' }, columns: [
      { title: 'Group', sort: 'name', cell: r => link(`/o/${enc(ctx.org)}/groups/${enc(r.name)}`, r.name) },
      { title: 'Policies', sort: 'policy_count', cell: r => String(r.policy_count) },
      { title: 'Points at', cell: pointsAt },
    ] });
  ctx.show(h('h1', {}, 'Policy groups'), list);
  await list.ready;
}

// The locks read for comparisons, each once per page.
function lockReader(ctx) {
  const seen = new Map();
  return (name, rev) => {
    const key = `${name}\n${rev}`;
    if (!seen.has(key)) seen.set(key, api('GET', `${base(ctx.org)}/policies/${enc(name)}/revisions/${enc(rev)}`));
    return seen.get(key);
  };
}

// What a lock shows in a comparison (no policy_group, which differs by where it is read).
const lockShown = lock => {
  const { policy_group, policy_group_list, ...rest } = lock || {};
  return rest;
};

// A policy's comparison: the summary (run list, cookbooks, attributes with old and new values)
// and the two locks as YAML with their difference.
async function comparison(ctx, name, d, fromLock, toLock, open = false) {
  const modeHolder = h('div', {});
  const yamlDiff = h('details.lock-diff', {}, h('summary', {}, 'The locks as YAML'), modeHolder);
  modeHolder.append(diffModes(ctx, mode => {
    const view = diffView(yaml(lockShown(fromLock)), yaml(lockShown(toLock)), mode,
      `${name}: ${d.from.revision_id} → ${d.to.revision_id}`);
    const old = modeHolder.querySelector('.diff-view');
    if (old) old.replaceWith(view); else modeHolder.append(view);
  }));
  return diffSummary(d, fromLock, toLock, open, yamlDiff);
}

// A revision id as a table shows it: its first 10 characters, the whole id on hover.
const shortText = id => id && id.length > 12 ? `${id.slice(0, 10)}…` : id;
const shortId = id => id && id.length > 12 ? h('span', { title: id }, shortText(id)) : id;

export async function groupPage(ctx) {
  const { group } = ctx.params;
  const o = enc(ctx.org);
  ctx.context(h('h1', {}, `Policy group ${group}`), link(`/o/${o}/groups`, '← all groups'));
  const g = await api('GET', `${base(ctx.org)}/policy_groups/${enc(group)}`);
  // the groups to compare with: a page of them by name (a search finds the others), not all
  const choices = async q => {
    const params = new URLSearchParams({ page_size: 200, sort: 'name' });
    if (q) params.set('filter', `name==*${q}*`);
    const page = await api('GET', `${base(ctx.org)}/policy_groups?${params}`);
    return { names: (page.items || []).map(x => x.name).filter(x => x !== group), more: !!page.next_page_token };
  };
  const first = await choices('');
  const from = ctx.query.get('from') || first.names[0] || '';
  const others = from && !first.names.includes(from) ? [from, ...first.names] : first.names;
  const pointers = Object.entries(g.policies || {}).map(([p, v]) => ({ p, rev: v.revision_id }));
  const lockOf = lockReader(ctx);
  const diffHolder = h('div', {}), promoteHolder = h('div', {}), report = h('div', { id: 'promote-result' });
  const select = h('select', { id: 'from-group' }, others.map(x => h('option', { value: x, selected: x === from }, x)));
  const showDiff = async source => {
    diffHolder.replaceChildren(spinner());
    promoteHolder.replaceChildren();
    // (a group to compare with that is not there, or not the reader's: its error in this part
    // of the page alone; the group's own pointers stay shown below)
    let mine, theirs;
    try {
      mine = (await api('GET', `${base(ctx.org)}/policy_groups/${enc(group)}`)).policies || {};
      theirs = (await api('GET', `${base(ctx.org)}/policy_groups/${enc(source)}`)).policies || {};
    } catch (err) { diffHolder.replaceChildren(failure(err)); return; }
    const names = [...new Set([...Object.keys(theirs), ...Object.keys(mine)])].sort();
    // every policy's diff and both locks at once (one round trip, not one per policy)
    const rows = await Promise.all(names.map(async n => {
      const a = (theirs[n] || {}).revision_id, b = (mine[n] || {}).revision_id;
      let detail = '';
      if (a && b && a !== b) {
        try {
          const [d, here, there] = await Promise.all([
            api('GET', `${base(ctx.org)}/policies/${enc(n)}/diff?from_group=${enc(group)}&to_group=${enc(source)}`),
            lockOf(n, b), lockOf(n, a)]);
          detail = await comparison(ctx, n, d, here, there);
        } catch (err) { detail = failure(err); }
      }
      return { n, here: b || '—', there: a || '—', detail };
    }));
    const changes = rows.filter(r => r.there !== '—' && r.here !== r.there);
    diffHolder.replaceChildren(
      h('div.side-by-side', {}, table([
        { title: 'Policy', cell: r => link(`/o/${o}/policies/${enc(r.n)}`, r.n) },
        { title: group, cell: r => shortId(r.here) },
        { title: source, cell: r => shortId(r.there) },
        { title: 'What changes', cell: r => r.detail || (r.here === r.there ? 'the same' : r.there === '—' ? `not in ${source}` : '') },
      ], rows, `${group} and ${source}: ${changes.length} of ${rows.length} policies would change`)));
    if (!(ctx.can('promote_policy_group', group) && ctx.can('read_policy_group', source) && changes.length)) return;
    const boxes = changes.map(c => h('input', { type: 'checkbox', id: `promote-${c.n}`, value: c.n, checked: true }));
    const button = h('button', { type: 'submit', id: 'promote' }, `Promote ${changes.length} from ${source}`);
    const count = () => { const k = boxes.filter(b => b.checked).length; button.textContent = `Promote ${k} from ${source}`; button.disabled = !k; };
    boxes.forEach(b => b.addEventListener('change', count));
    promoteHolder.replaceChildren(h('form.promote', { onsubmit: async e => {
      e.preventDefault();
      const chosen = changes.filter((c, i) => boxes[i].checked);
      if (!chosen.length) return;
      const ok = await confirmDialog(`Promote from ${source} to ${group}?`,
        chosen.map(c => `${c.n}: ${c.here} → ${c.there}`), 'Promote');
      if (!ok) return;
      try {
        const after = await api('POST', `${base(ctx.org)}/policy_groups/${enc(group)}/promote`, { from: source, policies: chosen.map(c => c.n) });
        const now = (after && after.policies) || {};
        const moved = chosen.filter(c => (now[c.n] || {}).revision_id === c.there);
        report.replaceChildren(h('div.done', { role: 'status' },
          h('p', {}, `Promoted ${moved.length} polic${moved.length === 1 ? 'y' : 'ies'} from ${source} to ${group}:`),
          h('ul', {}, moved.map(c => h('li', {}, `${c.n}: ${c.here} → ${c.there}`)))));
        await showDiff(source);
      } catch (err) { report.replaceChildren(failure(err)); }
    } }, h('fieldset', {}, h('legend', {}, `Promote into ${group} what ${source} points at`),
      changes.map((c, i) => h('span', {}, boxes[i], h('label', { for: `promote-${c.n}`, title: `${c.here} → ${c.there}` },
        `${c.n} (${shortText(c.here)} → ${shortText(c.there)})`)))),
    button));
  };
  select.addEventListener('change', e => { ctx.query.set('from', e.target.value); ctx.setQuery(ctx.query); showDiff(e.target.value); });
  // more groups than the first page: a search by name fills the list with those it finds
  let searching = 0;
  const search = first.more ? h('input', { id: 'from-search', type: 'search', placeholder: 'find a group by name',
    'aria-label': 'Find a group to compare with', autocomplete: 'off', oninput: async e => {
      const mine = ++searching, q = e.target.value.trim();
      const found = await choices(q).catch(() => null);
      if (!found || mine !== searching) return;
      const chosen = select.value;
      const names = chosen && !found.names.includes(chosen) ? [chosen, ...found.names] : found.names;
      select.replaceChildren(...names.map(x => h('option', { value: x, selected: x === chosen }, x)));
    } }) : null;
  ctx.show(h('h1', {}, `Policy group ${group}`), link(`/o/${o}/groups`, '← all groups'),
    others.length ? h('div.filter', {}, h('label', { for: 'from-group' }, 'Compare with'), select, search) : null,
    report, promoteHolder, diffHolder,
    h('h2', {}, `What ${group} points at`),
    table([{ title: 'Policy', cell: r => link(`/o/${o}/policies/${enc(r.p)}`, r.p) },
           { title: 'Revision', cell: r => link(`/o/${o}/policies/${enc(r.p)}/${enc(r.rev)}`, r.rev) },
           ...(ctx.can('write_policy_group', group) ? [{ title: 'Actions', cell: r => destroy({ label: 'Remove', aria: `Remove ${r.p} from ${group}`,
             title: `Remove ${r.p} from ${group}?`, lines: [`Nodes of ${r.p} in ${group} find no policy on their next run.`], verb: 'Remove',
             run: () => api('DELETE', `${base(ctx.org)}/policy_groups/${enc(group)}/policies/${enc(r.p)}`),
             done: async () => { await groupPage(ctx); document.getElementById('promote-result').replaceChildren(h('p.done', { role: 'status' }, `${r.p} removed from ${group}.`)); },
             fail: err => report.replaceChildren(failure(err)) }) }] : [])], pointers),
    ctx.can('write_policy_group', group) ? destroy({ label: `Delete group ${group}`, id: 'delete-group', title: `Delete policy group ${group}?`,
      lines: [`Its ${pointers.length} pointers go with it; the revisions stay.`, `Nodes in ${group} find no policy on their next run.`],
      run: () => api('DELETE', `${base(ctx.org)}/policy_groups/${enc(group)}`),
      done: () => ctx.show(h('h1', {}, `Policy group ${group}`), h('p.done', { role: 'status' }, `Policy group ${group} deleted. `),
        link(`/o/${o}/groups`, '← all groups')),
      fail: err => report.replaceChildren(failure(err)) }) : null);
  if (from) await showDiff(from);
}

// A cookbook's version and identifier as a person reads them (either may be missing).
const cookbookText = (version, identifier) =>
  `${version || 'no version'}${identifier ? ` (${identifier})` : ''}`;

// The value at a diff's attribute path ("default_attributes.nginx.port") in a lock: keys may
// hold dots, so the longest key that the rest of the path starts with is taken at each level.
function valueAt(lock, path) {
  let v = lock, rest = path;
  while (rest) {
    if (!v || typeof v !== 'object') return undefined;
    const key = Object.keys(v).filter(k => rest === k || rest.startsWith(k + '.')).sort((x, y) => y.length - x.length)[0];
    if (key === undefined) return undefined;
    v = v[key];
    rest = rest.slice(key.length + 1);
  }
  return v;
}
const valueText = v => v === undefined ? '(none)' : JSON.stringify(v);

/** A policy diff (GET .../diff) as lines: the run list's added and removed items, each
 *  cookbook from version (identifier) to version (identifier), each attribute path with its
 *  old and new value (from the two locks, when given); collapsed under a one-line count. */
export function diffSummary(d, fromLock, toLock, open = false, more = null) {
  const lines = [];
  const rl = d.run_list || {}, cb = d.cookbooks || {}, at = d.attributes || {};
  const values = (path, kind) => fromLock && toLock ? [' ',
    kind !== '+' ? h('code.value-old', {}, valueText(valueAt(fromLock, path))) : null,
    kind === '~' ? ' → ' : null,
    kind !== '−' ? h('code.value-new', {}, valueText(valueAt(toLock, path))) : null] : [];
  for (const item of rl.added || []) lines.push(['+', `run list: ${item}`]);
  for (const item of rl.removed || []) lines.push(['−', `run list: ${item}`]);
  for (const [name, v] of Object.entries(cb.added || {})) lines.push(['+', `cookbook ${name} ${cookbookText(v)}`]);
  for (const [name, v] of Object.entries(cb.removed || {})) lines.push(['−', `cookbook ${name} ${cookbookText(v)}`]);
  for (const [name, c] of Object.entries(cb.changed || {}))
    lines.push(['~', `cookbook ${name} ${cookbookText(c.from, c.from_identifier)} → ${cookbookText(c.to, c.to_identifier)}`]);
  for (const path of at.added || []) lines.push(['+', [`attribute ${path}`, ...values(path, '+')]]);
  for (const path of at.removed || []) lines.push(['−', [`attribute ${path}`, ...values(path, '−')]]);
  for (const path of at.changed || []) lines.push(['~', [`attribute ${path}`, ...values(path, '~')]]);
  if (!lines.length) return h('div', {}, 'the same content', more);
  return h('details.diff', { open: open || null }, h('summary', {}, `${lines.length} change${lines.length === 1 ? '' : 's'}`),
    h('ul', {}, lines.map(([mark, text]) => h('li', { 'data-mark': mark }, h('span.mark', { 'aria-hidden': 'true' }, mark), ' ', text))),
    more);
}

// Two revisions of one policy compared as two groups are: the summary, open, and the locks as
// YAML side by side or unified.
export async function comparePage(ctx) {
  const { name, a, b } = ctx.params;
  const o = enc(ctx.org);
  const title = h('h1', {}, `${name}: ${a} → ${b}`), back = link(`/o/${o}/policies/${enc(name)}`, `← ${name}`);
  ctx.context(title, back);
  const lockOf = lockReader(ctx);
  const [d, from, to] = await Promise.all([
    api('GET', `${base(ctx.org)}/policies/${enc(name)}/diff?from_revision=${enc(a)}&to_revision=${enc(b)}`),
    lockOf(name, a), lockOf(name, b)]);
  const summary = await comparison(ctx, name, d, from, to, true);
  const lockDiff = summary.querySelector('details.lock-diff');
  if (lockDiff) lockDiff.open = true;
  ctx.show(title, back, summary);
}

// A node's last run as Chef's ohai_time gives it (seconds since 1970), for when().
const ranAt = t => (typeof t === 'number' && t > 0 ? new Date(t * 1000).toISOString() : '');

// The nodes list: pages of summaries from the API (GET .../nodes?page_size: each node's policy,
// group, the revision its group points at, its platform, address and when it was last saved), sorted and
// filtered by the server, so that 100,000 nodes cost a page each.
export async function nodes(ctx) {
  const group = ctx.query.get('group') || '';
  const policyName = group ? ctx.query.get('policy') || '' : '';
  // the groups to choose from: the first 1,000 by name (a page, not the whole list), and the
  // chosen one's policies
  const groupNames = ((await api('GET', `${base(ctx.org)}/policy_groups?page_size=1000&sort=name`)).items || []).map(g => g.name);
  if (group && !groupNames.includes(group)) groupNames.unshift(group);
  const chosen = group ? await api('GET', `${base(ctx.org)}/policy_groups/${enc(group)}`).catch(() => ({})) : {};
  const policyNames = Object.keys(chosen.policies || {}).sort();
  const choose = (key, value) => {
    if (value) ctx.query.set(key, value); else ctx.query.delete(key);
    if (key === 'group') ctx.query.delete('policy');
    ctx.go(`/o/${enc(ctx.org)}/nodes${ctx.query.toString() ? '?' + ctx.query : ''}`);
  };
  const controls = [
    h('label', { for: 'node-group' }, 'Policy group'),
    h('select', { id: 'node-group', onchange: e => choose('group', e.target.value) },
      h('option', { value: '' }, 'all groups'),
      groupNames.map(g => h('option', { value: g, selected: g === group }, g))),
    group ? h('label', { for: 'node-policy' }, 'Policy') : null,
    group ? h('select', { id: 'node-policy', onchange: e => choose('policy', e.target.value) },
      h('option', { value: '' }, 'all policies'),
      policyNames.map(p => h('option', { value: p, selected: p === policyName }, p))) : null];
  const load = serverPages(`${base(ctx.org)}/nodes`, () => [...(group ? [`policy_group==${group}`] : []),
    ...(policyName ? [`policy_name==${policyName}`] : [])]);
  const o = enc(ctx.org);
  const list = grid(ctx, { noun: 'nodes', load, sort: 'name', controls,
    filter: { label: 'Name', placeholder: 'web or web-*' }, columns: [
      { title: 'Node', sort: 'name', cell: n => link(`/o/${o}/nodes/${enc(n.name)}`, n.name) },
      { title: 'Policy', sort: 'policy_name', cell: n => n.policy_name ? link(`/o/${o}/policies/${enc(n.policy_name)}`, n.policy_name) : '' },
      { title: 'Group', sort: 'policy_group', cell: n => n.policy_group ? link(`/o/${o}/groups/${enc(n.policy_group)}`, n.policy_group) : '' },
      { title: 'Revision', cell: n => n.revision_id && n.policy_name
        ? link(`/o/${o}/policies/${enc(n.policy_name)}/${enc(n.revision_id)}`, n.revision_id.slice(0, 10)) : '' },
      { title: 'Platform', cell: n => [n.platform, n.platform_version].filter(Boolean).join(' ') },
      { title: 'Address', cell: n => n.ipaddress || '' },
      // what it sorts by, updated_at (indexed: sql/0020), not the ohai_time the node page shows:
      // chef-client saves the node as its run ends, so this is the last run's end (or an edit's)
      { title: 'Last saved', sort: 'updated_at', cell: n => when(n.updated_at) },
    ] });
  ctx.show(h('h1', {}, 'Nodes'), list);
  await list.ready;
}

// One node: what it runs (policy, group, the revision its group points at), what its last run
// reported, its run list and attributes; deleted with a confirmation by who may.
export async function nodePage(ctx) {
  const { node } = ctx.params;
  const o = enc(ctx.org);
  const title = h('h1', {}, `Node ${node}`), back = link(`/o/${o}/nodes`, '← all nodes');
  ctx.context(title, back);
  const n = await api('GET', `${base(ctx.org)}/nodes/${enc(node)}`);
  const auto = n.automatic || {};
  let revision = '';
  if (n.policy_group && n.policy_name) {
    try { revision = (await api('GET', `${base(ctx.org)}/policy_groups/${enc(n.policy_group)}/policies/${enc(n.policy_name)}`)).revision_id || ''; }
    catch (err) { if (err.status !== 404) throw err; }
  }
  const result = h('div', {});
  const field = (label, value) => [label, value === undefined || value === null || value === '' ? '—' : value];
  ctx.show(title, back,
    table([{ title: 'Field', cell: r => r[0] }, { title: 'Value', cell: r => r[1] }], [
      field('Policy', n.policy_name ? link(`/o/${o}/policies/${enc(n.policy_name)}`, n.policy_name) : ''),
      field('Policy group', n.policy_group ? link(`/o/${o}/groups/${enc(n.policy_group)}`, n.policy_group) : ''),
      field('Revision its group points at', revision ? link(`/o/${o}/policies/${enc(n.policy_name)}/${enc(revision)}`, revision) : ''),
      field('Platform', [auto.platform, auto.platform_version].filter(Boolean).join(' ')),
      field('Address', auto.ipaddress), field('FQDN', auto.fqdn),
      field('Last check-in', auto.ohai_time ? when(ranAt(auto.ohai_time)) : ''),
      field('Environment', n.chef_environment),
    ]),
    h('h2', {}, 'Run list'), (n.run_list || []).length ? h('ol', {}, n.run_list.map(i => h('li', {}, i))) : h('p', {}, 'empty'),
    ...['normal', 'default', 'override', 'automatic'].map(set => h('details', {},
      h('summary', {}, `${set[0].toUpperCase()}${set.slice(1)} attributes (${Object.keys(n[set] || {}).length} keys)`), h('pre.yaml', {}, yaml(n[set] || {})))),
    ctx.can('write_node') ? h('button.danger', { type: 'button', id: 'delete-node', onclick: async () => {
      if (!await confirmDialog(`Delete node ${node}?`, ['Its attributes and run history here are gone.',
        'Its chef-client registers it again on its next run if its client still exists.'], 'Delete')) return;
      try {
        await api('DELETE', `${base(ctx.org)}/nodes/${enc(node)}`);
        // the page of a node that is gone: what was done and the way back, not its details
        ctx.show(h('h1', {}, `Node ${node}`), h('p.done', { role: 'status' }, `Node ${node} deleted. `, link(`/o/${o}/nodes`, 'Back to the nodes')));
      } catch (err) { result.replaceChildren(failure(err)); }
    } }, 'Delete node') : null,
    result);
}

// The pages this module serves (app.js routes them; lib/registry names this module as theirs).
export const pages = [
  ['/o/:org/policies', policies], ['/o/:org/policies/:name', policyPage],
  ['/o/:org/policies/:name/:rev', revisionPage], ['/o/:org/policies/:name/compare/:a/:b', comparePage],
  ['/o/:org/groups', groups], ['/o/:org/groups/:group', groupPage],
  ['/o/:org/nodes', nodes], ['/o/:org/nodes/:node', nodePage],
];

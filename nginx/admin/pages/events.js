// events.js: the organization's recent changes, live: the event feed read with wait= (nginx
// holds the wait, not a purser worker), newest first, filtered by kinds (the API's kinds=)
// and by actor (the API's actor=), both kept in the page's address; it opens at the newest
// events (last=) without reading the log, and links each event to its object's page where that
// is there and the signed-in principal may open it ("deleted" when a later event deleted it).
import { api, enc } from '../api.js';
import { h, table, link, failure, spinner, when } from '../dom.js';

const KEEP = 200;

// The filter form: kinds (comma-separated, as the API takes them) and actor.
function filters(ctx, kinds, actor) {
  return h('form.filters', { onsubmit: e => {
    e.preventDefault();
    const q = new URLSearchParams();
    if (e.target.kinds.value.trim()) q.set('kinds', e.target.kinds.value.replace(/\s+/g, ''));
    if (e.target.actor.value.trim()) q.set('actor', e.target.actor.value.trim());
    ctx.go(`/o/${enc(ctx.org)}/events${q.toString() ? '?' + q : ''}`);
  } },
    h('label', { for: 'ev-kinds' }, 'Kinds'), h('input', { id: 'ev-kinds', name: 'kinds', value: kinds, placeholder: 'cluster,policy_group' }),
    h('label', { for: 'ev-actor' }, 'By'), h('input', { id: 'ev-actor', name: 'actor', value: actor }),
    h('button', { type: 'submit' }, 'Filter'));
}

// An event's object: the key its later events share (a cluster's facts are the cluster's, a
// revision's tags and validations the revision's), the page it has while it is there, the
// action that opens it, and where a delete of it leaves the reader (its list).
function objectOf(ctx, e) {
  const o = `/o/${enc(ctx.org)}`, [x, y] = String(e.name || '').split('/'), n = enc(e.name);
  const me = ctx.perms.principal, admin = ctx.perms.server_admin;
  const cluster = { key: `cluster:${x}`, page: `${o}/clusters/${enc(x)}`, action: 'read_cluster', list: `${o}/clusters` };
  const revision = { key: `document_revision:${x}`, page: `${o}/documents/${enc(x)}`, action: 'read_revision', list: `${o}/documents` };
  return {
    cluster: { ...cluster, own: true }, facts: cluster, bootstrap_token_reset: cluster,
    node: { key: `node:${e.name}`, own: true, page: `${o}/nodes/${n}`, action: 'read_node', list: `${o}/nodes` },
    policy: { list: `${o}/policies`, action: 'read_policy' }, policy_group: { list: `${o}/groups`, action: 'read_policy_group' },
    policy_revision: { key: `policy_revision:${x}/${y}`, own: true, parent: `policy:${x}`, page: `${o}/policies/${enc(x)}/${enc(y)}`,
      action: 'read_policy', list: `${o}/policies/${enc(x)}` },
    policy_group_pointer: { list: `${o}/groups/${enc(x)}`, action: 'read_policy_group' },
    document_revision: e.name === '*' ? { list: `${o}/documents`, action: 'read_revision' } : { ...revision, own: true, parent: 'document_revision:*' },
    tag: { ...revision, parent: 'document_revision:*' }, validation: { ...revision, parent: 'document_revision:*' },
    member: { list: `${o}/members`, action: 'read_members' },
    // a user's page opens for a server admin and the user itself (as the members list links it)
    user: { key: `user:${e.name}`, own: true, page: `${o}/users/${n}`, mayOpen: admin || e.name === me },
    client: { key: `client:${e.name}`, own: true, page: `${o}/clients/${n}`, action: 'read_clients', list: `${o}/members` },
    // "My tokens" lists the signed-in user's own: another user's token links nowhere
    token: { key: `token:${e.name}`, own: true, page: `${o}/tokens`, mine: true },
  }[e.kind] || {};
}

// What happened to each object within the events read (newest first): its key -> the op of
// its newest event, and a delete's seq (the newest) for what a delete takes with it. A delete
// makes the object's earlier events say "deleted" instead of linking to a page that is gone
// (the rows are the newest events, so a later delete is among them): a policy's delete takes
// its revisions, a purge of the documents (document_revision *) every revision before it.
function history(ctx, events) {
  const newest = new Map(), deleted = new Map();
  for (const e of events) {
    const { key, own } = objectOf(ctx, e);
    if (key && own && !newest.has(key)) newest.set(key, e.op);
    if (e.op === 'delete' && !deleted.has(`${e.kind}:${e.name}`)) deleted.set(`${e.kind}:${e.name}`, e.seq);
  }
  return { newest, deleted };
}

// The page of an event's object where it is there and the signed-in principal may open it;
// what was deleted since says so (a delete links to the object's list); else the name alone.
function objectLink(ctx, e, seen, mine) {
  const t = objectOf(ctx, e);
  const may = t.mine ? mine.has(e.name) : t.mayOpen !== undefined ? t.mayOpen : !t.action || ctx.can(t.action);
  const gone = (t.own && e.op === 'delete') || (t.key && seen.newest.get(t.key) === 'delete') ||
    (t.parent && (seen.deleted.get(t.parent) || 0) > e.seq);
  if (gone) return t.list && e.op === 'delete' && (!t.action || ctx.can(t.action))
    ? h('span', {}, link(t.list, e.name), ' (deleted)') : `${e.name} (deleted)`;
  if (!may) return e.name;
  return t.page ? link(t.page, e.name) : t.list ? link(t.list, e.name) : e.name;
}

export async function live(ctx) {
  const kinds = ctx.query.get('kinds') || '', actor = ctx.query.get('actor') || '';
  const rows = [];
  // the signed-in user's own tokens (a token's event links "My tokens" only for one of them)
  const mine = new Set(await api('GET', `/users/${enc(ctx.perms.principal)}/tokens?page_size=1000`)
    .then(p => (p.items || []).map(t => t.metadata.name), () => []));
  // with an actor filter the rows lack others' deletes: what happened last is read without it
  let context = [];
  const keep = events => {
    rows.unshift(...events.slice().reverse());
    rows.length = Math.min(rows.length, KEEP);
  };
  const holder = h('div', {}, spinner('Reading the latest changes…'));
  const status = h('p.live', { role: 'status', 'aria-live': 'polite' }, 'Following…');
  const what = [kinds && `kinds ${kinds}`, actor && `by ${actor}`].filter(Boolean).join(', ');
  const render = () => { const seen = history(ctx, [...rows, ...context].sort((a, b) => b.seq - a.seq)); holder.replaceChildren(table([
    { title: 'Seq', cell: e => String(e.seq) }, { title: 'When', cell: e => when(e.at) },
    { title: 'Kind', cell: e => e.kind }, { title: 'Name', cell: e => objectLink(ctx, e, seen, mine) },
    { title: 'Op', cell: e => e.op }, { title: 'By', cell: e => e.actor },
  ], rows, `the latest ${KEEP} changes${what ? ` (${what})` : ''}, newest first`)); };
  const title = h('h1', {}, 'Recent changes'), form = filters(ctx, kinds, actor);
  ctx.context(title, form);
  ctx.show(title, form, status, holder);
  const controller = new AbortController();
  ctx.onLeave(() => controller.abort());
  const path = `/organizations/${enc(ctx.org)}/events`;
  const extra = (kinds ? `&kinds=${enc(kinds)}` : '') + (actor ? `&actor=${enc(actor)}` : '');
  const read = (since, rest) => api('GET', `${path}?since=${since}${extra}${rest}`, undefined, { signal: controller.signal });
  // the newest events in one request (last=), then followed from the seq it ends at
  const first = await api('GET', `${path}?last=${KEEP}${extra}`, undefined, { signal: controller.signal });
  keep(first.events);
  if (actor) context = (await api('GET', `${path}?last=1000${kinds ? `&kinds=${enc(kinds)}` : ''}`, undefined,
    { signal: controller.signal })).events.slice().reverse();
  let since = first.next;
  render();
  follow(read, () => since, s => { since = s; }, keep, render, status, holder, controller);
}

// Follows the feed with wait= until the page is left.
async function follow(read, getSince, setSince, keep, render, status, holder, controller) {
  while (!controller.signal.aborted) {
    try {
      const page = await read(getSince(), '&wait=25');
      if (page.events.length) { keep(page.events); render(); }
      setSince(page.next);
      status.textContent = `Following (last seq ${page.next})`;
    } catch (err) {
      if (controller.signal.aborted || err.status === 401) return;
      if (err.status === 410) { setSince(err.body && err.body.oldest_seq ? err.body.oldest_seq - 1 : 0); continue; }
      holder.prepend(failure(err));
      await new Promise(r => setTimeout(r, 5000));
    }
  }
}

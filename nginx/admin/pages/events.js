// events.js: the organization's recent changes, live: the event feed read with wait= (nginx
// holds the wait, not a purser worker), newest first, filtered by kinds (the API's kinds=)
// and by actor (the API's actor=), both kept in the page's address; it opens at the newest
// events (last=) without reading the log, and links each event to its object's page where that
// is there and the signed-in principal may open it ("deleted" when a later event deleted it).
import { api, enc, fill, kinds as registryKinds } from '../api.js';
import { h, table, link, failure, spinner, when } from '../dom.js';

const KEEP = 200;

// The filter form: kinds (comma-separated, as the API takes them) and actor.
function filters(ctx, kinds, actor, example) {
  return h('form.filters', { onsubmit: e => {
    e.preventDefault();
    const q = new URLSearchParams();
    if (e.target.kinds.value.trim()) q.set('kinds', e.target.kinds.value.replace(/\s+/g, ''));
    if (e.target.actor.value.trim()) q.set('actor', e.target.actor.value.trim());
    ctx.go(`/o/${enc(ctx.org)}/events${q.toString() ? '?' + q : ''}`);
  } },
    h('label', { for: 'ev-kinds' }, 'Kinds'), h('input', { id: 'ev-kinds', name: 'kinds', value: kinds, placeholder: example }),
    h('label', { for: 'ev-actor' }, 'By'), h('input', { id: 'ev-actor', name: 'actor', value: actor }),
    h('button', { type: 'submit' }, 'Filter'));
}

// An event's object, as the registry's kinds say of their events (x-purser-kinds: lib/registry):
// the key its later events share (a cluster's facts are the cluster's, a revision's tags and
// validations the revision's), the page it has while it is there, the action that opens it,
// and where a delete of it leaves the reader (its list). {0} and {1} in a template are the
// name's parts (split at '/'), {name} the whole.
let eventKinds = new Map(); // event kind -> {kind, event}
function objectOf(ctx, e) {
  const found = eventKinds.get(e.kind);
  if (!found) return {};
  const { kind, event } = found, o = `/o/${enc(ctx.org)}`;
  const name = String(e.name || ''), parts = name.split('/');
  const fillIn = (template, code) => template.replace(/\{(\d|name)\}/g, (whole, i) => code(i === 'name' ? name : parts[+i] || ''));
  const action = event.action === undefined ? kind.read : event.action || undefined;
  if (event.all && name === '*') return { list: event.list && `${o}/${fillIn(event.list, enc)}`, action };
  const t = { action };
  if (event.key) t.key = fillIn(event.key, v => v);
  if (event.page) t.page = `${o}/${fillIn(event.page, enc)}`;
  if (event.list) t.list = `${o}/${fillIn(event.list, enc)}`;
  if (event.parent) t.parent = fillIn(event.parent, v => v);
  if (event.own) t.own = true;
  if (event.mine) t.mine = true; // opens only for the signed-in user's own (its tokens)
  // opens for a server admin and the object itself (a user's page, as the members list links it)
  if (event.self) t.mayOpen = ctx.perms.server_admin || name === ctx.perms.principal;
  return t;
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
  const rows = [], registry = await registryKinds();
  eventKinds = new Map(registry.flatMap(kind => (kind.events || []).map(event => [event.kind, { kind, event }])));
  // the signed-in user's own of the kind whose events open only for them (its tokens: a
  // token's event links "My tokens" only for one of them)
  const own = registry.find(k => (k.events || []).some(ev => ev.mine));
  const mine = new Set(own ? await api('GET', `${fill(own.list, { user: ctx.perms.principal })}?page_size=1000`)
    .then(p => (p.items || []).map(t => t.metadata.name), () => []) : []);
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
  const title = h('h1', {}, 'Recent changes'), form = filters(ctx, kinds, actor, [...eventKinds.keys()].slice(0, 2).join(','));
  ctx.context(title, form);
  ctx.show(title, form, status, holder);
  const controller = new AbortController();
  ctx.onLeave(() => controller.abort());
  const path = fill(registry.find(k => k.name === 'event').list, { org: ctx.org });
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

// The pages this module serves (app.js routes them; lib/registry names this module as theirs).
export const pages = [['/o/:org/events', live]];

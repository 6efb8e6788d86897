// events.js: the organization's recent changes, live: the event feed read with wait= (nginx
// holds the wait, not a purser worker), newest first, filtered by kinds (the API's kinds=)
// and by actor (the API's actor=), both kept in the page's address; it opens at the newest
// events (last=) without reading the log, and links each event to its object's page.
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

// The page of an event's object, where it has one (what was deleted links to its list).
function objectLink(ctx, e) {
  const o = `/o/${enc(ctx.org)}`, [x, y] = String(e.name || '').split('/');
  const gone = e.op === 'delete';
  const to = {
    cluster: gone ? `${o}/clusters` : `${o}/clusters/${enc(e.name)}`,
    facts: `${o}/clusters/${enc(e.name)}`, bootstrap_token_reset: `${o}/clusters/${enc(e.name)}`,
    node: gone ? `${o}/nodes` : `${o}/nodes/${enc(e.name)}`,
    policy: `${o}/policies`, policy_group: `${o}/groups`,
    policy_revision: gone ? `${o}/policies/${enc(x)}` : `${o}/policies/${enc(x)}/${enc(y)}`,
    policy_group_pointer: `${o}/groups/${enc(x)}`,
    document_revision: e.name === '*' || gone ? `${o}/documents` : `${o}/documents/${enc(e.name)}`,
    tag: `${o}/documents/${enc(x)}`, validation: `${o}/documents/${enc(x)}`,
    member: `${o}/members`, user: `${o}/users/${enc(e.name)}`,
    client: gone ? `${o}/members` : `${o}/clients/${enc(e.name)}`, token: `${o}/tokens`,
  }[e.kind];
  return to ? link(to, e.name) : e.name;
}

export async function live(ctx) {
  const kinds = ctx.query.get('kinds') || '', actor = ctx.query.get('actor') || '';
  const rows = [];
  const keep = events => {
    rows.unshift(...events.slice().reverse());
    rows.length = Math.min(rows.length, KEEP);
  };
  const holder = h('div', {}, spinner('Reading the latest changes…'));
  const status = h('p.live', { role: 'status', 'aria-live': 'polite' }, 'Following…');
  const what = [kinds && `kinds ${kinds}`, actor && `by ${actor}`].filter(Boolean).join(', ');
  const render = () => holder.replaceChildren(table([
    { title: 'Seq', cell: e => String(e.seq) }, { title: 'When', cell: e => when(e.at) },
    { title: 'Kind', cell: e => e.kind }, { title: 'Name', cell: e => objectLink(ctx, e) },
    { title: 'Op', cell: e => e.op }, { title: 'By', cell: e => e.actor },
  ], rows, `the latest ${KEEP} changes${what ? ` (${what})` : ''}, newest first`));
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

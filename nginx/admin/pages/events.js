// events.js: the organization's recent changes, live: the event feed read with wait= (nginx
// holds the wait, not a purser worker), newest first, filtered by kinds (the API's kinds=)
// and by actor (here), both kept in the page's address.
import { api, enc } from '../api.js';
import { h, table, failure, spinner, when } from '../dom.js';

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

export async function live(ctx) {
  const kinds = ctx.query.get('kinds') || '', actor = ctx.query.get('actor') || '';
  const rows = [];
  const keep = events => {
    rows.unshift(...events.filter(e => !actor || e.actor === actor).reverse());
    rows.length = Math.min(rows.length, KEEP);
  };
  const holder = h('div', {}, spinner('Reading the latest changes…'));
  const status = h('p.live', { role: 'status', 'aria-live': 'polite' }, 'Following…');
  const what = [kinds && `kinds ${kinds}`, actor && `by ${actor}`].filter(Boolean).join(', ');
  const render = () => holder.replaceChildren(table([
    { title: 'Seq', cell: e => String(e.seq) }, { title: 'When', cell: e => when(e.at) },
    { title: 'Kind', cell: e => e.kind }, { title: 'Name', cell: e => e.name },
    { title: 'Op', cell: e => e.op }, { title: 'By', cell: e => e.actor },
  ], rows, `the latest ${KEEP} changes${what ? ` (${what})` : ''}, newest first`));
  const title = h('h1', {}, 'Recent changes'), form = filters(ctx, kinds, actor);
  ctx.context(title, form);
  ctx.show(title, form, status, holder);
  const controller = new AbortController();
  ctx.onLeave(() => controller.abort());
  const path = `/organizations/${enc(ctx.org)}/events`;
  const extra = kinds ? `&kinds=${enc(kinds)}` : '';
  const read = (since, rest) => api('GET', `${path}?since=${since}${extra}${rest}`, undefined, { signal: controller.signal });
  // The newest events: the API answers from a seq onwards only, so the log is walked to its
  // end, keeping the last 200 (GET events would need its newest seq, or newest-first pages, to
  // start near the end).
  let since = 0;
  for (;;) {
    let page;
    try { page = await read(since, '&page_size=1000'); } catch (err) {
      if (err.status === 410 && err.body && err.body.oldest_seq) { since = err.body.oldest_seq - 1; continue; }
      throw err;
    }
    keep(page.events);
    if (page.next === since || page.events.length < 1000) { since = page.next; break; }
    since = page.next;
  }
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

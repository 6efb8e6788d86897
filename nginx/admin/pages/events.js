// events.js: the organization's recent changes, live: the event feed read with wait= (nginx
// holds the wait, not a purser worker), newest first.
import { api, enc } from '../api.js';
import { h, table, failure } from '../dom.js';

export async function live(ctx) {
  const rows = [];
  const holder = h('div', {});
  const status = h('p.live', { role: 'status', 'aria-live': 'polite' }, 'Following…');
  const render = () => holder.replaceChildren(table([
    { title: 'Seq', cell: e => String(e.seq) }, { title: 'When', cell: e => e.at },
    { title: 'Kind', cell: e => e.kind }, { title: 'Name', cell: e => e.name },
    { title: 'Op', cell: e => e.op }, { title: 'By', cell: e => e.actor },
  ], rows.slice(0, 200), 'the latest 200 changes, newest first'));
  ctx.show(h('h1', {}, 'Recent changes'), status, holder);
  const controller = new AbortController();
  ctx.onLeave(() => controller.abort());
  const path = `/organizations/${enc(ctx.org)}/events`;
  // the newest events first: walk to the end, keeping the last 200
  let since = 0;
  for (;;) {
    const page = await api('GET', `${path}?since=${since}&page_size=1000`, undefined, { signal: controller.signal });
    rows.unshift(...page.events.slice().reverse());
    rows.length = Math.min(rows.length, 200);
    if (page.next === since || page.events.length < 1000) { since = page.next; break; }
    since = page.next;
  }
  render();
  (async () => {
    while (!controller.signal.aborted) {
      try {
        const page = await api('GET', `${path}?since=${since}&wait=25`, undefined, { signal: controller.signal });
        if (page.events.length) { rows.unshift(...page.events.slice().reverse()); rows.length = Math.min(rows.length, 200); render(); }
        since = page.next;
        status.textContent = `Following (last seq ${since})`;
      } catch (err) {
        if (controller.signal.aborted) return;
        if (err.status === 410) { since = 0; continue; }
        holder.prepend(failure(err));
        await new Promise(r => setTimeout(r, 5000));
      }
    }
  })();
}

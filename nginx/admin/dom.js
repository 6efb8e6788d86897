// dom.js: building the page. Every value from the API goes in as text (textContent or an
// attribute set by setAttribute on a fixed name): nothing the API says is ever parsed as HTML.

/** h('tag.class', {attr: value, onclick: fn}, ...children): an element. Children are nodes,
 *  strings (as text), arrays, or null (skipped). */
export function h(spec, attrs, ...children) {
  const [tag, ...classes] = spec.split('.');
  const el = document.createElement(tag || 'div');
  if (classes.length) el.className = classes.join(' ');
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'value') el.value = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces what main shows, and moves the focus there for keyboard and reader users. */
export function show(...children) {
  const main = document.getElementById('main');
  main.replaceChildren();
  append(main, children);
  // the tab's and the history's title: the page's heading and organization ("Node web1 · acme · purser")
  const heading = main.querySelector('h1'), org = (location.hash.match(/^#\/o\/([^/?]+)/) || [])[1];
  let orgName = null;
  try { orgName = org && decodeURIComponent(org); } catch { orgName = org; }
  document.title = [heading && heading.textContent.trim(), orgName, 'purser'].filter(Boolean).join(' · ');
}

export function spinner(text = 'Loading…') {
  return h('p.loading', { role: 'status' }, text);
}

/** The API's own error message, with the action a 403 names. */
export function failure(err) {
  return h('div.error', { role: 'alert' }, h('strong', {}, `${err.status || ''} `), err.message || String(err));
}

const pad = n => String(n).padStart(2, '0');
const utcText = d => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} UTC`;

/** How long ago a moment was, in words ("3 min ago"); a moment ahead: "in 3 min". */
export function relative(date, now = Date.now()) {
  const s = Math.round((now - date.getTime()) / 1000), a = Math.abs(s);
  const [n, unit] = a < 10 ? [0, ''] : a < 60 ? [a, 's'] : a < 3600 ? [Math.floor(a / 60), 'min']
    : a < 86400 ? [Math.floor(a / 3600), 'h'] : a < 86400 * 60 ? [Math.floor(a / 86400), 'days']
    : a < 86400 * 730 ? [Math.floor(a / 86400 / 30), 'months'] : [Math.floor(a / 86400 / 365), 'years'];
  if (!unit) return 'just now';
  const words = `${n} ${n === 1 ? unit.replace(/s$/, '') : unit}`;
  return s < 0 ? `in ${words}` : `${words} ago`;
}

/** A time from the API (ISO 8601), the one way every page shows one: relative, with the exact
 *  local and UTC time on hover. Empty or unreadable: as given (or fallback). */
export function when(iso, fallback = '') {
  if (!iso) return fallback;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return h('time', { datetime: d.toISOString(), title: `${d.toLocaleString()} (local) · ${utcText(d)}` }, relative(d));
}

/** A table of rows; columns: [{title, cell: row => node|string}]. Each cell carries its
 *  column's title (data-label), which the phone layout shows beside it. */
export function table(columns, rows, caption, head) {
  return h('div.table-wrap', {},
    h('table', {},
      caption ? h('caption', {}, caption) : null,
      h('thead', {}, h('tr', {}, head || columns.map(c => h('th', { scope: 'col' }, c.title)))),
      h('tbody', {}, rows.length ? rows.map(r => h('tr', {}, columns.map(c => h('td', { 'data-label': c.title || null }, c.cell(r)))))
        : h('tr', {}, h('td', { colspan: columns.length }, 'Nothing here.')))));
}

/** The one list of the pages: sortable columns, pages with previous and next, a total (or an
 *  honest "more follow"), and a filter; its sort, filter and page kept in the page's address
 *  (sort=, q=, page=N.TOKEN) so that reload, back and a shared link keep them.
 *  opts: {columns: [{title, cell, sort: key}], noun, pageSize (100), sort (the default),
 *         filter: {label, placeholder} or null, controls: nodes shown beside the filter,
 *         load: async ({sort, q, token, size}) => {items, next ('' at the end), total?}, or
 *         rows: an array (sorted, filtered and paged here: column.value(row) sorts it,
 *         text(row) is what the filter reads)}.
 *  A server list's tokens are remembered as the user goes forward, so Previous goes back. */
const collator = new Intl.Collator(undefined, { numeric: true });

export function grid(ctx, opts) {
  const size = opts.pageSize || 100;
  const key = opts.key ? opts.key + '.' : '';
  // a sort the address asks that no column offers (an old link's key) gives the default order
  const asked = ctx.query.get(key + 'sort');
  const offered = opts.columns.some(c => c.sort && (asked === c.sort || asked === '-' + c.sort));
  const state = { sort: (offered && asked) || opts.sort || '', q: ctx.query.get(key + 'q') || '', tokens: [''], at: 0 };
  // the page shown is kept in the address too ("page=3.TOKEN": its number and the server's
  // token for it), so that Back and a reload come back to it; Previous from such a page goes to
  // the first, whose tokens it no longer has
  const kept = /^(\d+)\.(.*)$/.exec(ctx.query.get(key + 'page') || '');
  let restored = false;
  if (kept && Number(kept[1]) > 1) { state.at = Number(kept[1]) - 1; state.tokens = []; state.tokens[state.at] = kept[2]; restored = true; }
  const body = h('div.grid-body', {}, spinner());
  const save = () => {
    for (const [k, v] of [['sort', state.sort === (opts.sort || '') ? '' : state.sort], ['q', state.q],
      ['page', state.at ? `${state.at + 1}.${state.tokens[state.at]}` : '']])
      if (v) ctx.query.set(key + k, v); else ctx.query.delete(key + k);
    ctx.setQuery(ctx.query);
  };
  const load = opts.load || (async ({ sort, q, token }) => {
    const col = opts.columns.find(c => c.sort && (c.sort === sort || '-' + c.sort === sort));
    let rows = q ? opts.rows.filter(r => (opts.text ? opts.text(r) : '').toLowerCase().includes(q.toLowerCase())) : opts.rows;
    if (col && col.value) {
      const dir = sort.startsWith('-') ? -1 : 1, v = col.value;
      rows = rows.slice().sort((a, b) => {
        const x = v(a), y = v(b);
        return dir * (typeof x === 'number' && typeof y === 'number' ? x - y : collator.compare(String(x ?? ''), String(y ?? '')));
      });
    }
    const from = Number(token) || 0;
    return { items: rows.slice(from, from + size), next: from + size < rows.length ? String(from + size) : '', total: rows.length };
  });
  let mine = 0;
  // focus: what to give the keyboard focus back to once the table is rebuilt (the sort button
  // of a column, or the pager's button), so that a keyboard user stays where they were
  const render = async (focus = null) => {
    const ask = ++mine;
    body.setAttribute('aria-busy', 'true');
    let page;
    try {
      page = await load({ sort: state.sort, q: state.q, token: state.tokens[state.at], size });
    } catch (err) {
      // a page kept in the address that the server no longer knows (its token expired): the first
      if (ask === mine && restored && err.status === 400) { restored = false; state.tokens = ['']; state.at = 0; save(); return render(focus); }
      if (ask === mine) { body.removeAttribute('aria-busy'); body.replaceChildren(failure(err)); }
      return;
    }
    restored = false;
    if (ask !== mine) return;
    body.removeAttribute('aria-busy');
    const items = page.items || [];
    if (page.next) state.tokens[state.at + 1] = page.next;
    const first = state.at * size + 1, last = state.at * size + items.length;
    if (page.total === undefined && !page.next) page.total = last; // the last page tells the total
    const caption = !items.length ? `No ${opts.noun}${state.q ? ` match “${state.q}”` : ''}`
      : page.total !== undefined ? `${first}–${last} of ${page.total} ${opts.noun}`
      : `${first}–${last} ${opts.noun}${page.next ? ', more follow' : ''}`;
    const head = opts.columns.map(c => {
      if (!c.sort) return h('th', { scope: 'col' }, c.title);
      const on = state.sort === c.sort ? 'ascending' : state.sort === '-' + c.sort ? 'descending' : null;
      return h('th.sortable', { scope: 'col', 'aria-sort': on },
        h('button.sort', { type: 'button', 'data-sort': c.sort, onclick: () => {
          state.sort = on === 'ascending' ? '-' + c.sort : c.sort;
          state.tokens = ['']; state.at = 0; save(); render({ sort: c.sort });
        } }, c.title, h('span.arrow', { 'aria-hidden': 'true' }, on === 'ascending' ? ' ▲' : on === 'descending' ? ' ▼' : ' ↕')));
    });
    const pages = page.total !== undefined ? Math.max(1, Math.ceil(page.total / size)) : null;
    const pager = (state.at > 0 || page.next) ? h('nav.pager', { 'aria-label': `Pages of ${opts.noun}` },
      h('button', { type: 'button', rel: 'prev', disabled: state.at === 0, onclick: () => {
        state.at = state.tokens[state.at - 1] === undefined ? 0 : state.at - 1; save(); render({ pager: 'prev' });
      } }, '← Previous'),
      h('span', {}, `Page ${state.at + 1}${pages ? ` of ${pages}` : ''}`),
      h('button', { type: 'button', rel: 'next', disabled: !page.next, onclick: () => { state.at++; save(); render({ pager: 'next' }); } }, 'Next →')) : null;
    body.replaceChildren(...[table(opts.columns, items, caption, head), pager].filter(Boolean));
    const again = !focus ? null : focus.sort ? [...body.querySelectorAll('button.sort')].find(b => b.dataset.sort === focus.sort)
      : body.querySelector(`nav.pager button[rel="${focus.pager}"]:not([disabled])`) || body.querySelector('nav.pager button:not([disabled])');
    if (again) again.focus();
  };
  let timer = null;
  const id = 'q-' + (opts.key || Math.random().toString(36).slice(2));
  const filter = opts.filter === null ? null : h('form.filter', { role: 'search', 'aria-label': `Filter the ${opts.noun}`, onsubmit: e => e.preventDefault() },
    h('label', { for: id }, (opts.filter || {}).label || 'Filter'),
    h('input', { id, type: 'search', value: state.q, placeholder: (opts.filter || {}).placeholder || null, oninput: e => {
      clearTimeout(timer);
      timer = setTimeout(() => { state.q = e.target.value.trim(); state.tokens = ['']; state.at = 0; save(); render(); }, opts.load ? 250 : 0);
    } }), opts.controls || null);
  const holder = h('div.grid', {}, filter, body);
  holder.reload = render; // the same page again, after a change made here
  holder.ready = render();
  return holder;
}

/** A link inside the pages (hash routes). */
export function link(path, text) {
  return h('a', { href: '#' + path }, text);
}

/** Asks before a destructive action; resolves true when confirmed. */
export function confirmDialog(title, lines, action) {
  const opener = document.activeElement; // the focus goes back there when the dialog closes
  const back = () => { if (opener && opener.isConnected) opener.focus(); };
  return new Promise(resolve => {
    const dialog = h('dialog', { 'aria-labelledby': 'confirm-title' },
      h('h2', { id: 'confirm-title' }, title),
      h('ul', {}, lines.map(l => h('li', {}, l))),
      h('div.actions', {},
        h('button', { type: 'button', onclick: () => { dialog.close(); dialog.remove(); back(); resolve(false); } }, 'Cancel'),
        h('button.danger', { type: 'button', onclick: () => { dialog.close(); dialog.remove(); back(); resolve(true); } }, action)));
    document.body.append(dialog);
    dialog.addEventListener('cancel', () => { dialog.remove(); back(); resolve(false); });
    dialog.showModal();
  });
}

/** A destructive action's button: asks (title, lines: its lines, or an async function giving them;
 *  verb) first, then run(); done() after,
 *  fail(err) on an error (the API's message). */
export function destroy({ label, aria, id, title, lines, verb = 'Delete', run, done, fail }) {
  return h('button.danger', { type: 'button', id: id || null, 'aria-label': aria || null, onclick: async () => {
    let said = lines; // (a function: what to say is read when asked)
    if (typeof lines === 'function') try { said = await lines(); } catch (err) { fail(err); return; }
    if (!await confirmDialog(title, said, verb)) return;
    try { await run(); await done(); } catch (err) { fail(err); }
  } }, label);
}

/** A secret shown once, with a copy button (a token in a field, a private key in a box of lines). */
export function secretOnce(label, secret) {
  const id = 'secret-' + Math.random().toString(36).slice(2);
  return h('div.secret', { role: 'status' },
    h('label', { for: id }, `${label} (shown once: copy it now)`),
    secret.includes('\n') // a key's PEM keeps its lines (a one-line input would join them)
      ? h('textarea', { id, readonly: true, rows: Math.min(secret.split('\n').length, 8), value: secret })
      : h('input', { id, readonly: true, value: secret }),
    h('button', { type: 'button', onclick: async e => {
      try { await navigator.clipboard.writeText(secret); e.target.textContent = 'Copied'; }
      catch { document.getElementById(id).select(); e.target.textContent = 'Press Ctrl+C'; }
    } }, 'Copy'));
}

export function pre(value) {
  return h('pre', {}, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}

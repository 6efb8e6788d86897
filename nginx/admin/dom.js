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

/** A table of rows; columns: [{title, cell: row => node|string}]. */
export function table(columns, rows, caption) {
  return h('div.table-wrap', {},
    h('table', {},
      caption ? h('caption', {}, caption) : null,
      h('thead', {}, h('tr', {}, columns.map(c => h('th', { scope: 'col' }, c.title)))),
      h('tbody', {}, rows.length ? rows.map(r => h('tr', {}, columns.map(c => h('td', {}, c.cell(r)))))
        : h('tr', {}, h('td', { colspan: columns.length }, 'Nothing here yet.')))));
}

/** A list that grows by pages as the user asks, so that a long one never freezes the page. */
export function paged(columns, rows, caption, pageSize = 100) {
  let shown = Math.min(pageSize, rows.length);
  const holder = h('div', {});
  const render = () => {
    holder.replaceChildren(table(columns, rows.slice(0, shown), caption));
    if (shown < rows.length)
      holder.append(h('button', { type: 'button', onclick: () => { shown += pageSize; render(); } },
        `Show more (${rows.length - shown} left)`));
  };
  render();
  return holder;
}

/** A link inside the pages (hash routes). */
export function link(path, text) {
  return h('a', { href: '#' + path }, text);
}

/** A text filter over a list: calls onfilter(text) as the user types. */
export function filterBox(label, value, onfilter) {
  const id = 'filter-' + Math.random().toString(36).slice(2);
  return h('div.filter', {}, h('label', { for: id }, label),
    h('input', { id, type: 'search', value: value || '', oninput: e => onfilter(e.target.value) }));
}

/** Asks before a destructive action; resolves true when confirmed. */
export function confirmDialog(title, lines, action) {
  return new Promise(resolve => {
    const dialog = h('dialog', { 'aria-labelledby': 'confirm-title' },
      h('h2', { id: 'confirm-title' }, title),
      h('ul', {}, lines.map(l => h('li', {}, l))),
      h('div.actions', {},
        h('button', { type: 'button', onclick: () => { dialog.close(); dialog.remove(); resolve(false); } }, 'Cancel'),
        h('button.danger', { type: 'button', onclick: () => { dialog.close(); dialog.remove(); resolve(true); } }, action)));
    document.body.append(dialog);
    dialog.addEventListener('cancel', () => { dialog.remove(); resolve(false); });
    dialog.showModal();
  });
}

/** A secret shown once, with a copy button. */
export function secretOnce(label, secret) {
  const id = 'secret-' + Math.random().toString(36).slice(2);
  return h('div.secret', { role: 'status' },
    h('label', { for: id }, `${label} (shown once: copy it now)`),
    h('input', { id, readonly: true, value: secret }),
    h('button', { type: 'button', onclick: async e => {
      try { await navigator.clipboard.writeText(secret); e.target.textContent = 'Copied'; }
      catch { document.getElementById(id).select(); e.target.textContent = 'Press Ctrl+C'; }
    } }, 'Copy'));
}

export function pre(value) {
  return h('pre', {}, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}

/** A paged list with a text filter kept in the page's address (?q=): rows whose text(row)
 *  contains what is typed. */
export function filtered(ctx, columns, rows, noun, text, pageSize = 100) {
  const holder = h('div', {});
  const render = q => {
    const shown = q ? rows.filter(r => text(r).toLowerCase().includes(q.toLowerCase())) : rows;
    holder.replaceChildren(paged(columns, shown, `${shown.length} of ${rows.length} ${noun}`, pageSize));
  };
  const q = ctx.query.get('q') || '';
  const box = filterBox('Filter', q, v => {
    if (v) ctx.query.set('q', v); else ctx.query.delete('q');
    ctx.setQuery(ctx.query);
    render(v);
  });
  render(q);
  return h('div', {}, box, holder);
}

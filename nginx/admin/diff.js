// diff.js: values as YAML, and the difference of two texts the way GitHub shows one: unified
// (one column, - and + lines) or side by side (old left, new right), changed lines marked,
// long runs of unchanged lines folded. Everything is text (dom.js's h): nothing is parsed as HTML.
import { h } from './dom.js';

const plain = /^[A-Za-z0-9_./-][A-Za-z0-9_ ./@:+-]*$/;
const reserved = /^(true|false|null|yes|no|on|off|y|n|~|[-+]?(\d[\d_]*)?(\.\d*)?([eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o?[0-7]+|[-+]?\.(inf|nan)|\d{4}-\d\d?-\d\d?([Tt ].*)?|\d+(:\d+)+)$/i;

/** A scalar as YAML writes it: plain when that reads back as the same string, quoted otherwise. */
function scalar(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number') { const t = String(v); return /e/.test(t) && !/\./.test(t) ? t.replace('e', '.0e') : t; } // 1e+21: a float to YAML 1.1
  if (typeof v !== 'string') return String(v);
  if (v === '' || !plain.test(v) || reserved.test(v) || /: |:$|^- |\s$/.test(v)) return quoted(v);
  return v;
}

// JSON's quoting is YAML's double-quoted style, once the characters YAML takes for line breaks
// (or a byte-order mark) are escaped too.
const quoted = v => JSON.stringify(v).replace(/[\u0085\u2028\u2029\ufeff]/g, c => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));

/** A JSON value as YAML text (block style, keys in their order, multi-line strings as |). */
export function yaml(value, indent = '') {
  const lines = [];
  const block = (v, pad) => {
    if (Array.isArray(v)) {
      if (!v.length) return [' []'];
      return ['', ...v.flatMap(item => {
        const inner = block(item, pad + '  ');
        if (inner[0] === '') return [`${pad}-${inner[1].slice(pad.length + 1)}`, ...inner.slice(2)];
        return [`${pad}-${inner[0]}`, ...inner.slice(1)];
      })];
    }
    if (v && typeof v === 'object') {
      const keys = Object.keys(v);
      if (!keys.length) return [' {}'];
      return ['', ...keys.flatMap(k => {
        const inner = block(v[k], pad + '  ');
        return [`${pad}${scalar(k)}:${inner[0]}`, ...inner.slice(1)];
      })];
    }
    // a block scalar only where it reads back exactly (no leading space, at most one final newline)
    if (typeof v === 'string' && v.includes('\n') && /^[^\s][^\r]*[^\s]\n?$/.test(v) && !/[\t\u0085\u2028\u2029\ufeff]|\n\s*\n\s*$|\n /.test(v))
      return [' |' + (v.endsWith('\n') ? '' : '-'), ...v.replace(/\n$/, '').split('\n').map(l => pad + l)];
    return [' ' + scalar(v)];
  };
  const out = block(value, indent);
  if (out[0] === '') lines.push(...out.slice(1));
  else lines.push(out[0].slice(1), ...out.slice(1));
  return lines.join('\n') + '\n';
}

/** The lines of a and b matched (a longest common subsequence, trimmed of a common head and
 *  tail first): [{op: ' '|'-'|'+', a: line number or null, b: ..., text}]. */
export function lineDiff(a, b) {
  const x = a.replace(/\n$/, '').split('\n'), y = b.replace(/\n$/, '').split('\n');
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  const xs = x.slice(head, x.length - tail), ys = y.slice(head, y.length - tail);
  const out = [];
  for (let i = 0; i < head; i++) out.push({ op: ' ', a: i + 1, b: i + 1, text: x[i] });
  if (xs.length * ys.length > 4e6) { // too big to match line by line: all out, all in
    xs.forEach((t, i) => out.push({ op: '-', a: head + i + 1, b: null, text: t }));
    ys.forEach((t, i) => out.push({ op: '+', a: null, b: head + i + 1, text: t }));
  } else {
    const n = xs.length, m = ys.length, L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--) L[i][j] = xs[i] === ys[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && xs[i] === ys[j]) { out.push({ op: ' ', a: head + i + 1, b: head + j + 1, text: xs[i] }); i++; j++; }
      else if (i < n && (j === m || L[i + 1][j] >= L[i][j + 1])) { out.push({ op: '-', a: head + i + 1, b: null, text: xs[i] }); i++; }
      else { out.push({ op: '+', a: null, b: head + j + 1, text: ys[j] }); j++; }
    }
  }
  for (let k = 0; k < tail; k++)
    out.push({ op: ' ', a: x.length - tail + k + 1, b: y.length - tail + k + 1, text: x[x.length - tail + k] });
  return out;
}

const CONTEXT = 3;

// Unchanged runs longer than twice the context folded to "⋯ N unchanged lines".
function fold(lines) {
  const keep = lines.map(() => false);
  lines.forEach((l, i) => {
    if (l.op === ' ') return;
    for (let k = Math.max(0, i - CONTEXT); k <= Math.min(lines.length - 1, i + CONTEXT); k++) keep[k] = true;
  });
  const out = [];
  for (let i = 0; i < lines.length;) {
    if (keep[i] || lines.length <= 2 * CONTEXT + 1) { out.push(lines[i++]); continue; }
    let j = i;
    while (j < lines.length && !keep[j]) j++;
    out.push({ op: '…', count: j - i });
    i = j;
  }
  return out;
}

const marks = { '-': 'removed', '+': 'added', ' ': 'same' };
const num = n => h('td.num', {}, n === null || n === undefined ? '' : String(n));

/** The difference of two YAML (or any) texts as a table: mode 'unified' or 'split' (side by
 *  side). Each changed line says removed or added (for screen readers, not colour alone). */
export function diffView(before, after, mode = 'unified', caption = '') {
  const lines = fold(lineDiff(before, after));
  const changed = lines.some(l => l.op === '-' || l.op === '+');
  const rows = [];
  if (mode === 'split') {
    for (let i = 0; i < lines.length;) {
      const l = lines[i];
      if (l.op === '…') { rows.push(h('tr.fold', {}, h('td', { colspan: 4 }, `⋯ ${l.count} unchanged lines`))); i++; continue; }
      if (l.op === ' ') { rows.push(h('tr', {}, num(l.a), h('td.code', {}, l.text), num(l.b), h('td.code', {}, l.text))); i++; continue; }
      const del = [], add = [];
      while (i < lines.length && lines[i].op === '-') del.push(lines[i++]);
      while (i < lines.length && lines[i].op === '+') add.push(lines[i++]);
      for (let k = 0; k < Math.max(del.length, add.length); k++) {
        const d = del[k], a = add[k];
        rows.push(h('tr', {},
          num(d && d.a), d ? h('td.code.removed', { 'aria-label': `removed: ${d.text}` }, d.text) : h('td.code.empty', {}),
          num(a && a.b), a ? h('td.code.added', { 'aria-label': `added: ${a.text}` }, a.text) : h('td.code.empty', {})));
      }
    }
  } else {
    for (const l of lines) {
      if (l.op === '…') { rows.push(h('tr.fold', {}, h('td', { colspan: 4 }, `⋯ ${l.count} unchanged lines`))); continue; }
      rows.push(h(`tr.${marks[l.op]}`, {}, num(l.a), num(l.b), h('td.mark', { 'aria-hidden': 'true' }, l.op),
        h('td.code', l.op === ' ' ? {} : { 'aria-label': `${marks[l.op]}: ${l.text}` }, l.text)));
    }
  }
  // a region the keyboard can reach and scroll when its lines are wider than the screen
  return h('div.diff-view', { 'data-mode': mode, tabindex: 0, role: 'region', 'aria-label': caption || 'Differences' },
    h('table', {}, caption ? h('caption', {}, caption) : null,
      h('thead.sr-only', {}, h('tr', {}, mode === 'split'
        ? ['Old line', 'Old', 'New line', 'New'].map(t => h('th', { scope: 'col' }, t))
        : ['Old line', 'New line', 'Change', 'Text'].map(t => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, changed ? rows : h('tr', {}, h('td', { colspan: 4 }, 'No change.')))));
}

/** A unified / side-by-side switch kept in the page's address (?diff=split), calling
 *  render(mode) now and on each change (under 600 px: unified, no switch). */
export function diffModes(ctx, render) {
  // under 600 px two columns of code would wrap every line: unified only, as GitHub does
  if (window.matchMedia('(max-width: 600px)').matches) {
    render('unified');
    return h('p.live', {}, 'Unified (side by side needs a wider screen).');
  }
  let mode = ctx.query.get('diff') === 'split' ? 'split' : 'unified';
  const button = (m, text) => h('button', { type: 'button', 'aria-pressed': String(mode === m), 'data-mode': m, onclick: () => {
    mode = m;
    if (m === 'split') ctx.query.set('diff', 'split'); else ctx.query.delete('diff');
    ctx.setQuery(ctx.query);
    for (const b of group.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.mode === mode));
    render(mode);
  } }, text);
  const group = h('div.modes', { role: 'group', 'aria-label': 'Diff layout' }, button('unified', 'Unified'), button('split', 'Side by side'));
  render(mode);
  return group;
}

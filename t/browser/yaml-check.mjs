// yaml-check.mjs: the admin pages' YAML writer and line diff (nginx/admin/diff.js) run in Node
// over hostile values, for t/7007-admin-yaml.t: one JSON line per value ({value, yaml}), then
// one per diff case ({before, after, ops}). It decides nothing: the test reads the YAML back
// with PyYAML (what Deckhand's tools read) and checks the diffs.
globalThis.document = {}; // diff.js builds nodes only when asked to show a diff
const { yaml, lineDiff } = await import(new URL('../../nginx/admin/diff.js', import.meta.url));

const strings = ['null', 'Null', 'Yes', 'no', 'on', 'y', '~', '0755', '0o17', '1e3', '.5', '1_000', '-1', '+1', '0x1F',
  '.inf', '-.inf', '.NaN', '12:30:00', '2026-11-26', '2026-11-26T04:00:00Z', 'a #b', '#x', '[x', '{x', '*x', '&x', '!x',
  '%x', '@x', '`x', '"x', "'x", 'x:', 'x: y', '? x', '- x', '-x', '|x', '>x', 'x\ty', 'ünïcode', 'lead ', ' lead',
  'a,b', 'x#y', '1.2.3', 'v1.29.3+k3s1', 'http://a/b?c=d#e', '', ' ', 'multi\nline', 'multi\nline\n', '\n', 'a\\b',
  '<img src=x onerror=alert(1)>', '=', '<<', 'a\n b\n', 'a\n\n', 'a\n\nb\n', 'line\r\nx', 'tab\there\nx', 'a\nb\n\n\n', '\u2028x\ny', 'x\n#y'];
const values = [
  Object.fromEntries(strings.map((s, i) => [`k${i}`, s])),
  Object.fromEntries(strings.map(s => [s, s])),
  strings,
  { nested: { list: [{ a: 1, b: [true, false, null] }, [], {}, [[1, [2, { c: 'd' }]]]], n: -0.5, big: 1e21 } },
  [], {}, 'scalar', 42, null, true,
];
for (const value of values) console.log(JSON.stringify({ value, yaml: yaml(value) }));

const diffs = [
  ['a\nb\nc\n', 'a\nB\nc\n'],
  ['a\nb\n', 'a\nb\nc\n'],
  ['x\ny\n', 'y\n'],
  ['1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n', '1\n2\n3\n4\n5\nsix\n7\n8\n9\n10\n'],
  ['same\n', 'same\n'],
];
for (const [before, after] of diffs) console.log(JSON.stringify({ before, after, ops: lineDiff(before, after).map(l => `${l.op}${l.text}`) }));

#!/usr/bin/perl
# 7007: the admin pages' YAML writer and line diff (nginx/admin/diff.js), run in Node over
# hostile values (t/browser/yaml-check.mjs): every value written reads back the same through
# PyYAML, the YAML Deckhand's tools read (strings that YAML 1.1 would take for booleans,
# numbers, dates, nulls or syntax are quoted; keys too; multi-line strings kept exactly); and the
# line diff keeps every line once, removed before added, unchanged ones unchanged.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use IPC::Open2;
use PurserStack;

my $root = PurserStack::root();
my @lines = `node '$root/t/browser/yaml-check.mjs'`;
is $?, 0, 'the writer ran in Node';
my @values = map { decode_json($_) } grep { /^\{"value"/ } @lines;
my @diffs = map { decode_json($_) } grep { /^\{"before"/ } @lines;
ok @values >= 10, scalar(@values) . ' values written';

# PyYAML reads each back; Python answers JSON (what it read, or the error)
my $pid = open2(my $from, my $to, 'python3', '-c', <<'PY');
import json, sys, yaml
for line in sys.stdin:
    d = json.loads(line)
    try:
        back = yaml.safe_load(d["yaml"])
        v = d["value"]
        diff = [k for k in v if isinstance(back, dict) and back.get(k) != v[k]] if isinstance(v, dict) else \
               [i for i, x in enumerate(v) if not isinstance(back, list) or i >= len(back) or back[i] != x] if isinstance(v, list) else []
        print(json.dumps({"same": back == v and type(back) == type(v),
                          "back": repr(back)[:200] + " differing: " + repr([(k, v[k], back[k] if isinstance(back, (dict, list)) and (k in back if isinstance(back, dict) else k < len(back)) else None) for k in diff])[:400]}))
    except Exception as e:
        print(json.dumps({"same": False, "back": "error: " + str(e)[:200]}))
    sys.stdout.flush()
PY
for my $v (@values) {
    print $to encode_json($v), "\n";
    my $r = decode_json(scalar <$from>);
    ok $r->{same}, 'reads back the same: ' . substr(encode_json($v->{value}), 0, 60)
        or diag "YAML:\n$v->{yaml}\nPyYAML: $r->{back}";
}
close $to;
waitpid $pid, 0;

is_deeply $diffs[0]{ops}, [' a', '-b', '+B', ' c'], 'a changed line: removed, then added, between the unchanged';
is_deeply $diffs[1]{ops}, [' a', ' b', '+c'], 'a line added at the end';
is_deeply $diffs[2]{ops}, ['-x', ' y'], 'a line removed at the start';
is_deeply [ grep { !/^ / } @{ $diffs[3]{ops} } ], ['-6', '+six'], 'one line of ten: only it differs';
is scalar(@{ $diffs[3]{ops} }), 11, '  every other line once';
is_deeply $diffs[4]{ops}, [' same'], 'no change: the line, unchanged';

done_testing;

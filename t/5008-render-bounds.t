#!/usr/bin/perl
# 5008: what a render may cost (issue 17 item 4): a dest.pattern that can match the empty
# string is refused when written; a src.pattern that backtracks without end fails the render
# naming the document, the substitution and the limit (never a silent copy of the whole
# value); a replacement that would make a string over 64 MiB fails the same way; each message
# names its configuration key; the worker stays alive and small.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use PurserStack;
use Test::More;
use Time::HiRes qw(time);

my $s = PurserStack->new(workers => 1, max_body => 4 * 1048576);
my $policy = "---\nschema: deckhand/LayeringPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n"
    . "  name: layering-policy\ndata:\n  layerOrder: [site]\n";
sub doc {
    my ($schema, $name, $data, $subs) = @_;
    return "---\nschema: $schema\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . "  layeringDefinition: {abstract: false, layer: site}\n" . ($subs // '') . "data: $data\n";
}
sub sub_of {
    my ($src_pattern, $dest_pattern, $src_name) = @_;
    return "    - src: {schema: example/Src/v1, name: " . ($src_name // 'src') . ", path: ."
        . (defined $src_pattern ? ", pattern: '$src_pattern', match_group: 1" : '') . "}\n"
        . "      dest: {path: .v" . (defined $dest_pattern ? ", pattern: '$dest_pattern'" : '') . "}\n";
}
sub revisions { my $n = $s->sql('SELECT COUNT(*) FROM doc_revisions'); chomp $n; $n }
sub rss { my ($pid) = @_; open my $fh, '<', "/proc/$pid/status" or return 0; while (<$fh>) { return $1 if /^VmRSS:\s+(\d+)/ } 0 }

# 1. A dest.pattern that can match the empty string: refused at write time.
my $count = revisions();
for my $p ('x?', 'a*', '(b|)', '\b') {
    my ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/r/documents',
        $policy . doc('example/Src/v1', 'src', "'value'") . doc('example/App/v1', 'app', "{v: 'aaaa'}", "  substitutions:\n" . sub_of(undef, $p)));
    is $r->{status}, 400, "dest.pattern '$p' is refused";
    my $all = join ' ', $d->[0]{message} // '', map { $_->{message} // '' } @{ $d->[0]{details}{messageList} // [] };
    like $all, qr/\[example\/App\/v1\] app: .*pattern '\Q$p\E' can match the empty string/, '  naming the document, the pattern and the rule';
}
is revisions(), $count, 'and nothing is stored';

# 2. A catastrophic src.pattern on 100 substitutions: the render fails, at once, naming it.
my $evil = '^(a+)+$';
my $subs = "  substitutions:\n" . join('', map { sub_of($evil, "R$_") } 1 .. 100);
my ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/r/documents',
    $policy . doc('example/Src/v1', 'src', "'" . ('a' x 40) . "!'")
    . doc('example/App/v1', 'app', "{v: '" . join(' ', map { "R$_" } 1 .. 100) . "'}", $subs));
is $r->{status}, 200, 'a site with a backtracking src.pattern is stored (Deckhand renders later)';
my $rev = $d->[0]{status}{revision};
my ($w) = $s->worker_pids;
my $t0 = time;
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/rendered-documents");
my $took = time - $t0;
ok $r->{status} >= 400 && $r->{status} < 500, "rendering it is a 4xx ($r->{status})";
like $d->[0]{message} // '', qr/substitution into \[example\/App\/v1, site\] app from \[example\/Src\/v1, site\] src: src\.pattern '\^\(a\+\)\+\$' hit the limit of 1000000 matching steps \(render\.max_pattern_steps\)/,
    '  naming the document, the substitution and the limit';
note sprintf('the render failed in %.2f s', $took);

# 3. A replacement that would make a string over 64 MiB: the render fails naming the limit.
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/r/documents',
    $policy . doc('example/Src/v1', 'src', "'" . ('z' x 1000) . "'")
    . doc('example/App/v1', 'app', "{v: '" . ('a' x 100_000) . "'}", "  substitutions:\n" . sub_of(undef, 'a')));
is $r->{status}, 200, 'a site whose substitution multiplies a string a thousandfold is stored';
$rev = $d->[0]{status}{revision};
my $before = rss($w);
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/rendered-documents");
ok $r->{status} >= 400 && $r->{status} < 500, "rendering it is a 4xx ($r->{status})";
like $d->[0]{message} // '', qr/dest\.pattern 'a' would make a value over 67108864 bytes \(render\.max_string_bytes\)/, '  naming the limit and its key';
my ($w2) = $s->worker_pids;
is $w2, $w, 'the worker is alive';
my $after = rss($w);
ok $after <= $before * 1.1, "and small again: RSS $before kB before, $after kB after";

# The limit is the configuration's: lowered to 65536 bytes and reloaded, a 100 KB result fails.
my $conf = do { open my $fh, '<', $s->dir . '/purser.yaml' or die; local $/; <$fh> };
$conf .= "render:\n  max_string_bytes: 65536\n";
{ open my $fh, '>', $s->dir . '/purser.yaml' or die; print $fh $conf; }
kill 'HUP', $s->master_pid;
PurserStack::wait_for(10, sub { my @p = $s->worker_pids; (@p == 1 && $p[0] != $w) ? 1 : undef });
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/r/documents',
    $policy . doc('example/Src/v1', 'src', "'" . ('z' x 10) . "'")
    . doc('example/App/v1', 'app', "{v: '" . ('a' x 10_000) . "'}", "  substitutions:\n" . sub_of(undef, 'a')));
$rev = $d->[0]{status}{revision};
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/rendered-documents");
like $d->[0]{message} // '', qr/would make a value over 65536 bytes \(render\.max_string_bytes\)/,
    'render.max_string_bytes lowered to 65536 refuses a 100 KB result';

# 4. The whole render's output: render.max_output_bytes lowered to 1 MiB. A 100 KB parent
# layered into 20 children, and a 100 KB value substituted into 20 paths of one document, each
# make about 2 MB from a body of about 100 KB: both fail naming the key; the same sites with 5
# children or paths render.
$conf .= "  max_output_bytes: 1048576\n";
{ open my $fh, '>', $s->dir . '/purser.yaml' or die; print $fh $conf; }
my ($w3) = $s->worker_pids;
kill 'HUP', $s->master_pid;
PurserStack::wait_for(10, sub { my @p = $s->worker_pids; (@p == 1 && $p[0] != $w3) ? 1 : undef });
my $layers = "---\nschema: deckhand/LayeringPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n"
    . "  name: layering-policy\ndata:\n  layerOrder: [global, site]\n";
my $big = 'q' x 100_000;
sub layered {
    my ($n) = @_;
    my $y = $layers . "---\nschema: example/Big/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: parent\n"
        . "  labels: {role: parent}\n  layeringDefinition: {abstract: true, layer: global}\ndata: {blob: '$big'}\n";
    $y .= "---\nschema: example/Big/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: child$_\n"
        . "  layeringDefinition:\n    abstract: false\n    layer: site\n    parentSelector: {role: parent}\n"
        . "    actions: [{method: merge, path: .}]\ndata: {n: $_}\n" for 1 .. $n;
    return $y;
}
sub fanned {
    my ($n) = @_;
    my $subs = "  substitutions:\n" . join('', map {
        "    - src: {schema: example/Src/v1, name: src, path: .}\n      dest: {path: .p$_}\n" } 1 .. $n);
    return $layers . "---\nschema: example/Src/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: src\n"
        . "  layeringDefinition: {abstract: false, layer: site}\ndata: '$big'\n"
        . "---\nschema: example/App/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: app\n"
        . "  layeringDefinition: {abstract: false, layer: site}\n$subs" . "data: {}\n";
}
for my $case (['a parent layered into', \&layered, qr/rendering \[example\/Big\/v1, site\] child\d+ would make the rendered documents over 1048576 bytes \(render\.max_output_bytes\)/],
              ['a value substituted into', \&fanned, qr/rendering \[example\/App\/v1, site\] app would make the rendered documents over 1048576 bytes \(render\.max_output_bytes\)/]) {
    my ($what, $make, $message) = @$case;
    for my $n (5, 20) {
        ($r) = $s->yaml('DELETE', '/api/v1.0/revisions');
        is $r->{status}, 204, 'a clean store' or diag $r->{content};
        ($r, $d) = $s->yaml('PUT', "/api/v1.0/buckets/out/documents", $make->($n));
        is $r->{status}, 200, "$what $n: stored";
        $rev = $d->[0]{status}{revision};
        my ($wn) = $s->worker_pids;
        # the worker meets this render once first: what it keeps from a first use (prepared
        # statements, caches of paths and patterns) is not what the refusal must give back
        $s->yaml('GET', "/api/v1.0/revisions/$rev/rendered-documents") if $n == 20;
        my $rss0 = rss($wn);
        ($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/rendered-documents");
        if ($n == 5) {
            is $r->{status}, 200, "  $n copies render (about 500 KB)";
            next;
        }
        is $r->{status}, 400, "  $n copies (about 2 MB) fail the render";
        like $d->[0]{message} // '', $message, '  naming the document and render.max_output_bytes';
        my ($wa) = $s->worker_pids;
        is $wa, $wn, '  the worker is alive';
        my $rss1 = rss($wn);
        ok $rss1 <= $rss0 * 1.1, "  and small again: RSS $rss0 kB before, $rss1 kB after";
    }
}

PurserStack::finish();

#!/usr/bin/perl
# 5009: hostile YAML as a class (issue 17, "Also"): each body below, sent to the document API,
# is a 4xx whose message names the field or limit (and the line where there is one); after
# each the store is unchanged and the one worker is the same process, no bigger than 10% over
# its size before (a size make ASAN=1 skips). Aliases and total nodes are t/5007's; big
# values t/5006's.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use PurserStack;
use Test::More;

my $s = PurserStack->new(workers => 1, max_body => 1048576);
sub rss { my ($pid) = @_; open my $fh, '<', "/proc/$pid/status" or return 0; while (<$fh>) { return $1 if /^VmRSS:\s+(\d+)/ } 0 }
sub state { my $n = $s->sql('SELECT COUNT(*) FROM doc_revisions'); chomp $n; my $m = $s->sql('SELECT COUNT(*) FROM doc_contents'); chomp $m; "$n/$m" }
sub doc {
    my ($name, $data, $extra) = @_;
    return "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . ($extra // '') . "  layeringDefinition:\n    abstract: false\n    layer: site\ndata: $data\n";
}

# A good write first: the store has something to stay unchanged, and the worker is warm.
my ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/b/documents', doc('good', '{a: 1}'));
is $r->{status}, 200, 'a good body is stored';
my ($w) = $s->worker_pids;

my $deep = 'x';
$deep = "[$deep]" for 1 .. 300;
my $wide = '{' . join(', ', map { "k$_: $_" } 1 .. 30) . '}';
my @cases = (
    # [what, body, status, message pattern]
    ['nesting 300 deep', doc('deep', $deep), 400, qr/nest|deep|depth/i],
    ['a key twice in data', doc('dup', "\n  port: 80\n  port: 81"), 400, qr/port.*(twice|duplicate)|(twice|duplicate).*port/i],
    ['a key twice in metadata', "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: a\n  name: b\n  layeringDefinition: {abstract: false, layer: site}\ndata: 1\n", 400, qr/name/],
    ['a Python object tag', doc('py', "!!python/object/apply:os.system ['true']"), 400, qr/python\/object/],
    ['a local tag', doc('local', "!secret 'x'"), 400, qr/!secret/],
    ['a tag on a key', doc('tagkey', "\n  !!python/name:os.system k: v"), 400, qr/python\/name/],
    ['bad base64 in !!binary', doc('bin', "!!binary '\@\@\@'"), 400, qr/binary|base64/i],
    ['a bad timestamp', doc('ts', "!!timestamp 'yesterday'"), 400, qr/timestamp/i],
    ['an !!int that is not one', doc('int', "!!int 'twelve'"), 400, qr/int/i],
    ['an integer past 64 bits', doc('big', '123456789012345678901234567890'), 400, qr/integer|range|64/i],
    ['.inf', doc('inf', '.inf'), 400, qr/inf/i],
    ['an undefined alias', doc('alias', '*nowhere'), 400, qr/nowhere|alias|anchor/i],
    ['a mapping as a key', doc('mapkey', "\n  ? {a: 1}\n  : v"), 400, qr/key/i],
    ['a byte that is not UTF-8 in a value', doc('bytes', "\"caf\xe9\""), 400, qr/UTF-8|utf-8|invalid/i],
    ['a byte that is not UTF-8 in a key', doc('bytes', "\n  k\xff: v"), 400, qr/UTF-8|utf-8|invalid/i],
    ['a NUL byte', doc('nul', "\"a\x00b\""), 400, qr/control|NUL|invalid|character/i],
    ['a tab as indentation', "---\nschema: example/Kind/v1\nmetadata:\n\tname: x\n", 400, qr/line/],
    ['unclosed quote', doc('q', "'never closed"), 400, qr/line \d+/],
    ['a document that is a list', "---\n- a\n- b\n", 400, qr/document|mapping|schema/i],
    ['a body over the 1 MiB limit', doc('huge', "'" . ('z' x 1_100_000) . "'"), 413, qr/larger than the limit of 1048576 \(http\.max_body_bytes\)/],
    ['a body over nginx\'s limit too', doc('huger', "'" . ('z' x 1_200_000) . "'"), 413, qr/larger than the server accepts \(http\.max_body_bytes\)/],
);

my $before_state = state();
my $before_rss = rss($w);
for my $c (@cases) {
    my ($what, $body, $status, $pattern) = @$c;
    ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/b/documents', $body);
    my $message = ref $d eq 'ARRAY' ? join(' ', $d->[0]{message} // $d->[0]{error}{message} // '', map { $_->{message} // '' } @{ $d->[0]{details}{messageList} // [] }) : "$r->{content}";
    is $r->{status}, $status, "$what: $status" or diag $message;
    like $message, $pattern, "  the message names it: $message";
    is state(), $before_state, '  the store is unchanged';
    my ($now) = $s->worker_pids;
    is $now, $w, '  the worker is alive';
}
my $after_rss = rss($w);
PurserStack::memory_ok($after_rss <= $before_rss * 1.1, "the worker's RSS is within 10%: $before_rss kB before, $after_rss kB after");

PurserStack::finish();

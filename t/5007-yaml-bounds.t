# 5007: YAML that expands (issue 17 item 1): a small body whose aliases expand to millions of
# nodes is 413 naming documents.max_yaml_alias_nodes and where it was reached, before the
# expansion is built; the worker stays small (a size make ASAN=1 skips); bodies within the
# bounds still work; the bounds are the configuration's.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

my $s = PurserStack->new(workers => 1);
sub rss { my ($pid) = @_; open my $fh, '<', "/proc/$pid/status" or return 0; while (<$fh>) { return $1 if /^VmRSS:\s+(\d+)/ } 0 }
sub revisions { my $n = $s->sql('SELECT COUNT(*) FROM doc_revisions'); chomp $n; $n }

# Nine levels of ten aliases each: about a billion nodes from under a kilobyte.
my $bomb = "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: bomb\n"
    . "  layeringDefinition:\n    abstract: false\n    layer: site\ndata:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
$bomb .= "  a$_: &a$_ [" . join(', ', ("*a" . ($_ - 1)) x 10) . "]\n" for 1 .. 8;
ok length($bomb) < 1024, 'the body is ' . length($bomb) . ' bytes';
my ($w) = $s->worker_pids;
# The worker warmed by a request like it (a small body with a refused alias), then measured.
my ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/warm/documents', "a: &x [1]\nb: *y\n");
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/warm/documents', "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: warm\n  layeringDefinition:\n    abstract: false\n    layer: site\ndata:\n  base: &b {port: 80}\n  copy: *b\n");
is $r->{status}, 200, 'a first write, to warm the worker';
my $before = rss($w);
my $count = revisions();
my $t0 = Time::HiRes::time();
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/bomb/documents', $bomb);
my $took = Time::HiRes::time() - $t0;
is $r->{status}, 413, 'an alias bomb is 413';
like $d->[0]{message}, qr/aliases expand to more than 100000 nodes \(documents\.max_yaml_alias_nodes\)/, '  naming the limit';
# a3 repeats 11,111 nodes: its eighth alias on line 14 (level a4) passes 100,000, so the refusal
# comes there, before the levels that would expand to a million nodes and more are looked at.
like $d->[0]{message}, qr/line 14, column/, '  at the alias where the bound is passed, not later';
note sprintf('refused in %.3f s', $took);
is revisions(), $count, 'nothing is stored';
my ($w2) = $s->worker_pids;
is $w2, $w, 'the worker is alive';
my $after = rss($w);
PurserStack::memory_ok($after <= $before * 1.1, "and as small as before: RSS $before kB before, $after kB after");

# Within the bounds, aliases work.
my $ok = "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: fine\n"
    . "  layeringDefinition:\n    abstract: false\n    layer: site\ndata:\n  base: &b {port: 80}\n  copy: *b\n";
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/bomb/documents', $ok);
is $r->{status}, 200, 'a body with a few aliases is stored';

# Total nodes, without aliases: a flat list over documents.max_yaml_nodes (1,000,000 by
# default: more than this stack's 1 MiB body can hold) is refused once the bound is lowered
# and the configuration reloaded (SIGHUP).
my $conf = do { open my $fh, '<', $s->dir . '/purser.yaml' or die; local $/; <$fh> };
$conf =~ s/^documents:\n/documents:\n  max_yaml_nodes: 2000\n/m or die 'no documents section';
{ open my $fh, '>', $s->dir . '/purser.yaml' or die; print $fh $conf; }
kill 'HUP', $s->master_pid;
PurserStack::wait_for(10, sub { my @p = $s->worker_pids; (@p == 1 && $p[0] != $w) ? 1 : undef });
my $many = "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: many\n"
    . "  layeringDefinition:\n    abstract: false\n    layer: site\ndata:\n  list: [" . join(',', (1) x 3000) . "]\n";
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/bomb/documents', $many);
is $r->{status}, 413, 'a body over documents.max_yaml_nodes is 413';
like $d->[0]{message}, qr/more than 2000 nodes.*documents\.max_yaml_nodes/, '  naming the key';

PurserStack::finish();

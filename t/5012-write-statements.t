# 5012: what a document write's prepared statements cost (issue 18, item 3: small workers).
# The writer stores a payload in batches of one size, so that a write of the same size as the
# one before prepares no new statement; and the statements a connection keeps are bounded by
# their parameters (STORE_CACHE_PARAMS), so that after writes of thousands of documents the
# worker returns to near its idle size and purser's connection holds little of MariaDB's
# memory. (Before: 64 statements of hundreds of rows, 68 MB of the server's memory and 16 MB
# of the worker's after ten 4,000-document writes.) Under make ASAN=1 the worker's size is a
# skip; the connection's share of MariaDB's memory (no sanitizer there) is still held.
#
# Then big reads (issue 36, item 3: small workers whatever they answered): with a history of
# hundreds of revisions, the revision list, a 2,000-document revision's documents and a diff
# each leave the worker, once idle, within 10% of its size before them (the diff left it 15%
# bigger when only a write, a refusal or a request using 1 MiB of its arena or of the jansson
# pool gave memory back). A render's memory: bench/render.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

my $s = PurserStack->new(workers => 1, max_body => 8 << 20);
sub rss { my ($pid) = @_; open my $fh, '<', "/proc/$pid/status" or return 0; while (<$fh>) { return $1 if /^VmRSS:\s+(\d+)/ } 0 }
sub status { my ($name) = @_; my ($v) = $s->sql("SHOW GLOBAL STATUS LIKE '$name'") =~ /(\d+)\s*$/; $v }
# the most memory any of purser's connections holds in the server now, in bytes
sub connection_memory {
    my $v = $s->sql("SELECT MAX(memory_used) FROM information_schema.processlist WHERE user = 'purser'");
    chomp $v;
    $v;
}

# two versions of a generated site bundle of 2,000 documents, every document different
my @bundles = map { scalar `'@{[PurserStack::root()]}/bench/site-bundle' 2000 $_` } 1, 2;
ok length($bundles[0]) > 500_000 && length($bundles[1]) > 500_000,
    'two bundles of 2,000 documents (' . length($bundles[0]) . ' bytes)';

my ($w) = $s->worker_pids;
my ($r) = $s->yaml('PUT', '/api/v1.0/buckets/warm/documents',
    "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: warm\n"
    . "  layeringDefinition:\n    abstract: false\n    layer: site\ndata: {a: 1}\n");
is $r->{status}, 200, 'a small write, to warm the worker';
sleep 1; # time itself: idle for half a second, a worker gives memory back
my $idle = rss($w);

my @prepared;
for my $round (1 .. 4) {
    my $before = status('Com_stmt_prepare');
    ($r) = $s->yaml('PUT', '/api/v1.0/buckets/site/documents', $bundles[($round - 1) % 2]);
    is $r->{status}, 200, "write $round of 2,000 documents";
    push @prepared, status('Com_stmt_prepare') - $before;
}
is_deeply [ @prepared[2, 3] ], [0, 0],
    "the third and fourth writes prepare no statement: the batches have the shapes of the first"
    . " two (statements prepared by each write: @prepared)";

my $memory = connection_memory();
ok $memory > 0 && $memory < 16 << 20,
    sprintf 'purser\'s connection holds %.1f MB of the server\'s memory (at most 16)', $memory / (1 << 20);
# the worker gives memory back once idle for half a second: polled for, up to 10 s
my $after;
PurserStack::wait_for(10, sub { $after = rss($w); $after <= $idle + 4096 });
my ($w2) = $s->worker_pids;
is $w2, $w, 'the same worker served every write';
PurserStack::memory_ok($after <= $idle + 4096,
    "and is back near its idle size: RSS $idle kB idle, $after kB after four writes");

# a history that grew: 600 revisions of one small document
my $counter = sub {
    "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: counter\n"
    . "  layeringDefinition:\n    abstract: false\n    layer: site\ndata: {n: $_[0]}\n";
};
my $written = 0;
for my $n (1 .. 600) {
    ($r) = $s->yaml('PUT', '/api/v1.0/buckets/counter/documents', $counter->($n));
    last unless $r->{status} == 200;
    $written++;
}
is $written, 600, '600 more revisions, each a write of one document';
my (undef, $list) = $s->call('GET', '/api/v1.0/revisions');
my @ids = map { $_->{id} } @{ $list->{results} // [] };
ok @ids > 600, 'the revision list holds them all (' . scalar(@ids) . ' revisions)';
sleep 1; # (idle: it gives memory back)
($r) = $s->get('/healthz');
sleep 1; # (idle again)
my $base = rss($w);
for my $read (['the revision list', '/api/v1.0/revisions'],
              ['the documents of a 2,000-document revision', "/api/v1.0/revisions/$ids[4]/documents"],
              ['a diff of two 2,000-document revisions', "/api/v1.0/revisions/$ids[3]/diff/$ids[4]"]) {
    my ($what, $path) = @$read;
    my $peak = 0;
    for (1 .. 2) {
        ($r) = $s->yaml('GET', $path);
        my $now = rss($w);
        $peak = $now if $now > $peak;
    }
    my $ok = $r->{status} == 200;
    # (a worker gives memory back once it has been idle for half a second: polled for)
    my $after;
    PurserStack::wait_for(10, sub { $after = rss($w); $after <= $base * 1.1 });
    ok $ok, "GET $what" or diag "$r->{status} " . substr($r->{content}, 0, 300);
    PurserStack::memory_ok($after <= $base * 1.1,
        "and after it the worker is within 10% of its size before: RSS $base kB before, $peak kB"
        . " just after, $after kB idle");
}

PurserStack::finish();

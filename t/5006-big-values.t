# 5006: big values (issue 17 item 2): what the body limit admits is stored and read back byte
# for byte (the stack's MariaDB takes packets up to 1 GiB); a statement the database's
# max_allowed_packet cannot take is 413 naming that setting, before anything is sent, never
# "database unavailable"; a body over http.max_body_bytes is 413.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

my $max_body = 16 * 1048576;
my $s = PurserStack->new(workers => 2, max_body => $max_body);

sub doc {
    my ($name, $bytes) = @_;
    return "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . "  layeringDefinition:\n    abstract: false\n    layer: site\ndata:\n  v: " . ('ab' x ($bytes / 2)) . "\n";
}
sub revisions { my $n = $s->sql('SELECT COUNT(*) FROM doc_revisions'); chomp $n; $n }

my $bytes = 15_000_000;
my ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/big/documents', doc('big15', $bytes));
is $r->{status}, 200, 'a 15 MB scalar under the 16 MiB body limit is stored';
my $rev = $d->[0]{status}{revision};
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/documents?metadata.name=big15");
is length($d->[0]{data}{v} // ''), $bytes, '  and read back whole';
ok(($d->[0]{data}{v} // '') eq ('ab' x ($bytes / 2)), '  byte for byte');

# A database whose max_allowed_packet is smaller than what a body may hold: 413, not 503.
$s->sql('SET GLOBAL max_allowed_packet = 4194304');
my @old = $s->worker_pids;
kill 'HUP', $s->master_pid; # new workers, new connections: they see the new setting
PurserStack::wait_for(10, sub { my @w = $s->worker_pids; (@w == 2 && !grep { my $o = $_; grep { $_ == $o } @w } @old) ? 1 : undef });
my $count = revisions();
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/big/documents', doc('big6', 6_000_000));
is $r->{status}, 413, 'a value the database cannot take in one packet is 413';
like $d->[0]{message} // '', qr/max_allowed_packet is 4194304 bytes/, '  naming the setting';
is revisions(), $count, '  and nothing is stored';
($r) = $s->api('GET', '/healthz/deep', undef, '');
is $r->{status}, 200, 'the database is not reported down';
$s->sql('SET GLOBAL max_allowed_packet = 1073741824');

# Over the body limit: 413 before anything is read.
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/big/documents', doc('big17', $max_body + 1000));
is $r->{status}, 413, 'a body over http.max_body_bytes is 413';
is revisions(), $count, '  and nothing is stored';

PurserStack::finish();

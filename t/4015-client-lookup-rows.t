# 4015: finding a client by organization and name reads its row through the principals' unique
# key, whatever the number of clients (bench/fleet, issue 54: among 36,000 clients each signed
# request's lookup examined all of them, 94 ms). Counted with MariaDB's handler reads, which
# only this test's stack makes: a signed request of a client, a signed request of a user (the
# client lookup first, finding none), GET of one client and a page of the clients' list, each
# among 20,000 clients.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

my $s = PurserStack->new;
my $org = $s->env('PURSER_ORG');
my $oid = $s->sql("SELECT id FROM organizations WHERE name = '$org'") + 0;
my $key;
{
    my ($r, $d) = $s->call('POST', "/organizations/$org/clients", { name => 'probe', create_key => JSON::PP::true() });
    is $r->{status}, 201, 'a client with a key';
    $key = $s->key_file('probe', $d->{chef_key}{private_key});
}
$s->sql("INSERT INTO principals (kind, org_id, name, revision)
           SELECT 'client', $oid, CONCAT('many', LPAD(seq, 6, '0')), LEFT(MD5(seq), 16) FROM seq_1_to_20000;
         ANALYZE TABLE principals");
is $s->sql("SELECT COUNT(*) FROM principals WHERE kind = 'client'") + 0, 20002, '20,000 more clients';

sub rows_read { # the rows MariaDB's handlers stepped through since it started
    my %v = map { split /\t/ } split /\n/, $s->sql("SHOW GLOBAL STATUS WHERE Variable_name IN
        ('Handler_read_next', 'Handler_read_prev', 'Handler_read_rnd_next')");
    my $n = 0;
    $n += $_ for values %v;
    return $n;
}
sub rows_for {
    my ($what, $request) = @_;
    my $before = rows_read();
    my $status = $request->();
    my $read = rows_read() - $before;
    is $status, 200, "$what: answered";
    cmp_ok $read, '<', 2000, "$what: reads a handful of rows, not every client ($read)";
}

$s->wait_auth_cache;
rows_for('a request signed by a client', sub { ($s->signed('probe', $key, 'GET', "/organizations/$org/nodes"))[0] });
rows_for('a request signed by a user', sub { $s->chef(path => "/organizations/$org/nodes")->{status} });
rows_for('GET of one client', sub { ($s->call('GET', "/organizations/$org/clients/many012345"))[0]{status} });
rows_for('a page of 50 clients (the admin pages\' list)', sub { ($s->call('GET', "/organizations/$org/clients?page_size=50&page_token="))[0]{status} });
{
    my ($r, $d) = $s->call('GET', "/organizations/$org/clients?page_size=50");
    my @names = map { $_->{metadata}{name} } @{ $d->{items} };
    is_deeply [ @names[0, 1, 2, 49] ], ['default-validator', 'many000001', 'many000002', 'many000049'],
        'the page in name order';
}

$s->finish;

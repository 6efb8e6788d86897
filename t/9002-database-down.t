# 9002: with MariaDB stopped, /healthz/deep answers 503 with Retry-After; when MariaDB
# returns, the workers reconnect by themselves.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

my $s = PurserStack->new(workers => 2);
is $s->get('/healthz/deep')->{status}, 200, 'deep health is 200 with the database up';
my $master = $s->master_pid;

system(PurserStack::tool(), 'stop-db', $s->dir) == 0 or BAIL_OUT('could not stop MariaDB');

# Both workers had a connection; each must notice it is gone.
for my $try (1 .. 4) {
    my $r = $s->get('/healthz/deep');
    is $r->{status}, 503, "deep health is 503 with the database down (request $try)";
    ok defined $r->{headers}{'retry-after'} && $r->{headers}{'retry-after'} =~ /^\d+$/, 'with a Retry-After';
    my $e = PurserStack::json($r);
    is $e && $e->{error}{code}, 'unavailable', 'in the error format, code unavailable';
}
is $s->get('/healthz')->{status}, 200, 'liveness does not need the database';

system(PurserStack::tool(), 'start-db', $s->dir) == 0 or BAIL_OUT('could not start MariaDB');
my $back = PurserStack::wait_for(30, sub { $s->get('/healthz/deep')->{status} == 200 });
ok $back, 'deep health is 200 again once MariaDB is back';
my $all = 1;
for (1 .. 10) { $all &&= $s->get('/healthz/deep')->{status} == 200 }
ok $all, 'every worker has reconnected (10 requests in a row)';
is $s->master_pid, $master, 'without a restart of purser-fcgi';

PurserStack::finish();

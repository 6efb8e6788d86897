# 9001: a worker killed with SIGKILL is replaced within a second, and service goes on.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Time::HiRes qw(time);
use PurserStack;

my $s = PurserStack->new(workers => 2);
my @before = @{ PurserStack::wait_for(5, sub { my @w = $s->worker_pids; @w == 2 ? \@w : undef }) // [] };
is scalar(@before), 2, 'two workers to start with';

my $victim = $before[0];
my $t0 = time;
kill 'KILL', $victim;
my @after = @{ PurserStack::wait_for(1, sub {
    my @w = $s->worker_pids;
    (@w == 2 && !grep { $_ == $victim } @w) ? \@w : undef;
}) // [] };
my $took = time - $t0;
is scalar(@after), 2, 'two workers again';
ok !(grep { $_ == $victim } @after), 'the killed one is gone';
ok $took <= 1.0, sprintf('replaced within a second (%.3f s)', $took);

my $ok = 0;
for (1 .. 100) {
    my $r = $s->get('/healthz');
    $ok++ if $r->{status} == 200 && $r->{content} eq "ok\n";
}
is $ok, 100, 'the next 100 requests all succeed';
ok PurserStack::alive($s->master_pid), 'the master lived through it';
ok scalar(grep { /worker died; replacing it/ && /"worker":$victim\b/ } $s->log_lines('purser-fcgi.log')),
    'the master logged the death of that worker';

PurserStack::finish();

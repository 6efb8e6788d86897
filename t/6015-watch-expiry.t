#!/usr/bin/perl
# 6015: a wait on the event feed ends no later than the credential that asked for it (issue 49).
# An events?wait=15 begun a few seconds before its token expires answers the empty page before
# the token's expires_at, and an event committed 1.5 s after the expiry is not delivered to it;
# a token with less than a second left answers at once; a token without an expiry waits the
# whole wait (so the figures above are the credential's doing).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Time::HiRes qw(time sleep);
use Time::Local qw(timegm);
use POSIX ();
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');

sub epoch_of { my ($y, $mo, $d, $h, $mi, $sec) = $_[0] =~ /^(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)/ or return; return timegm($sec, $mi, $h, $d, $mo - 1, $y) }
sub token { my ($expires_in) = @_; my ($r, $d) = $s->api('POST', '/users/admin/tokens', { description => 'watch', $expires_in ? (expires_in => $expires_in) : () }); die "token: $r->{status}\n" unless $r->{status} == 201; return ($d->{token}, $d->{expires_at}) }
sub newest { my (undef, $d) = $s->call('GET', "/organizations/$org/events?last=1"); return $d->{next} }
sub node_at { # a write at the given time, by a child (no TAP from it)
    my ($at, $name) = @_;
    my $pid = fork // die "fork: $!";
    return $pid if $pid;
    $s->{pid} = -1;
    sleep($at - time) if $at > time;
    $s->call('POST', "/organizations/$org/nodes", { name => $name, chef_environment => '_default',
        json_class => 'Chef::Node', chef_type => 'node', run_list => [], normal => {} });
    POSIX::_exit(0);
}
sub wait_with {
    my ($token, $since, $wait) = @_;
    my $t0 = time;
    my ($r, $d) = $s->call('GET', "/organizations/$org/events?since=$since&wait=$wait", undef, authorization => "Bearer $token");
    return ($r, $d, time);
}

# ---- a token that expires during the wait ----
my ($token, $expires_at) = token(4);
my $end = epoch_of($expires_at);
ok $end, "a token that expires at $expires_at";
my $since = newest();
my $writer = node_at($end + 1.5, 'after-expiry');
my ($r, $d, $answered) = wait_with($token, $since, 15);
is $r->{status}, 200, 'events?wait=15 begun before the expiry: answered';
cmp_ok $answered, '<=', $end + 0.05, sprintf('  no later than the token\'s expiry (%.2f s before it)', $end - $answered);
is_deeply $d->{events}, [], '  with the empty page';
is $d->{next}, $since, '  and next where it began';
waitpid $writer, 0;
my (undef, $after) = $s->call('GET', "/organizations/$org/events?since=$since");
ok scalar(grep { $_->{name} eq 'after-expiry' } @{ $after->{events} }), 'the event committed 1.5 s after the expiry is in the feed';
ok !grep({ ($_->{name} // '') eq 'after-expiry' } @{ $d->{events} // [] }), '  and was not delivered to the expired token\'s wait';
($r) = $s->call('GET', "/organizations/$org/events?since=$since", undef, authorization => "Bearer $token");
is $r->{status}, 401, '  (the token is refused by now)';

# ---- less than a second left: at once ----
($token, $expires_at) = token(1);
$end = epoch_of($expires_at);
sleep($end - 0.6 - time) if $end - 0.6 > time;
my $t0 = time;
($r, $d, $answered) = wait_with($token, newest(), 10);
if ($r->{status} == 200) {
    cmp_ok $answered - $t0, '<', 0.5, 'a token with under a second left: the wait answers at once';
    is_deeply $d->{events}, [], '  with the empty page';
} else {
    is $r->{status}, 401, 'a token with under a second left: expired by the time it arrived (401)';
    pass '  (nothing delivered)';
}

# ---- a token without an expiry waits the whole wait ----
($token) = token(0);
$t0 = time;
($r, $d, $answered) = wait_with($token, newest(), 2);
is $r->{status}, 200, 'a token without an expiry: wait=2 answered';
cmp_ok $answered - $t0, '>=', 1.8, sprintf('  after the whole wait (%.2f s)', $answered - $t0);

PurserStack::finish();

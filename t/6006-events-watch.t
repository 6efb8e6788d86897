#!/usr/bin/perl
# 6006: waiting on the event feed (issue 13, items 2 and 3). wait=S answers at once when
# something is newer, else when the next commit arrives, else an empty page at S seconds;
# waiting readers are held by nginx (nchan), not by purser's workers: 1,000 of them wait
# while the API, with 2 workers, still answers, and one write wakes every one of them with
# its event (its answers, the empty page at the end too, carry X-Ops-Server-API-Version as
# purser's own do). A kinds filter wakes on any commit and reads again; wait over 60 is refused;
# the watch locations cannot be reached from outside; RBAC is checked before any wait.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;
use IO::Socket::SSL;
use IO::Select;
use Time::HiRes qw(time sleep);
use Errno qw(EAGAIN);

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
sub call { $s->call(@_) }
sub feed { my ($q) = @_; call('GET', "/organizations/$org/events?$q") }
sub create_cluster {
    my ($name) = @_;
    my ($r) = call('POST', "/organizations/$org/clusters", { metadata => { name => $name } });
    die "cluster $name: $r->{status} $r->{content}" unless $r->{status} == 201;
}

# A write in a child process after a delay (the parent is waiting meanwhile); the child
# leaves the time its write was answered in $answered_file.
my $answered_file = "$s->{dir}/answered";
sub write_later {
    my ($delay, $name) = @_;
    unlink $answered_file;
    my $pid = fork // die;
    if (!$pid) {
        sleep $delay;
        create_cluster($name);
        my $t = time;
        open my $fh, '>', $answered_file or die;
        print $fh $t;
        close $fh;
        POSIX::_exit(0);
    }
    return $pid;
}
sub answered_at { open my $fh, '<', $answered_file or return undef; local $/; my $t = <$fh>; $t }
# The X-Request-Id of an answer nginx gave at the end of a wait, when purser logged a request
# to the event feed with it (the one that asked for the wait); else undef.
sub logged_request_id {
    my ($r) = @_;
    my $id = $r->{headers}{'x-request-id'} // return undef;
    return undef unless $id =~ /^[0-9a-f]{16}$/;
    return (grep { index($_, $id) >= 0 && m{/events} } $s->log_lines('purser-fcgi.log')) ? $id : undef;
}
use POSIX ();

my ($r, $d) = feed('since=0');
my $start = $d->{next};
my $api_version = $r->{headers}{'x-ops-server-api-version'};
like $api_version, qr/"response_version"/, 'an answer of the feed says its X-Ops-Server-API-Version';
create_cluster('w0');
($r, $d) = feed("since=$start");
my $last = $d->{next};
is $last, $start + 1, 'one event to start from';

# ---- at once when something is newer ----
my $t0 = time;
($r, $d) = feed("since=$start&wait=30");
ok time - $t0 < 2, 'wait= answers at once when events after since exist';
is_deeply [ map { $_->{name} } @{ $d->{events} } ], ['c-w0'], '  with them';

# ---- the timeout: an empty page that says where to ask from ----
$t0 = time;
($r, $d) = feed("since=$last&wait=2");
my $took = time - $t0;
is $r->{status}, 200, 'nothing arrives: 200 at the timeout';
ok $took >= 1.9 && $took < 5, "  after about 2 seconds (took ${\ sprintf '%.2f', $took})";
is_deeply $d, { events => [], next => $last }, '  an empty page with next';
is $r->{headers}{'content-type'}, 'application/json', '  as JSON';
ok logged_request_id($r), '  with the X-Request-Id purser logged for the request that waited';
is $r->{headers}{'x-ops-server-api-version'}, $api_version, '  and the X-Ops-Server-API-Version of every answer';

# ---- woken by the next commit, with its events ----
my $pid = write_later(1, 'w1');
$t0 = time;
($r, $d) = feed("since=$last&wait=20");
my $woke = time;
$took = $woke - $t0;
waitpid $pid, 0;
ok $took >= 0.9 && $took < 5, "a commit while waiting answers (took ${\ sprintf '%.2f', $took})";
my $after = $woke - (answered_at() // 0);
ok $after < 1, sprintf '  within a second of the write\'s answer (%.3f s)', $after;
is_deeply [ map { [$_->{seq}, $_->{kind}, $_->{name}, $_->{op}, $_->{actor}] } @{ $d->{events} } ],
    [ [ $last + 1, 'cluster', 'c-w1', 'put', 'admin' ] ], '  with that commit\'s event';
ok logged_request_id($r), '  and the X-Request-Id purser logged for the request that waited';
is $r->{headers}{'x-ops-server-api-version'}, $api_version, '  and the X-Ops-Server-API-Version';
is $d->{next}, $last + 1, '  and next past it';
my ($r2, $d2) = feed("since=$last");
is_deeply $d2->{events}, $d->{events}, '  the same event as the log gives';
$last = $d->{next};

# ---- a kinds filter: woken by any commit, it reads again ----
$pid = write_later(1, 'w2');
$t0 = time;
($r, $d) = feed("since=$last&wait=20&kinds=node");
waitpid $pid, 0;
ok time - $t0 < 5, 'a filtered wait is woken by a commit of another kind';
is_deeply $d, { events => [], next => $last }, '  and answers an empty page to read again from';
($r, $d) = feed("since=$last&kinds=node");
is_deeply $d, { events => [], next => $last + 1 }, '  which passes what the filter left out';
($r, $d) = feed("since=$last&kinds=cluster&wait=20");
is_deeply [ map { $_->{name} } @{ $d->{events} } ], ['c-w2'], '  and a matching kind is answered from the log';
$last = $d->{next};

# ---- refusals ----
($r, $d) = feed("since=$last&wait=61");
is $r->{status}, 400, 'wait over 60: 400';
like PurserStack::error_message($d), qr/^wait: /, '  naming wait';
($r, $d) = feed("since=$last&wait=x");
is $r->{status}, 400, 'wait not a number: 400';
for my $path ("/_purser/watch/2/e1.$last/$last", "/_purser/watch/") {
    my $res = $s->get($path);
    is $res->{status}, 404, "$path cannot be reached from outside";
}
{
    ($r) = call('POST', '/users', { username => 'nobody' });
    ($r, $d) = call('POST', '/users/nobody/tokens', { description => 't' });
    my $outsider = $d->{token};
    $t0 = time;
    ($r, $d) = call('GET', "/organizations/$org/events?since=$last&wait=5", undef,
                    authorization => "Bearer $outsider");
    is $r->{status}, 403, 'a principal without read_events: 403';
    ok time - $t0 < 2, '  at once, before any wait';
}

# ---- 1,000 idle readers held by nginx while 2 workers keep answering ----
my $n = 1000;
my $url = $s->url;
my ($host, $port) = $url =~ m{^https://([^:/]+):(\d+)} or die;
my $token = $s->env('PURSER_ADMIN_TOKEN');
my $request = "GET /organizations/$org/events?since=$last&wait=60 HTTP/1.1\r\nHost: $host\r\n"
    . "Authorization: Bearer $token\r\nAccept: application/json\r\nConnection: close\r\n\r\n";
my @socks;
$t0 = time;
for my $i (1 .. $n) {
    my $sock = IO::Socket::SSL->new(PeerHost => $host, PeerPort => $port, SSL_ca_file => $s->env('PURSER_CA'),
                                    SSL_verifycn_name => 'localhost', SSL_verify_mode => SSL_VERIFY_NONE)
        or last;
    print {$sock} $request;
    push @socks, $sock;
}
is scalar(@socks), $n, "$n readers connected and asked with wait=60";
diag sprintf '%d readers connected in %.1f s', scalar(@socks), time - $t0;
# (give nginx and purser time to take every request: nothing tells when all 1,000 are held)
sleep 2;
# (a socket can be readable with TLS session tickets alone: ask TLS for application data)
my %buf;
my $early = 0;
for my $sock (@socks) {
    $sock->blocking(0);
    my $got = sysread $sock, my $chunk, 65536;
    $early++ if defined $got; # data, or the end
    $buf{$sock} .= $chunk if $got;
}
is $early, 0, '  none of them is answered while nothing happens';
my @quick;
for my $i (1 .. 10) {
    my $t = time;
    my ($hr) = call('GET', "/organizations/$org/clusters?page_size=10");
    push @quick, [ $hr->{status}, time - $t ];
}
is_deeply [ map { $_->[0] } @quick ], [ (200) x 10 ], 'the API answers while they wait (2 workers)';
my ($slowest) = sort { $b <=> $a } map { $_->[1] } @quick;
ok $slowest < 2, sprintf '  each within 2 s (slowest %.3f s)', $slowest;
create_cluster('wake');
my %answers;
my $deadline = time + 30;
my $sel = IO::Select->new(@socks);
while ($sel->count && time < $deadline) {
    for my $sock ($sel->can_read(1)) {
        my $got = sysread $sock, my $chunk, 65536;
        if (defined $got && $got > 0) { $buf{$sock} .= $chunk; next }
        next if !defined $got && $! == EAGAIN && $SSL_ERROR == SSL_WANT_READ;
        $sel->remove($sock);
        $answers{$sock} = $buf{$sock} // '';
    }
}
my $woken = grep { m{^HTTP/1\.1 200 } && /"name":"c-wake"/ && /"next":@{[ $last + 1 ]}\b/ } values %answers;
is $woken, $n, "one write wakes all $n readers with its event"
    or diag scalar(keys %answers) . " answered; one: " . (values %answers)[0];
close $_ for @socks;

# the watch's timeouts are not errors in nginx's error log
my @errors = grep { /\[error\]/ && /watch/ } $s->log_lines('nginx-error.log');
is scalar(@errors), 0, 'waits that time out leave no error in nginx\'s log' or diag join "\n", @errors[0 .. 4];

$s->stop;
done_testing;

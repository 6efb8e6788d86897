# 9003: purser-fcgi's signals. SIGHUP reloads the configuration and replaces the workers;
# a worker is recycled after max_requests; SIGTERM lets an in-flight request finish, then
# nothing is left; stopping the stack leaves no process of it running.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use IO::Socket::UNIX;
use Time::HiRes qw(sleep time);
use POSIX ();
use PurserStack;

# FastCGI records, for the tests that speak to the socket directly
sub record { my ($type, $content) = @_; pack('CCnnCC', 1, $type, 1, length $content, 0, 0) . $content }
sub pair {
    my ($k, $v) = @_;
    my $len = sub { $_[0] < 128 ? pack('C', $_[0]) : pack('N', $_[0] | 0x80000000) };
    $len->(length $k) . $len->(length $v) . $k . $v;
}
sub fcgi_connect {
    IO::Socket::UNIX->new(Peer => $_[0]->dir . '/run/purser-fcgi.sock', Type => SOCK_STREAM)
        or BAIL_OUT("cannot connect to the FastCGI socket: $!");
}
sub read_all {
    my ($sock) = @_;
    my $answer = '';
    while (sysread($sock, my $chunk, 65536)) { $answer .= $chunk }
    return $answer;
}

# --- SIGHUP: new configuration, new workers --------------------------------------------
my $s = PurserStack->new(workers => 2);
my @old = @{ PurserStack::wait_for(5, sub { my @w = $s->worker_pids; @w == 2 ? \@w : undef }) // [] };
is scalar(@old), 2, 'two workers before the reload';
{
    my $file = $s->dir . '/purser.yaml';
    open my $in, '<', $file or die;
    my $cfg = do { local $/; <$in> };
    $cfg =~ s/workers: \d+/workers: 3/ or die 'no workers line';
    open my $out, '>', $file or die;
    print $out $cfg;
}
kill 'HUP', $s->master_pid;
my @new = @{ PurserStack::wait_for(5, sub {
    my @w = $s->worker_pids;
    my %old = map { $_ => 1 } @old;
    (@w == 3 && !grep { $old{$_} } @w) ? \@w : undef;
}) // [] };
is scalar(@new), 3, 'after SIGHUP: three workers, as the reloaded configuration says';
my $ok = 0;
for (1 .. 20) { $ok++ if $s->get('/healthz')->{status} == 200 }
is $ok, 20, 'service goes on after the reload';

# A broken configuration is refused on reload; the running workers stay.
{
    open my $out, '>>', $s->dir . '/purser.yaml' or die;
    print $out "nonsense_section:\n  x: 1\n";
}
kill 'HUP', $s->master_pid;
ok PurserStack::wait_for(10, sub { grep { /reload refused/ && /nonsense_section/ } $s->log_lines('purser-fcgi.log') }),
    'an invalid configuration on SIGHUP is refused, logged with the key at fault';
is_deeply [ $s->worker_pids ], \@new, 'and changes nothing';
is $s->get('/healthz')->{status}, 200, 'still serving';

# --- SIGHUP under load: no request fails ------------------------------------------------
# Four clients make authenticated requests (a database read each) without pause while the
# master is told to reload ten times; every worker replaced finishes its request first and
# its replacement takes the queue, so every answer is a 200.
{
    my $file = $s->dir . '/purser.yaml';
    open my $in, '<', $file or die;
    my $cfg = do { local $/; <$in> };
    $cfg =~ s/nonsense_section:\n  x: 1\n// or die 'no broken section';
    open my $out, '>', $file or die;
    print $out $cfg;
}
my $org = $s->env('PURSER_ORG');
my @clients;
for my $c (1 .. 4) {
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        $SIG{INT} = $SIG{TERM} = 'DEFAULT';
        my ($n, $bad) = (0, 0);
        my $until = time + 4;
        while (time < $until) {
            my ($r) = $s->api('GET', "/organizations/$org");
            $n++;
            next if $r->{status} == 200;
            $bad++;
            print STDERR "# client $c: $r->{status} "
                . substr($r->{content} // '', 0, 300) . "\n";
        }
        POSIX::_exit($bad ? 1 : $n > 5 ? 0 : 2);
    }
    push @clients, $pid;
}
my $master_pid = $s->master_pid;
for (1 .. 10) { sleep 0.3; kill 'HUP', $master_pid } # (reloads spread over the clients' run)
my @exits = map { waitpid($_, 0); $? >> 8 } @clients;
is_deeply \@exits, [0, 0, 0, 0], 'ten reloads under load: four clients got only 200s';
is scalar(grep { /configuration reloaded/ } $s->log_lines('purser-fcgi.log')), 11,
    'and each reload replaced the workers (one before, ten under load)';

# --- a reload while a worker waits for a connection's first bytes -----------------------
# Having accepted a connection, libfcgi waits (up to 2 s) for its first bytes, and drops the
# connection if a signal cuts that wait short: nginx then answered 502 to a request made at a
# reload (its writev failed with EPIPE). The worker holds its stop signal until the accept is
# done; here the connection is made, the reload comes while the worker waits, and the request
# is written after it.
{
    local $SIG{PIPE} = 'IGNORE';
    my $waiting = fcgi_connect($s);
    sleep 0.3; # an idle worker has accepted it and waits for its first bytes
    kill 'HUP', $s->master_pid;
    sleep 0.3; # its SIGTERM has come
    print $waiting record(1, pack('nCx5', 1, 0))
        . record(4, join '', map { pair(@$_) } ['REQUEST_METHOD', 'GET'],
                 ['REQUEST_URI', '/healthz'], ['SERVER_PROTOCOL', 'HTTP/1.1'])
        . record(4, '') . record(5, '');
    $waiting->flush;
    like read_all($waiting), qr/Status: 200 OK/,
        'a connection accepted just before a reload is answered after it';
}

# --- the whole stack stops, leaving nothing behind --------------------------------------
# (the reloads above are over: only the three workers the reloaded configuration says, not one
# still on its way out, which a sanitizer's exit makes slow; it waited for two, always 10 s)
PurserStack::wait_for(10, sub { scalar(my @w = $s->worker_pids) == 3 });
my @pids = ($s->master_pid, $s->worker_pids, $s->pidfile('nginx'),
            PurserStack::children_of($s->pidfile('nginx')), $s->pidfile('mariadb'));
is scalar(grep { PurserStack::alive($_) } @pids), scalar(@pids), 'all ' . scalar(@pids) . ' stack processes run';
$s->stop;
is scalar(grep { PurserStack::alive($_) } @pids), 0, 'after stop none of them is left';

# --- recycling after max_requests ------------------------------------------------------
$s = PurserStack->new(workers => 1, max_requests => 5);
my %served_by;
for (1 .. 12) {
    my $r = $s->get('/healthz');
    my ($line) = grep { index($_, $r->{headers}{'x-request-id'}) >= 0 } $s->log_lines('purser-fcgi.log');
    $served_by{$1}++ if $line && $line =~ /"pid":(\d+)/;
}
# (each worker retires after 4 or 5 requests, fcgi.max_requests less up to a fifth drawn per
# worker, and the stack's own readiness checks count: three workers at least, more is right)
ok scalar(keys %served_by) >= 3, '12 requests with max_requests 5 were served by workers in turn ('
    . join(', ', map { "$_: $served_by{$_}" } sort keys %served_by) . ')';
ok !(grep { $_ > 5 } values %served_by), 'none served more than 5';

# --- SIGTERM finishes the request in flight ---------------------------------------------
# Speak FastCGI to the socket directly: begin a request and send half of its body, so a
# worker is inside it when SIGTERM arrives; then send the rest and read the answer.
my $sock = fcgi_connect($s);
my $params = join '', map { pair(@$_) } ['REQUEST_METHOD', 'GET'], ['REQUEST_URI', '/healthz'],
    ['CONTENT_LENGTH', '10'], ['SERVER_PROTOCOL', 'HTTP/1.1'];
print $sock record(1, pack('nCx5', 1, 0)) . record(4, $params) . record(4, '') . record(5, '12345');
$sock->flush;
sleep 0.3; # a worker has taken the request (nothing tells from outside)
my $master = $s->master_pid;
my @workers = $s->worker_pids;
kill 'TERM', $master;
sleep 0.5; # time itself: half a second on, the master still waits
ok PurserStack::alive($master), 'after SIGTERM the master waits for the request in flight';
print $sock record(5, '67890') . record(5, '');
$sock->flush;
my $answer = read_all($sock);
like $answer, qr/Status: 200 OK/, 'the request in flight got its whole answer';
like $answer, qr/ok\n/, 'with its body';
my $gone = PurserStack::wait_for(10, sub { !grep { PurserStack::alive($_) } $master, @workers });
ok $gone, 'then the master and every worker have exited';
ok !-e $s->dir . '/run/purser-fcgi.sock', 'and the socket is removed';

PurserStack::finish();

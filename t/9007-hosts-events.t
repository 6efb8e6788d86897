#!/usr/bin/perl
# 9007: the event feed's carrier cannot take the API down (issue 53 item 1). Three hosts of
# tools/hosts, no Redis: each host's events follower (a child of its purser-fcgi) reads the
# events table and posts what is new to its own nchan. While the followers are killed 20 times
# (SIGKILL, each host in turn; the master starts another at once), clients call the API on
# every host directly (reads, and a group's pointer written), a writer moves a pointer through
# each host in turn, and a watcher on each host follows the event feed with wait=. Then: no
# API request failed or went unanswered, no nginx worker and no purser worker crashed, every
# watcher saw every event once and in order, each follower was started again; the wake-up
# delay (a watcher's answer after the writer's, on another host and on the writer's) is
# reported as median and p99. About 60 s here, 20 to 30 of them to start everything. Root only.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Handle;
use POSIX ();
use Time::HiRes qw(sleep time);
use Test::More;
use PurserStack;
use PurserGalera qw(lock_for);
use PurserHosts;

my (@clients, %client_pid);
my $t_start = time;
my ($dir, %env) = PurserHosts::start('events', \@clients);
my $tool = PurserHosts::tool();
my $base = "/organizations/$env{PURSER_ORG}";

# A client of host n directly (PurserStack's methods), waiting up to $timeout for an answer.
sub client_for { my ($n, $timeout) = @_; PurserHosts::client($env{"PURSER_HOST${n}_URL"}, $timeout // 10) }
my $stop_file = "$dir/stop-clients";
sub client {
    my ($name, $body) = @_;
    my $pid = fork // die "fork: $!";
    if ($pid) { push @clients, $pid; $client_pid{$name} = $pid; return }
    $SIG{INT} = $SIG{TERM} = 'DEFAULT';
    open my $out, '>', "$dir/client-$name.log" or POSIX::_exit(2);
    $out->autoflush(1);
    for (my $i = 1; $name =~ /^watch/ || !-e $stop_file; $i++) { $body->($i, $out) }
    close $out;
    POSIX::_exit(0);
}
# a request, its line: start, end, what, status
sub logged {
    my ($out, $what, $code) = @_;
    my $t0 = time;
    my ($r) = eval { $code->() };
    $r //= { status => 599, content => "the client failed: $@" };
    print $out join("\t", sprintf('%.4f', $t0), sprintf('%.4f', time), $what, $r->{status},
                    $r->{status} =~ /^2/ ? '' : substr($r->{content} // '', 0, 120) =~ s/\s+/ /gr), "\n";
    return $r;
}

# Callers of the API on each host: two reads and a write of a group's pointer, in turn.
for my $n (1 .. 3) {
    my $c = client_for($n);
    client("api-$n", sub {
        my ($i, $out) = @_;
        logged($out, 'read organization', sub { $c->api('GET', $base) });
        logged($out, 'read policies', sub { $c->api('GET', "$base/policies") });
        logged($out, 'write pointer', sub { $c->api('PUT', "$base/policy_groups/g-api$n/policies/p-api$n", lock_for("p-api$n", "api$n-$i")) });
        sleep 0.05;
    });
}
# The writer: group g-w's pointer to w-i through host 1, 2, 3 in turn (its line names the host).
{
    my %c = map { ($_ => client_for($_)) } 1 .. 3;
    client('writer', sub {
        my ($i, $out) = @_;
        my $n = 1 + $i % 3;
        logged($out, "w-$i via $n", sub { $c{$n}->api('PUT', "$base/policy_groups/g-w/policies/p-w", lock_for('p-w', "w-$i")) });
        sleep 0.1;
    });
}
# A watcher on each host: from since=0, pages of the feed with wait=10; each answer's line
# gives when it came, since, next and the seqs with each pointer's revision.
for my $n (1 .. 3) {
    my $c = client_for($n, 30);
    my $since = 0;
    client("watch-$n", sub {
        my ($i, $out) = @_;
        # (the last seq, once the writers have ended: the watcher ends when it has it)
        if (-e $stop_file && open my $fin, '<', "$dir/final-seq") {
            my $final = <$fin> // '';
            POSIX::_exit(0) if $final =~ /^(\d+)$/ && $since >= $1;
        }
        my ($r, $b) = eval { $c->api('GET', "$base/events?since=$since&wait=10&page_size=1000") };
        my $at = time;
        if (!$r || $r->{status} != 200 || ref $b ne 'HASH') {
            print $out join("\t", sprintf('%.4f', $at), 'failed', $r ? $r->{status} : 599), "\n";
            sleep 0.2;
            return;
        }
        my @e = map { "$_->{seq}:" . ($_->{kind} eq 'policy_group_pointer' && $_->{name} eq 'g-w/p-w' ? $_->{revision} : '') } @{ $b->{events} // [] };
        print $out join("\t", sprintf('%.4f', $at), 'page', $since, $b->{next}, join(',', @e)), "\n";
        $since = $b->{next} if $b->{next} > $since;
    });
}

sub lines_of { my ($name) = @_; open my $fh, '<', "$dir/client-$name.log" or return (); map { chomp; [ split /\t/, $_, -1 ] } <$fh> }
ok PurserStack::wait_for(60, sub { (grep { $_->[3] =~ /^2/ } lines_of('writer')) >= 10 }), 'the writer is acknowledged';

# ---- the carrier killed 20 times ----
my @killed;
for my $k (0 .. 19) {
    my $n = 1 + $k % 3;
    my $pid = `'$tool' kill-follower '$dir' $n`;
    chomp $pid;
    push @killed, $pid if $pid =~ /^\d+$/;
    sleep 0.7;
}
is scalar(@killed), 20, 'the events followers were killed 20 times (SIGKILL), each host in turn';
sleep 2;
open my $touch, '>', $stop_file or die;
close $touch;
# the writers end after their request in flight; the watchers once they have the last seq
waitpid $client_pid{$_}, 0 for 'api-1', 'api-2', 'api-3', 'writer';
my $cluster = PurserGalera->new($env{PURSER_GALERA});
$cluster->in_step(60);
my ($row) = $cluster->sql(1, "SELECT MAX(e.seq) FROM events e JOIN organizations o ON o.id = e.org_id WHERE o.name = '$env{PURSER_ORG}'");
my $newest = $row ? $row->[0] : -1;
{ open my $fin, '>', "$dir/final-seq.tmp" or die; print $fin "$newest\n"; close $fin; rename "$dir/final-seq.tmp", "$dir/final-seq" }
ok PurserStack::wait_for(30, sub { !grep { waitpid($client_pid{"watch-$_"}, POSIX::WNOHANG()) == 0 } 1 .. 3 }),
    "every watcher reached the last seq ($newest) within 30 s of the writers' end";
kill 'KILL', @clients;
waitpid $_, 0 for @clients;
@clients = ();

# ---- what the clients saw ----
my (%requests, @failed);
for my $name ('api-1', 'api-2', 'api-3', 'writer') {
    for my $l (lines_of($name)) {
        $requests{$name}++;
        push @failed, "$name $l->[2]: $l->[3] $l->[4]" unless $l->[3] =~ /^2/;
    }
}
my $total = 0;
$total += $_ for values %requests;
is_deeply \@failed, [], "every API request on every host was answered 2xx ($total requests: "
    . join(', ', map { "$_ $requests{$_}" } sort keys %requests) . ')'
    or diag join "\n", @failed[0 .. ($#failed < 9 ? $#failed : 9)];

my %acked; # revision => [host, start, end]
for my $l (lines_of('writer')) {
    my ($rev, $via) = $l->[2] =~ /^(w-\d+) via (\d)$/ or next;
    $acked{$rev} = [$via, $l->[0], $l->[1]] if $l->[3] =~ /^2/;
}
my (%delay, @order);
for my $n (1 .. 3) {
    my ($expect, %seen_at, @wrong) = (0);
    for my $l (lines_of("watch-$n")) {
        if ($l->[1] eq 'failed') { push @wrong, "a wait answered $l->[2]"; next }
        my ($at, $since, $next, $list) = @{$l}[0, 2, 3, 4];
        push @wrong, "asked since $since, expected $expect" if $since != $expect;
        my @s = map { (split /:/)[0] } grep { length } split /,/, $list;
        my @want = ($since + 1 .. $since + @s);
        push @wrong, "since $since: seqs @s" if "@s" ne "@want" || (@s && $next != $s[-1]);
        for (grep { length } split /,/, $list) {
            my ($seq, $rev) = split /:/;
            $seen_at{$rev} //= $at if length $rev;
        }
        $expect = $next if $next > $expect;
    }
    push @wrong, "ended at seq $expect, the log has $newest" if $expect != $newest;
    is_deeply \@wrong, [], "the watcher on host $n saw every event 1..$newest once, in order" or diag join "\n", @wrong[0 .. ($#wrong < 9 ? $#wrong : 9)];
    for my $rev (keys %acked) {
        my ($via, $t0, $t1) = @{ $acked{$rev} };
        next unless defined $seen_at{$rev};
        my $where = $via == $n ? 'same' : 'across';
        push @{ $delay{"$where/ack"} }, ($seen_at{$rev} - $t1) * 1000;
        push @{ $delay{"$where/start"} }, ($seen_at{$rev} - $t0) * 1000;
    }
}

# ---- the logs: nothing crashed, each follower started again ----
my ($crashes, $restarts, @crash_lines) = (0, 0);
for my $n (1 .. 3) {
    for my $f ("$dir/host$n/log/purser-fcgi.log", "$dir/host$n/log/nginx-error.log") {
        open my $fh, '<', $f or next;
        while (<$fh>) {
            $restarts++ if /events follower ended/;
            if (/worker crashed|exited on signal|SIGSEGV|Protocol error/) { $crashes++; push @crash_lines, "host $n: $_" }
        }
    }
}
is $crashes, 0, 'no nginx worker and no purser worker crashed on any host' or diag @crash_lines[0 .. ($#crash_lines < 9 ? $#crash_lines : 9)];
is $restarts, 20, 'and each killed follower was started again by its master (20)';

sub pct {
    my ($list, $p) = @_;
    my @s = sort { $a <=> $b } @$list;
    return 0 unless @s;
    my $i = int($p / 100 * @s + 0.5) - 1;
    $i = 0 if $i < 0;
    $i = $#s if $i > $#s;
    return $s[$i];
}
ok scalar(@{ $delay{'across/ack'} // [] }) >= 20, 'the watchers on other hosts woke for the writer\'s writes (' . scalar(@{ $delay{'across/ack'} // [] }) . ')';
cmp_ok pct($delay{'across/ack'}, 50), '<', 500, 'a watcher on another host wakes within half a second of the write\'s answer (median)';
for my $k ('across/start', 'same/start', 'across/ack', 'same/ack') {
    diag sprintf 'wake-up %-13s median %6.1f ms, p99 %6.1f ms (%d)', $k, pct($delay{$k}, 50), pct($delay{$k}, 99), scalar @{ $delay{$k} // [] };
}
diag sprintf 'total %.0f s', time - $t_start;
done_testing();

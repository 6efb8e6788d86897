#!/usr/bin/perl
# 9006: three purser hosts on a three-node Galera cluster behind one front nginx (tools/hosts:
# each in a network namespace of its own) under faults, with a checker in Jepsen's manner.
# First, with nothing else running: a reader waiting on host 2 wakes for a write through
# host 1, and a read through a host whose node lags waits for it (causal reads; without them
# the same read answers the older value). Then writers and readers run through the front and
# through each host directly while, in turn, a purser host is killed, a Galera node is killed,
# a Galera node loses its disk (killed, its datadir removed, made again by a full state
# transfer while its purser host keeps running), a Galera node is cut off from the other two, the events followers are killed, and a purser
# host is cut off
# from the front; each fault heals before the next. Every
# request and answer is recorded (a direct request a host leaves unanswered for 10 s as
# indeterminate), and after each heal (every client paused before its next request, or the
# test fails there; nodes in step) the
# checker verifies: nothing acknowledged is lost (on every node), the document history is one
# linear sequence, the organization's event seq has no gap and no duplicate (in the log and as
# a follower saw it), no read went back in time (a read begun after a write was acknowledged
# sees it or later, whichever host either went through), no answer was 500, and every refusal
# was 503 with Retry-After. The closing note gives, per fault: requests, acknowledged writes,
# refusals (and through which target) and the time to recover, and the nodes' wsrep states as
# the fault's hold ended. 80 to 100 seconds here (15 to 20 to start everything), depending on
# the machine's load. Root only (network namespaces).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Handle;
use JSON::PP;
use POSIX ();
use Time::HiRes qw(sleep time);
use Test::More;
use PurserStack;
use PurserGalera qw(lock_for put_policy put_document);
use PurserHosts;

my (@clients, %client_pid);
my $t_start = time;
my ($dir, %env) = PurserHosts::start('hosts', \@clients);
my $tool = PurserHosts::tool();
sub hosts { PurserHosts::run(@_) }
my $cluster = PurserGalera->new($env{PURSER_GALERA});

# How long a client waits for an answer (HTTP::Tiny's timeout: to connect, and for each read
# or write). The front answers every request, 503 at worst, once its tries of the hosts are
# over (proxy_next_upstream_timeout 80 s): a request through it unanswered after 100 s is a
# failure. A host asked directly may be down or its nginx wedged, which only silence tells: 10
# s, several times what a host under these faults takes to answer or refuse (a Galera node
# cut off stalls commits for evs.suspect_timeout 3 s, then refuses), and its request is then
# indeterminate (599: it may or may not have taken effect, as Jepsen records it).
my $front_timeout = 100;
my $direct_timeout = 10;
# The longest a client takes to reach its next pause point: one request and its pause.
my $pause_limit = $front_timeout + 10;

# A client of one target: the front or host N directly (a PurserStack object for its methods;
# the parent's exchanges are checked against GET /docs, the children's are not: pid). TIMEOUT
# as above unless given (a reader waiting on the event feed needs its wait and more).
sub client_for {
    my ($target, $timeout) = @_;
    $timeout //= $target eq 'front' ? $front_timeout : $direct_timeout;
    return PurserHosts::client($target eq 'front' ? $env{PURSER_URL} : $env{ 'PURSER_HOST' . substr($target, 1) . '_URL' }, $timeout);
}
my $front = client_for('front');
my $org = $env{PURSER_ORG};
my $base = "/organizations/$org";
my @targets = ('front', 'h1', 'h2', 'h3');

# The operations. Each returns (response, what it wrote or read).
my %op = (
    # writes: group g-X's pointer moves to X-i; the bucket's document becomes d-i
    put_policy => sub { my ($c, $x, $i) = @_; put_policy($c, $base, $x, $i) },
    put_docs => sub {
        my ($c, $x, $i) = @_;
        my ($r, $rev) = put_document($c, 'bucket-d', 'doc-d', "d-$i");
        return ($r, "d-$i\@$rev");
    },
    # reads: a group's pointer, the newest document revision, the event feed from since
    get_pointer => sub {
        my ($c, $x) = @_;
        my ($r, $b) = $c->api('GET', "$base/policy_groups/g-$x/policies/p-$x");
        return ($r, $r->{status} == 200 ? "$x:" . ($b->{revision_id} // '') : "$x:");
    },
    get_revision => sub {
        my ($c) = @_;
        my ($r, $b) = $c->api('GET', '/api/v1.0/revisions?sort=id&order=desc&limit=1');
        return ($r, $r->{status} == 200 ? ($b->{results}[0]{id} // 0) : '');
    },
);

my $stop_file = "$dir/stop-clients";
my $pause_file = "$dir/pause-clients";
my $client_name; # (in a client's process)
# A client's pause point, before each of its requests: while the checker reads (its pause file
# is there) the client says so and waits, with nothing in flight.
sub pause_point {
    return unless -e $pause_file;
    open my $p, '>', "$dir/paused-$client_name" or POSIX::_exit(2);
    close $p;
    sleep 0.05 while -e $pause_file && !-e $stop_file;
    unlink "$dir/paused-$client_name";
}
sub client {
    my ($name, $body) = @_;
    my $pid = fork // die "fork: $!";
    if ($pid) { push @clients, $pid; $client_pid{$name} = $pid; return }
    $SIG{INT} = $SIG{TERM} = 'DEFAULT';
    $client_name = $name;
    open my $out, '>', "$dir/client-$name.log" or POSIX::_exit(2);
    $out->autoflush(1);
    my %c = map { ($_ => client_for($_)) } @targets;
    my $log = sub {
        my ($t0, $target, $kind, $r, $value) = @_;
        my $ra = $r->{headers}{'retry-after'} // '';
        my $why = $r->{status} =~ /^2/ ? '' : substr($r->{content} // '', 0, 160) =~ s/\s+/ /gr;
        print $out join("\t", sprintf('%.4f', $t0), sprintf('%.4f', time), $target, $kind, $r->{status}, $ra,
                        $value // '', $why), "\n";
    };
    for (my $i = 1; !-e $stop_file; $i++) {
        pause_point();
        $body->($i, \%c, $log);
        sleep 0.05;
    }
    close $out;
    POSIX::_exit(0);
}
sub run_op {
    my ($c, $log, $target, $kind, @args) = @_;
    pause_point();
    my $t0 = time;
    my ($r, $value) = eval { $op{$kind}->($c->{$target}, @args) };
    $r //= { status => 599, headers => {}, content => "the client failed: $@" };
    $log->($t0, $target, $kind, $r, $value);
    return ($r, $value);
}

# Writers: group a through the front, group b through each host in turn, documents through the
# front. Readers: pointers and the newest revision through every target in turn. A follower of
# the event feed, through every target in turn, from since=0.
client('writer-a', sub { my ($i, $c, $log) = @_; run_op($c, $log, 'front', 'put_policy', 'a', $i) });
client('writer-b', sub { my ($i, $c, $log) = @_; run_op($c, $log, $targets[1 + $i % 3], 'put_policy', 'b', $i) });
client('writer-d', sub { my ($i, $c, $log) = @_; run_op($c, $log, 'front', 'put_docs', 'd', $i) });
for my $n (1, 2) {
    client("reader-$n", sub {
        my ($i, $c, $log) = @_;
        my $target = $targets[($i + $n) % 4];
        run_op($c, $log, $target, 'get_pointer', $_) for 'a', 'b';
        run_op($c, $log, $target, 'get_revision');
    });
}
{
    my $since = 0;
    client('follower', sub {
        my ($i, $c, $log) = @_;
        my $target = $targets[$i % 4];
        pause_point();
        my $t0 = time;
        my ($r, $b) = eval { $c->{$target}->api('GET', "$base/events?since=$since&wait=2&page_size=1000") };
        $r //= { status => 599, headers => {}, content => "the client failed: $@" };
        my $value = "$since>";
        if ($r->{status} == 200 && ref $b eq 'HASH') {
            $value .= ($b->{next} // '') . ':' . join(',', map { $_->{seq} } @{ $b->{events} // [] });
            $since = $b->{next} if defined $b->{next} && $b->{next} > $since;
        }
        $log->($t0, $target, 'events', $r, $value);
    });
}

# ---- the checker -------------------------------------------------------------------------
sub read_logs {
    my @e;
    for my $f (glob "$dir/client-*.log") {
        my ($name) = $f =~ /client-(.+)\.log$/;
        open my $fh, '<', $f or next;
        while (<$fh>) {
            chomp;
            my @f = split /\t/, $_, -1;
            next if @f < 7; # (a line being written)
            push @e, { client => $name, t0 => $f[0], t1 => $f[1], target => $f[2], kind => $f[3],
                       status => $f[4], retry_after => $f[5], value => $f[6], why => $f[7] // '' };
        }
    }
    return sort { $a->{t0} <=> $b->{t0} } @e;
}

my $org_id = $cluster->org_id($org);
my %pause_waits;

# Pauses the clients for the checker. Each pauses before its next request, so within its
# longest request; one that does not (hung, or dead) fails the test, which ends there.
sub pause_clients {
    my ($phase) = @_;
    open my $p, '>', $pause_file or die;
    close $p;
    my @names = map { m{client-(.+)\.log$} ? $1 : () } glob "$dir/client-*.log";
    my $t0 = time;
    my %exited;
    PurserStack::wait_for($pause_limit, sub {
        for my $name (@names) { $exited{$name} = $? if waitpid($client_pid{$name}, POSIX::WNOHANG()) > 0 }
        return %exited || !grep { !-e "$dir/paused-$_" } @names;
    });
    my $paused = !%exited && !grep { !-e "$dir/paused-$_" } @names;
    my $took = time - $t0;
    $pause_waits{max} = $took if $took > ($pause_waits{max} // 0);
    $pause_waits{total} += $took;
    $pause_waits{count}++;
    return if ok $paused, "$phase: every client paused (each before its next request) within $pause_limit s";
    diag "$_ ended (wait status $exited{$_})" for sort keys %exited;
    diag 'not paused: ' . join ' ', grep { !-e "$dir/paused-$_" } @names;
    done_testing();
    exit 1;
}
# Resumes them, and waits until each has seen it (so that the next pause is not taken for this one).
sub resume_clients {
    unlink $pause_file;
    PurserStack::wait_for(10, sub { my @left = glob "$dir/paused-*"; !@left });
}

sub step_of { my ($v) = @_; $v =~ /-(\d+)$/ ? $1 : 0 }

# Everything checked on everything recorded so far; $phase names the assertions.
sub check {
    my ($phase) = @_;
    my @e = read_logs();
    my (@bad, @unanswered);
    for my $e (@e) {
        next if $e->{status} =~ /^2/;
        if ($e->{status} == 503 && $e->{retry_after} =~ /^\d+$/) { next }
        # a pointer not set yet (the readers start with the writers); after an acknowledged
        # upload it would be a read back in time, which is checked below
        next if $e->{status} == 404 && $e->{kind} eq 'get_pointer';
        # a host that is down or cut off cannot answer a client that asked it directly
        if ($e->{status} == 599 && $e->{target} ne 'front') { push @unanswered, $e; next }
        push @bad, "$e->{client} $e->{kind} via $e->{target}: $e->{status} $e->{why}";
    }
    is_deeply \@bad, [], "$phase: every answer was 2xx or 503 with Retry-After (no 500, nothing unanswered through the front)"
        or diag join "\n", @bad[0 .. ($#bad < 9 ? $#bad : 9)];

    # the nodes in step, then every acknowledged write on each
    ok $cluster->in_step(120), "$phase: the three nodes have committed the same last write-set";
    my %acked;
    for my $e (grep { $_->{status} =~ /^2/ } @e) {
        push @{ $acked{ $e->{kind} } }, $e if $e->{kind} =~ /^put_/;
    }
    for my $node (1 .. 3) {
        my %revisions = %{ $cluster->policy_revisions($node) };
        my @missing = map { "p-$_" } grep { !$revisions{"p-" . ($_ =~ s/-\d+$//r) . "/$_"} } map { $_->{value} } @{ $acked{put_policy} // [] };
        my %at = map { ($_->[0] => $_->[2]) } grep { $_->[1] eq 'bucket-d' } $cluster->documents($node, $org_id);
        for my $e (@{ $acked{put_docs} // [] }) {
            my ($value, $rev) = split /\@/, $e->{value};
            my $got = length $rev && $at{$rev} ? eval { decode_json($at{$rev})->{value} } // '?' : 'nothing';
            push @missing, "revision $rev holds $got, not $value" if $got ne $value;
        }
        is_deeply \@missing, [], "$phase: node $node holds every acknowledged policy upload and document write";

        my @ids = $cluster->document_ids($node, $org_id);
        is_deeply \@ids, [ 1 .. scalar @ids ], "$phase: node $node: document revisions are 1.." . scalar(@ids) . ', no gap, no repeat';
        my ($prev, @backwards) = (0);
        for my $id (@ids) {
            my $v = eval { decode_json($at{$id} // '{}')->{value} } // next;
            push @backwards, "revision $id has $v after d-$prev" if step_of($v) < $prev;
            $prev = step_of($v);
        }
        is_deeply \@backwards, [], "$phase: node $node: the document only moves forward along the history"
            or diag "node $node: the bucket's rows (first revision, until, value): ", join ', ', map { "$_->[0]..$_->[1] $_->[2]" }
                $cluster->sql($node, "SELECT d.revision_id, d.until_revision, JSON_VALUE(c.data, '\$.value') FROM doc_revision_documents d "
                    . "JOIN doc_buckets b ON b.id = d.bucket_id JOIN doc_contents c ON c.id = d.content_id "
                    . "WHERE d.org_id = $org_id AND b.name = 'bucket-d' ORDER BY d.revision_id LIMIT 40");
        my @seqs = map { $_->[0] } $cluster->sql($node, "SELECT seq FROM events WHERE org_id = $org_id ORDER BY seq");
        my @wrong = grep { $seqs[$_] != $_ + 1 } 0 .. $#seqs;
        ok !@wrong && @seqs, "$phase: node $node: the organization's events are seq 1.." . scalar(@seqs) . ', no gap, no duplicate'
            or diag "first wrong at index $wrong[0]: $seqs[$wrong[0]]";
    }

    # No read back in time: a read begun after a write was acknowledged sees it or a later one
    # (through any host); a reader never sees a value older than one it saw before. Writes left
    # unanswered (599, indeterminate) count for neither; a stale read of one's value says so, since
    # such a write may have taken effect late (Jepsen would let it), which is why the test keeps
    # the timeout to a host well above its answers' times (above).
    my (@stale, %seen, %acked_max);
    my %indeterminate = map { ($_->{value} => $_->{t0}) } grep { $_->{status} == 599 && $_->{kind} eq 'put_policy' } @e;
    my $why = sub {
        my ($g, $step) = @_;
        my $t = defined $g ? $indeterminate{"$g-$step"} : undef;
        return defined $t ? " ($g-$step: a write unanswered, begun at $t)" : '';
    };
    my @writes = sort { $a->{t1} <=> $b->{t1} } grep { $_->{status} =~ /^2/ && $_->{kind} =~ /^put_/ } @e;
    my @reads = grep { $_->{status} =~ /^2/ && $_->{kind} =~ /^get_/ } @e; # (sorted by start)
    my $w = 0;
    for my $r (@reads) {
        while ($w < @writes && $writes[$w]{t1} < $r->{t0}) {
            my $x = $writes[$w++];
            if ($x->{kind} eq 'put_policy') {
                my ($g) = $x->{value} =~ /^(\w+)-/;
                $acked_max{"p$g"} = step_of($x->{value}) if step_of($x->{value}) > ($acked_max{"p$g"} // 0);
            } else {
                my ($rev) = $x->{value} =~ /\@(\d+)$/;
                $acked_max{rev} = $rev if $rev && $rev > ($acked_max{rev} // 0);
            }
        }
        my ($key, $got, $g);
        if ($r->{kind} eq 'get_pointer') { ($g, my $v) = split /:/, $r->{value}, 2; ($key, $got) = ("p$g", $v eq '' ? 0 : step_of($v)) }
        else { ($key, $got) = ('rev', $r->{value} || 0) }
        my $floor = $acked_max{$key} // 0;
        push @stale, "$r->{client} via $r->{target} at $r->{t0}: $key $got, acknowledged $floor before" . $why->($g, $got) if $got < $floor;
        my $mine = $seen{"$r->{client}/$key"} // 0;
        push @stale, "$r->{client} via $r->{target} at $r->{t0}: $key $got after it saw $mine" . $why->($g, $got) if $got < $mine;
        $seen{"$r->{client}/$key"} = $got if $got > $mine;
    }
    is_deeply \@stale, [], "$phase: no read went back in time (" . scalar(@reads) . ' reads)'
        or diag join "\n", @stale[0 .. ($#stale < 9 ? $#stale : 9)];

    # The follower: each page continues where the previous one ended, without gap or repeat.
    my ($expect, @feed) = (0);
    for my $e (grep { $_->{kind} eq 'events' && $_->{status} == 200 } @e) {
        my ($since, $next, $list) = $e->{value} =~ /^(\d+)>(\d+):(.*)$/ or next;
        my @s = split /,/, $list;
        push @feed, "asked since $since, expected $expect" if $since != $expect;
        push @feed, "since $since via $e->{target}: next $next went back" if $next < $since;
        my @want = ($since + 1 .. $since + @s);
        push @feed, "since $since via $e->{target}: seqs @s" if "@s" ne "@want" || (@s && $next != $s[-1]);
        $expect = $next if $next > $expect;
    }
    is_deeply \@feed, [], "$phase: the follower read every event once, in order, through all four targets (up to seq $expect)";
    return \@e;
}

# ---- the faults --------------------------------------------------------------------------
sub healthy_via {
    my ($target) = @_;
    my $r = eval { client_for($target)->{http}->get("$env{ 'PURSER_HOST' . substr($target, 1) . '_URL' }/healthz/deep") };
    return $r && $r->{status} == 200;
}
# Whether the front has had host n answer a request with 200 or 201 since its log was $since
# bytes long (the front's log names the host that answered: the last of its upstreams).
sub front_reaches {
    my ($n, $since) = @_;
    my $host_ip = $env{"PURSER_HOST${n}_URL"} =~ m{//([\d.]+)} ? $1 : '';
    open my $fh, '<', "$dir/front/log/access.log" or return 0;
    seek $fh, $since, 0;
    while (<$fh>) {
        my ($upstreams, $statuses) = / upstream=(.*) upstream_status=(.*)$/ or next;
        my ($last) = reverse split /, /, $upstreams;
        my ($status) = reverse split /, /, $statuses;
        return 1 if ($last // '') eq "$host_ip:8443" && ($status // '') =~ /^20[01]$/;
    }
    return 0;
}
sub access_size { -s "$dir/front/log/access.log" // 0 }
# What a lost host cost the reads the front sent it, in its log from byte $from to $to: the
# API's GETs (not the event feed's waits nor the routes the front gives 30 s; writes keep 30 s) that
# named host n among their upstreams and went on to another: (how many, how many of those
# another host answered with 2xx, the longest time one of those took, the longest of all).
sub went_on {
    my ($n, $from, $to) = @_;
    my $host_ip = $env{"PURSER_HOST${n}_URL"} =~ m{//([\d.]+)} ? $1 : '';
    open my $fh, '<', "$dir/front/log/access.log" or return (0, 0, 0, 0);
    seek $fh, $from, 0;
    my ($count, $answered, $max_ok, $max) = (0, 0, 0, 0);
    while (<$fh>) {
        last if tell($fh) > $to;
        my ($path, $status, $rt, $upstreams) = m{"GET (\S+) [^"]*" (\d+) rt=([\d.]+) upstream=(.*) upstream_status=} or next;
        next if $path =~ m{/events\?|/buckets/[^/]+/documents} || $upstreams !~ /, / || $upstreams !~ /\Q$host_ip\E:/;
        $count++;
        $max = $rt if $rt > $max;
        next unless $status =~ /^2/;
        $answered++;
        $max_ok = $rt if $rt > $max_ok;
    }
    return ($count, $answered, $max_ok, $max);
}

# A write through host A wakes a reader waiting on host B (B's events follower posts it to B's
# nchan), before
# its wait ends: asked with the clients paused, so that nothing else writes.
sub wake_across {
    my ($from, $to, $wait) = @_;
    my ($r0, $b0) = client_for($to)->api('GET', "$base/events?since=0&page_size=1000");
    my $since = $b0->{next} // 0;
    pipe my $rd, my $wr or die;
    my $pid = fork // die;
    if (!$pid) {
        close $rd;
        my $t0 = time;
        my (undef, $b) = eval { client_for($to, $wait + $direct_timeout)->api('GET', "$base/events?since=$since&wait=$wait") };
        printf $wr "%.3f %d\n", time - $t0, scalar @{ $b->{events} // [] };
        close $wr; # (flushed: _exit does not)
        POSIX::_exit(0);
    }
    close $wr;
    sleep 1; # (the reader is waiting on nchan by now)
    my ($r) = client_for($from)->api('PUT', "$base/policy_groups/g-probe/policies/p-probe", lock_for('p-probe', 'probe-' . int(time * 1000)));
    my $line = <$rd> // '';
    waitpid $pid, 0;
    my ($took, $n) = split ' ', $line;
    return ($r->{status}, $took // 99, $n // 0);
}

# A node that lags: node 3's applier held for 3 s (FLUSH TABLES WITH READ LOCK pauses it), a
# write through host 1 meanwhile, then a read of it through host 3 (whose workers have the
# token cached, so that the read's only statements are reads). Returns what the read saw and
# how long it took.
my $lag_step = 0;
sub lagging_read {
    my $h3 = client_for('h3');
    my $path = "$base/policy_groups/g-lag/policies/p-lag";
    $h3->api('GET', $path) for 1 .. 4;
    my $pid = fork // die;
    if (!$pid) {
        exec 'mariadb', '--no-defaults', "--socket=$env{PURSER_GALERA}/node3/mariadb.sock", '-uroot', '-e',
            'FLUSH TABLES WITH READ LOCK; SELECT SLEEP(3); UNLOCK TABLES'
            or POSIX::_exit(127);
    }
    sleep 0.5;
    my $rev = 'lag-' . ++$lag_step;
    my ($w) = client_for('h1')->api('PUT', $path, lock_for('p-lag', $rev));
    my $t0 = time;
    my ($r, $b) = $h3->api('GET', $path);
    my $took = time - $t0;
    waitpid $pid, 0;
    return ($w->{status}, $b->{revision_id} // "status $r->{status}", $took, $rev);
}

# Host n's purser-fcgi master (its pid file), to tell a host that went on from one restarted.
my $host_master = '';
sub master_of {
    my ($n) = @_;
    open my $fh, '<', "$dir/host$n/run/purser-fcgi.pid" or return '';
    my $pid = <$fh> // '';
    chomp $pid;
    return $pid;
}

# Each node's component, state and cluster size, as "node 1 Primary/Synced/3; ..." ('-' for
# a node that does not answer).
sub cluster_states {
    return join '; ', map { my $n = $_; "node $n " . join '/', map { $cluster->status($n, $_) || '-' }
        'wsrep_cluster_status', 'wsrep_local_state_comment', 'wsrep_cluster_size' } 1 .. 3;
}

my @faults = (
    { name => 'kill purser host 2', hold => 4, lost => 2,
      break => sub { hosts('kill-host', 2) }, heal => sub { hosts('start-host', 2) },
      recovered => sub { healthy_via('h2') } },
    { name => 'kill Galera node 3', hold => 4,
      break => sub { hosts('kill-node', 3) }, heal => sub { hosts('start-node', 3) },
      recovered => sub { healthy_via('h3') } },
    { name => 'partition Galera node 1 from nodes 2 and 3', hold => 12,
      break => sub { hosts('partition', 'g1', 'g2', 'g3') }, heal => sub { hosts('heal') },
      recovered => sub { healthy_via('h1') },
      during => sub {
          ok PurserStack::wait_for(20, sub { $cluster->status(1, 'wsrep_cluster_status') eq 'non-Primary' }),
              'the cut-off node 1 is non-Primary (it refuses: error 1047)';
          # (the size alone is that of a non-Primary component too)
          ok PurserStack::wait_for(20, sub { $cluster->status(2, 'wsrep_cluster_size') eq '2'
                  && !grep { $cluster->status($_, 'wsrep_cluster_status') ne 'Primary' } 2, 3 }),
              'nodes 2 and 3 go on as a cluster of two (both Primary)'
              or diag cluster_states();
      } },
    # (after the partition: in 2 of 4 runs a partition of node 1 soon after node 2 was made
    # again left nodes 2 and 3 non-Primary too, a cluster of two without quorum; the cause is
    # not known yet, and the faults are kept apart so that each holds what it tests)
    # a node whose disk is lost: killed, its datadir removed, started again empty (the heal
    # waits until the full state transfer from a donor is done and the node is synced); its
    # purser host is not restarted, and must serve again on its own
    { name => 'rebuild Galera node 2 from nothing', hold => 2,
      break => sub {
          $host_master = master_of(2);
          # (a file only node 2's old datadir holds: gone once it is made again)
          open my $m, '>', "$env{PURSER_GALERA}/node2/data/purser-old-datadir" or die;
          close $m;
          hosts('kill-node', 2);
      },
      heal => sub { hosts('rebuild-node', 2) },
      recovered => sub { healthy_via('h2') },
      after => sub {
          is master_of(2), $host_master, '  host 2 served again with the purser-fcgi it had (no restart)';
          ok -e "$env{PURSER_GALERA}/node2/data/grastate.dat" && !-e "$env{PURSER_GALERA}/node2/data/purser-old-datadir",
              '  node 2 was made again from an empty datadir (its old one removed)';
      } },
    # each host's events follower (what carries commits to the other hosts' waiting readers)
    # killed, twice each; their masters start them again at once
    { name => 'kill the events followers', hold => 6,
      break => sub { for my $round (1, 2) { system("'$tool' kill-follower '$dir' $_ > /dev/null") for 1 .. 3; sleep 0.5 } },
      heal => sub { },
      recovered => sub { my ($status, $took, $n) = wake_across('h1', 'h2', 3); $status =~ /^2/ && $n > 0 && $took < 3 } },
    { name => 'partition purser host 3 from the front', hold => 8, lost => 3,
      break => sub { hosts('partition', 'h3', 'front') }, heal => sub { hosts('heal') },
      recovered => sub { my ($mark) = @_; front_reaches(3, $mark) } },
);

ok PurserStack::wait_for(60, sub { my @e = read_logs(); (grep { $_->{kind} =~ /^put_/ && $_->{status} =~ /^2/ } @e) >= 15 }),
    'the writers are acknowledged';
pause_clients('before any fault');
check('before any fault');
{
    my ($status, $took, $n) = wake_across('h1', 'h2', 20);
    ok $status =~ /^2/ && $n > 0 && $took < 20, 'a reader waiting on host 2 woke for a write through host 1, before its wait ended'
        or diag "write $status; the reader had $n events after $took s";
    diag sprintf 'a reader on host 2 woke %.2f s after it asked (1 s before the write through host 1)', $took;

    client_for('h1')->api('PUT', "$base/policy_groups/g-lag/policies/p-lag", lock_for('p-lag', 'lag-0'));
    sleep 0.5;
    my ($wrote, $saw, $waited, $rev) = lagging_read();
    is "$wrote $saw", "200 $rev", 'a read through host 3 while node 3 lags sees the write acknowledged through host 1'
        or diag "waited $waited s";
    ok $waited > 1, sprintf('because it waited for node 3 to catch up (%.1f s)', $waited);
    # the same without causal reads (one worker, so that its token is cached): the stale read
    # this test exists to catch
    hosts('kill-host', 3);
    { local $ENV{PURSER_CAUSAL_READS} = 0; local $ENV{PURSER_WORKERS} = 1; hosts('start-host', 3) }
    ($wrote, $saw, $waited, $rev) = lagging_read();
    isnt $saw, $rev, "with database.causal_reads off, the same read answers the older value ($saw, after $rev)";
    hosts('kill-host', 3);
    hosts('start-host', 3);
}
resume_clients();
my @notes;
for my $f (@faults) {
    my $from = time;
    my $broke_at = access_size();
    $f->{break}->();
    $f->{during}->() if $f->{during};
    sleep $f->{hold};
    my $states = cluster_states();
    my $mark = access_size();
    my $healed_at = time;
    $f->{heal}->();
    my $ok = PurserStack::wait_for(120, sub { $f->{recovered}->($mark) });
    my $recover = time - $healed_at;
    ok $ok, "$f->{name}: served again after the heal";
    $f->{after}->() if $f->{after};
    if ($f->{lost}) { # what the lost host cost each request the front had sent it
        my ($count, $answered, $max_ok, $max) = went_on($f->{lost}, $broke_at, access_size());
        # a host cut off holds the requests sent to it until the front's timeout, so some must
        # go on; a killed one refuses the connection at once, and nginx may mark it failed
        # before any read of the clients reaches it (0 is then a good answer: nothing waited)
        ok $count > 0 || $f->{name} =~ /^kill/,
            "$f->{name}: the front sent requests to host $f->{lost} and went on to another ($count)";
        cmp_ok $max_ok, '<', 3, "  each one another host answered was answered within 3 s ($answered, the longest $max_ok s)";
        push @notes, sprintf '%-44s %5d requests reached host %d and went on: %d answered by another, the longest in %.3f s (any: %.3f s)',
            $f->{name}, $count, $f->{lost}, $answered, $max_ok, $max;
    }
    my $to = time;
    pause_clients("after '$f->{name}'");
    my $e = check("after '$f->{name}'");
    resume_clients();
    my @in = grep { $_->{t0} >= $from && $_->{t0} < $to } @$e;
    my %refused;
    $refused{ $_->{target} }++ for grep { $_->{status} == 503 } @in;
    push @notes, sprintf '%-44s %5d requests, %4d writes acknowledged, %4d refused (503), %3d unanswered (direct), recovered %.1f s after the heal (fault held %d s)',
        $f->{name}, scalar @in, scalar(grep { $_->{kind} =~ /^put_/ && $_->{status} =~ /^2/ } @in),
        scalar(grep { $_->{status} == 503 } @in), scalar(grep { $_->{status} == 599 } @in), $recover, $f->{hold};
    # where the refusals came from, and the cluster as the fault's hold ended (what to look at
    # when a phase acknowledged little)
    push @notes, sprintf '%44s refused via %s; before the heal: %s', '',
        join(', ', map { "$_ " . ($refused{$_} // 0) } @targets), $states;
}
open my $touch, '>', $stop_file or die;
close $touch;
resume_clients();
waitpid $_, 0 for @clients;
@clients = ();

is $front->get('/healthz/deep')->{status}, 200, 'the front answers, all hosts back';
my $metrics = client_for('h1')->get('/metrics', { headers => { authorization => "Bearer $env{PURSER_ADMIN_TOKEN}" } });
like $metrics->{content} // '', qr/^purser_db_causal_waits_total [1-9]/m, 'host 1 made its reads wait for the cluster (causal reads)';
# each host's nginx trusts the front for X-Forwarded-For (real_ip): its log names the client
{
    my $front_ip = $env{PURSER_URL} =~ m{//([\d.]+)} ? $1 : '';
    my ($from_front, $lines) = (0, 0);
    for my $n (1 .. 3) {
        open my $fh, '<', "$dir/host$n/log/nginx-access.log" or next;
        while (<$fh>) { $lines++; $from_front++ if /^\Q$front_ip\E / }
    }
    cmp_ok $lines, '>', 1000, "the hosts' nginx logged the run ($lines lines)";
    is $from_front, 0, '  and none names the front as the client: each names the client it forwarded for';
}
diag $_ for @notes;
diag sprintf 'the clients paused %d times for the checker, each within %.1f s (%.1f s in all)',
    $pause_waits{count}, $pause_waits{max}, $pause_waits{total};
diag sprintf 'total %.0f s', time - $t_start;
done_testing();

#!/usr/bin/perl
# 9005: purser on a three-node Galera cluster (tools/galera, Debian's galera-4) under a fault.
# Two purser stacks, on nodes 1 and 2, take writes from six writers at once: policy uploads
# that move a group's pointer, document bucket writes (both stacks write the same
# organization's history, so their transactions may conflict at certification), and new users.
# Every answer is recorded. Mid-load node 2 is killed with SIGKILL and later started again.
# Afterwards: every acknowledged write is on all three nodes, the document history is one
# linear sequence, no request was answered 500 (only 503 with Retry-After while a node was
# away), the tables are identical on the three nodes, and stack B served again by itself.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use IO::Handle;
use JSON::PP;
use POSIX ();
use Time::HiRes qw(sleep time);
use Test::More;
use PurserStack;
use PurserGalera qw(put_policy put_document);

my $galera = PurserStack::root() . '/tools/galera';
my $gdir = tempdir('purser-galera-XXXXXX', TMPDIR => 1, CLEANUP => !$ENV{PURSER_KEEP});
my (@stacks, @writers);
my $parent = $$;
END {
    if ($$ == $parent) {
        my $status = $?;
        kill 'KILL', @writers if @writers;
        waitpid $_, 0 for @writers;
        $_->stop(1) for @stacks; # before the database goes
        system($galera, 'stop', $gdir);
        $? = $status;
    }
}

system($galera, 'start', $gdir) == 0 or BAIL_OUT("the Galera cluster did not start (logs in $gdir)");
pass 'a three-node Galera cluster is up';

my $cluster = PurserGalera->new($gdir);

is $cluster->status($_, 'wsrep_cluster_size'), 3, "node $_ sees three members" for 1 .. 3;

my $sa = PurserStack->new(workers => 2, db_socket => "$gdir/node1/mariadb.sock",
                         db_password_file => "$gdir/secrets/db-password");
push @stacks, $sa;
my $sb = PurserStack->new(workers => 2, db_socket => "$gdir/node2/mariadb.sock",
                         db_password_file => "$gdir/secrets/db-password", secrets_from => $sa->dir);
push @stacks, $sb;
is $sb->get('/healthz/deep')->{status}, 200, 'stack B (node 2) serves, with stack A\'s keyring and admin';
my $org = $sa->env('PURSER_ORG');
my $base = "/organizations/$org";
my $pub = do { open my $fh, '<', PurserStack::root() . '/t/data/chef-auth/pub.pem' or die; local $/; <$fh> };

# One write of each kind; returns (status, retry-after or '', what was acknowledged).
my %write = (
    policy => sub { my ($s, $x, $i) = @_; put_policy($s, $base, $x, $i) },
    docs => sub { my ($s, $x, $i) = @_; put_document($s, "bucket-$x", "doc-$x", "$x-$i") },
    users => sub {
        my ($s, $x, $i) = @_;
        my ($r) = $s->api('POST', '/users', { username => "u-$x-$i", display_name => "U $x $i", public_key => $pub });
        return ($r, "u-$x-$i");
    },
);

my $stop_file = "$gdir/stop-writers";
sub start_writer {
    my ($s, $x, $kind) = @_;
    my $log = "$gdir/writer-$x-$kind.log";
    my $pid = fork // die "fork: $!";
    return $pid if $pid;
    $SIG{INT} = $SIG{TERM} = 'DEFAULT';
    open my $out, '>', $log or POSIX::_exit(2);
    $out->autoflush(1);
    for (my $i = 1; !-e $stop_file; $i++) {
        my ($r, $what) = eval { $write{$kind}->($s, $x, $i) };
        $r //= { status => 599, headers => {}, content => "the writer failed: $@" };
        my $ra = $r->{headers}{'retry-after'} // '';
        my $why = $r->{status} =~ /^2/ ? '' : substr($r->{content} // '', 0, 200) =~ s/\s+/ /gr;
        print $out join("\t", sprintf('%.3f', time), $i, $r->{status}, $ra, $what // '', $why), "\n";
        sleep 0.2 if $r->{status} !~ /^2/;
    }
    close $out;
    POSIX::_exit(0);
}
sub read_log {
    my ($x, $kind) = @_;
    open my $fh, '<', "$gdir/writer-$x-$kind.log" or return ();
    return map { chomp; my @f = split /\t/, $_, -1; { t => $f[0], i => $f[1], status => $f[2], retry_after => $f[3], what => $f[4], why => $f[5] } } <$fh>;
}
sub acks_since {
    my ($x, $since) = @_;
    my %n;
    for my $kind (keys %write) { $n{$kind} = grep { $_->{status} =~ /^2/ && $_->{t} >= $since } read_log($x, $kind) }
    return \%n;
}

for my $pair ([ $sa, 'a' ], [ $sb, 'b' ]) {
    push @writers, start_writer(@$pair, $_) for sort keys %write;
}
my $t0 = time;
ok PurserStack::wait_for(60, sub { my $n = acks_since('b', $t0); !grep { $n->{$_} < 5 } keys %$n }),
    'the writers are acknowledged through both stacks';

# The fault: node 2, under stack B, dies without a word.
my $killed_at = time;
system($galera, 'kill', $gdir, 2) == 0 or BAIL_OUT('could not kill node 2');
sleep 5; # the fault held for a time, which the writers meet (time itself: not a wait for a state)
is $cluster->status(1, 'wsrep_cluster_size'), 2, 'nodes 1 and 3 carry on as a cluster of two';
my $restart_at = time;
system($galera, 'start-node', $gdir, 2) == 0 or BAIL_OUT('node 2 did not rejoin');
my $rejoined = time;
diag sprintf 'node 2 was away %.1f s; it rejoined (state transfer and sync) in %.1f s',
    $rejoined - $killed_at, $rejoined - $restart_at;
ok PurserStack::wait_for(90, sub { my $n = acks_since('b', $rejoined); !grep { $n->{$_} < 5 } keys %$n }),
    'stack B serves writes again by itself once node 2 is back';
ok PurserStack::wait_for(60, sub { my $n = acks_since('a', $rejoined); !grep { $n->{$_} < 5 } keys %$n }),
    'and so does stack A';
open my $touch, '>', $stop_file or die;
close $touch;
waitpid $_, 0 for @writers;
@writers = ();

# Every answer: 2xx, or 503 with Retry-After. Never 500, never a dropped connection.
my (%acked, %tried, @bad);
my ($total, $acks, $unavailable) = (0, 0, 0);
for my $x ('a', 'b') {
    for my $kind (sort keys %write) {
        for my $e (read_log($x, $kind)) {
            push @{ $tried{$x}{$kind} }, $e;
            $total++;
            if ($e->{status} =~ /^2/) { push @{ $acked{$x}{$kind} }, $e->{what}; $acks++ }
            elsif ($e->{status} == 503 && $e->{retry_after} =~ /^\d+$/) { $unavailable++ }
            else { push @bad, "$x $kind #$e->{i}: $e->{status} $e->{why}" }
        }
    }
}
diag "$total requests, $acks acknowledged, $unavailable answered 503 with Retry-After";
is_deeply \@bad, [], 'no request was answered anything but 2xx or 503 with Retry-After'
    or diag join "\n", grep { /"level":"error"/ } map { $_->log_lines('purser-fcgi.log') } $sa, $sb;
ok $unavailable, 'requests through stack B while node 2 was away were answered 503 with Retry-After';
ok !grep({ $_ eq '' } map { @{ $acked{$_}{docs} // [] } } 'a', 'b'), 'every acknowledged document write named its revision';

# Wait until the three nodes have applied everything, then read each one directly.
ok $cluster->in_step(60), 'the three nodes have committed the same last write-set';
my $org_id = $cluster->org_id($org);

my %checksums;
for my $node (1 .. 3) {
    my %users = map { ($_->[0] => 1) } $cluster->sql($node, "SELECT name FROM principals WHERE kind = 'user'");
    my %revisions = %{ $cluster->policy_revisions($node) };
    my %pointer = map { ($_->[0] => $_->[1]) } $cluster->sql($node,
        'SELECT g.name, r.revision_id FROM policy_group_pointers x JOIN policy_groups g ON g.id = x.group_id '
        . 'JOIN policy_revisions r ON r.id = x.revision_pk');
    my @history = $cluster->documents($node, $org_id);
    my @ids = $cluster->document_ids($node, $org_id);
    my ($next) = map { $_->[0] } $cluster->sql($node, "SELECT next_revision FROM doc_heads WHERE org_id = $org_id");

    my @missing;
    for my $x ('a', 'b') {
        push @missing, grep { !$users{$_} } @{ $acked{$x}{users} // [] };
        push @missing, map { "policy p-$x/$_" } grep { !$revisions{"p-$x/$_"} } @{ $acked{$x}{policy} // [] };
    }
    # value of each bucket's document at each revision
    my %at;
    for my $row (@history) {
        my $v = eval { decode_json($row->[2])->{value} } // '?';
        $at{ $row->[0] }{ $row->[1] } = $v;
    }
    for my $x ('a', 'b') {
        for my $e (grep { $_->{status} =~ /^2/ } @{ $tried{$x}{docs} }) {
            my $got = $at{ $e->{what} }{"bucket-$x"} // 'nothing';
            push @missing, "revision $e->{what} bucket-$x: $got, not $x-$e->{i}" if $got ne "$x-$e->{i}";
        }
    }
    is_deeply \@missing, [], "node $node: every acknowledged user, policy revision and document write is there";

    # The pointer of each group is its writer's last acknowledged upload, or a later one whose
    # answer was lost (a 503 after the commit reached the cluster).
    for my $x ('a', 'b') {
        my @entries = @{ $tried{$x}{policy} };
        my ($last_ack) = grep { $entries[$_]{status} =~ /^2/ } reverse 0 .. $#entries;
        my %allowed = map { ("$x-$entries[$_]{i}" => 1) } $last_ack .. $#entries;
        ok $allowed{ $pointer{"g-$x"} // '' }, "node $node: group g-$x points at the last acknowledged upload"
            or diag "points at " . ($pointer{"g-$x"} // 'nothing') . ", last acknowledged $x-$entries[$last_ack]{i}";
    }

    # One linear history: revisions 1..N without a gap, the head after N, and each bucket's
    # document only moving forward from one revision to the next.
    is_deeply \@ids, [ 1 .. scalar @ids ], "node $node: document revisions are 1.." . scalar(@ids) . ', no gap, no repeat';
    is $next, @ids + 1, "node $node: the head's next revision follows the last";
    my @backwards;
    for my $x ('a', 'b') {
        my $prev = 0;
        for my $id (@ids) {
            my $v = $at{$id}{"bucket-$x"} // next;
            my ($step) = $v =~ /^$x-(\d+)$/ or do { push @backwards, "$id: $v"; next };
            push @backwards, "revision $id has $v after $x-$prev" if $step < $prev;
            $prev = $step;
        }
    }
    is_deeply \@backwards, [], "node $node: each bucket's document only moves forward along the history";
    $checksums{$node} = join ',', map { "$_->[0]=$_->[1]" }
        $cluster->sql($node, 'CHECKSUM TABLE ' . join(', ', map { $_->[0] } $cluster->sql($node, 'SHOW TABLES')));
}
is $checksums{2}, $checksums{1}, 'node 2 (the one killed) holds exactly the tables of node 1';
is $checksums{3}, $checksums{1}, 'node 3 holds exactly the tables of node 1';

# Certification conflicts between the stacks are retried, not answered (no answer above was a
# 500 or a 409). Whether any happened depends on timing: the count is reported, not asserted.
my $retries = 0;
for my $s ($sa, $sb) {
    my $m = $s->get('/metrics')->{content} // '';
    $retries += $1 while $m =~ /^purser_db_retries_total\{cause="deadlock"\} (\d+)/mg;
}
diag "certification conflicts retried: $retries (reported, not asserted: the duty is to retry them)";

is $sb->get('/healthz/deep')->{status}, 200, 'stack B is healthy again';
PurserStack::finish();

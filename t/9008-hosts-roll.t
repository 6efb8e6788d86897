#!/usr/bin/perl
# 9008: a rolling upgrade, then a rolling restart, under load with no failed request (issue 53
# item 3). Three hosts of tools/hosts start on the previous release, built from git as t/8005
# builds its own (PURSER_ROLL_FROM, default 8da98ad: schema 25, the first that serves on a newer
# schema that only expanded; or a folder holding its purser-fcgi and purser). Clients through
# the front read (an organization, a group's pointer), move a group's pointer (PUT), create
# clients (POST: not idempotent, so the front may not replay one) and follow the event feed with
# wait=; on each host directly a client reads and creates clients (and leaves the host alone
# during its own turn, when it is stopped). `tools/hosts upgrade-host` takes each host in turn
# to this build (drained, stopped, started on this build, back in the front): the first applies
# this build's migrations (0026 expands the schema) while the other two, old, serve on. After
# each turn, both versions answer at once (GET /healthz/deep's build_schema: this build's on the
# new hosts, none on the old) and the old ones serve on the new schema (deep health 200). Then
# `tools/hosts roll` restarts each host in turn on this build. Then: every request was answered
# 2xx, the follower read every event once and in order, every acknowledged creation and pointer
# is on every Galera node, and each host serves this build; the figures (requests, and the time
# each host took) are printed. Without git or the old commit, the hosts start on this build and
# only the restart rolls. About 80 s here, and 25 s to build the old release. Root only.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use IO::Handle;
use POSIX ();
use Time::HiRes qw(sleep time);
use Test::More;
use PurserStack;
use PurserGalera qw(lock_for);
use PurserHosts;

PurserHosts::skip_unless_namespaces();
my $tool = PurserHosts::tool();
my (@clients, %client_pid);
my $root = PurserStack::root();
my $build = PurserStack::build();
$build = "$root/$build" unless $build =~ m{^/};

# ---- the previous release, from git (as t/8005), or a folder holding it ----
my $from = $ENV{PURSER_ROLL_FROM} // '8da98ad';
my $old;
if (-x "$from/purser-fcgi" && -x "$from/purser") {
    $old = $from;
} elsif (-e "$root/.git" && (my $commit = `git -C '$root' rev-parse --verify -q '$from^{commit}' 2>/dev/null`)) {
    chomp $commit;
    my $t_build = time;
    my $src = tempdir('purser-roll-from-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    is system("git -C '$root' archive '$commit' | tar -x -C '$src'"), 0, "git archive $from";
    # (without optimisation, as t/8005: a third of the compile time; its speed is not measured)
    my $out = `CFLAGS='-O0 -g' make -s -C '$src' -j2 BUILD=build build/purser-fcgi build/purser 2>&1`;
    is $?, 0, sprintf('  built (purser-fcgi, purser) in %.0f s', time - $t_build) or BAIL_OUT($out);
    $old = "$src/build";
} else {
    diag "no git history or no commit $from: the hosts start on this build, and only the restart rolls";
}
my ($latest) = sort { $b <=> $a } map { m{/0*(\d+)_[^/]+\.sql$} ? $1 : () } glob("$root/sql/*.sql");

my $t_start = time;
my ($dir, %env);
{
    local $ENV{PURSER_BUILD} = $old // $build;
    ($dir, %env) = PurserHosts::start('roll', \@clients);
}
my $base = "/organizations/$env{PURSER_ORG}";

sub client_for { PurserHosts::client($_[0], $_[1] // 100) }
my $stop_file = "$dir/stop-clients";
sub client {
    my ($name, $body) = @_;
    my $pid = fork // die "fork: $!";
    if ($pid) { push @clients, $pid; $client_pid{$name} = $pid; return }
    $SIG{INT} = $SIG{TERM} = 'DEFAULT';
    open my $out, '>', "$dir/client-$name.log" or POSIX::_exit(2);
    $out->autoflush(1);
    my $c = client_for($env{PURSER_URL});
    for (my $i = 1; !-e $stop_file; $i++) { $body->($c, $i, $out) }
    close $out;
    POSIX::_exit(0);
}
sub logged {
    my ($out, $what, $code) = @_;
    my $t0 = time;
    my ($r, $b) = eval { $code->() };
    $r //= { status => 599, content => "the client failed: $@" };
    print $out join("\t", sprintf('%.4f', $t0), sprintf('%.4f', time), $what, $r->{status},
                    $r->{status} =~ /^2/ ? '' : substr($r->{content} // '', 0, 120) =~ s/\s+/ /gr), "\n";
    return ($r, $b);
}
# the pointer the readers read, before they start
client_for($env{PURSER_URL})->api('PUT', "$base/policy_groups/g-w/policies/p-w", lock_for('p-w', 'w-0'));
for my $n (1, 2) {
    client("reader-$n", sub {
        my ($c, $i, $out) = @_;
        logged($out, 'read organization', sub { $c->api('GET', $base) });
        logged($out, 'read pointer', sub { $c->api('GET', "$base/policy_groups/g-w/policies/p-w") });
        sleep 0.02;
    });
}
client('writer', sub {
    my ($c, $i, $out) = @_;
    logged($out, "pointer w-$i", sub { $c->api('PUT', "$base/policy_groups/g-w/policies/p-w", lock_for('p-w', "w-$i")) });
    sleep 0.05;
});
client('creator', sub {
    my ($c, $i, $out) = @_;
    logged($out, "create roll-$i", sub { $c->api('POST', "$base/clients", { name => "roll-$i" }) });
    sleep 0.1;
});
{
    my $since = 0;
    client('follower', sub {
        my ($c, $i, $out) = @_;
        my ($r, $b) = logged($out, "events since $since", sub { $c->api('GET', "$base/events?since=$since&wait=5&page_size=1000") });
        return unless $r->{status} == 200 && ref $b eq 'HASH';
        print $out join("\t", 'page', $since, $b->{next}, join(',', map { $_->{seq} } @{ $b->{events} // [] })), "\n";
        $since = $b->{next} if $b->{next} > $since;
    });
}
# on each host directly, during the upgrade: a read and a creation, except in the host's own turn
# (stopped then; a client of one host is left to fail when it is, and the front is not)
for my $n (1 .. 3) {
    my $c = client_for($env{"PURSER_HOST${n}_URL"}, 30);
    my $pid = fork // die "fork: $!";
    if ($pid) { push @clients, $pid; $client_pid{"direct-$n"} = $pid; next }
    $SIG{INT} = $SIG{TERM} = 'DEFAULT';
    open my $out, '>', "$dir/client-direct-$n.log" or POSIX::_exit(2);
    $out->autoflush(1);
    for (my $i = 1; !-e $stop_file && !-e "$dir/stop-direct"; $i++) {
        if (-e "$dir/turn-$n") { open my $idle, '>', "$dir/turn-$n.idle"; sleep 0.05; $i--; next }
        logged($out, 'read organization', sub { $c->api('GET', $base) });
        logged($out, "create direct-$n-$i", sub { $c->api('POST', "$base/clients", { name => "direct-$n-$i" }) });
        sleep 0.1;
    }
    close $out;
    POSIX::_exit(0);
}
my @names = ('reader-1', 'reader-2', 'writer', 'creator', 'follower', map { "direct-$_" } 1 .. 3);
sub lines_of { my ($name) = @_; open my $fh, '<', "$dir/client-$name.log" or return (); map { chomp; [ split /\t/, $_, -1 ] } <$fh> }
ok PurserStack::wait_for(60, sub { (grep { $_->[3] =~ /^2/ } lines_of('writer')) >= 10 }), 'the writer is acknowledged through the front';

# ---- the rolling upgrade: each host in turn to this build, both versions serving ----
my $deep = sub {
    my ($n) = @_;
    my $r = client_for($env{"PURSER_HOST${n}_URL"}, 10)->get('/healthz/deep');
    my $b = $r->{status} == 200 ? eval { PurserStack::json($r) } : undef;
    return { status => $r->{status}, schema => $b ? $b->{schema_version} : 0,
             build => $b ? ($b->{build_schema} // 'old') : '?' };
};
my (%turn_start, %turn_end);
if ($old) {
    my @d = map { $deep->($_) } 1 .. 3;
    is_deeply [ map { "$_->{status} $_->{build}" } @d ], [ ('200 old') x 3 ],
        "the three hosts serve the previous release (schema $d[0]{schema})";
    cmp_ok $d[0]{schema}, '<', $latest, "  whose schema is older than this build's ($latest)";
    for my $n (1 .. 3) {
        open my $turn, '>', "$dir/turn-$n" or die;
        close $turn;
        PurserStack::wait_for(30, sub { -e "$dir/turn-$n.idle" }); # (its direct client's request done)
        $turn_start{$n} = time;
        my $out = `'$tool' upgrade-host '$dir' $n '$build' 2>&1`;
        is $?, 0, "tools/hosts upgrade-host $n: drained, started on this build, back in the front" or diag $out;
        $turn_end{$n} = time;
        unlink "$dir/turn-$n", "$dir/turn-$n.idle";
        if ($n == 1) {
            my ($applied) = PurserGalera->new("$dir/galera")->sql(1, "SELECT UNIX_TIMESTAMP(applied_at) FROM schema_migrations WHERE version = $latest");
            ok $applied && $applied->[0] > $turn_start{1} && $applied->[0] < $turn_end{1},
                "  host 1, the first on this build, applied migration $latest in its turn";
        }
        next if $n == 3;
        # both versions at once: each host's API and deep health, asked one after the other
        my @api = map { (client_for($env{"PURSER_HOST${_}_URL"}, 10)->api('GET', $base))[0]{status} } 1 .. 3;
        my @h = map { $deep->($_) } 1 .. 3;
        is_deeply [ map { "$_->{status} $_->{schema} $_->{build}" } @h ],
            [ (map { "200 $latest $latest" } 1 .. $n), (map { "200 $latest old" } $n + 1 .. 3) ],
            "after host ${n}'s turn: host 1..$n on this build, the others on the previous one, all on schema $latest (deep health 200)";
        is_deeply \@api, [ 200, 200, 200 ], '  and each answers the API';
    }
}

# ---- the rolling restart, on this build (through the front only) ----
{ open my $touch, '>', "$dir/stop-direct" or die; close $touch; }
waitpid $client_pid{"direct-$_"}, 0 for 1 .. 3;
my $t_roll = time;
my $out = `'$tool' roll '$dir' '$build' 2>&1`;
is $?, 0, 'tools/hosts roll drained, restarted and put back each host' or diag $out;
my $roll_took = time - $t_roll;
my @took = $out =~ /host (\d) drained, restarted and back in the front in ([\d.]+) s/g;
sleep 3; # (load on the rolled hosts)
open my $touch, '>', $stop_file or die;
close $touch;
waitpid $_, 0 for @clients;
@clients = ();

# ---- what the clients saw ----
my (%requests, @failed, @created, %old_on_new);
for my $name (@names) {
    for my $l (lines_of($name)) {
        next if $l->[0] eq 'page';
        $requests{$name}++;
        push @failed, "$name $l->[2] at $l->[0]: $l->[3] $l->[4]" unless $l->[3] =~ /^2/;
        push @created, $1 if $l->[3] =~ /^2/ && $l->[2] =~ /^create ((?:roll|direct)-[\d-]+)$/;
        # answered by a host still on the previous release after the first new one had migrated
        my ($n) = $name =~ /^direct-(\d)$/;
        $old_on_new{$n}++ if $n && $n > 1 && $turn_end{1} && $l->[0] > $turn_end{1} && $l->[1] < $turn_start{$n}
            && $l->[3] =~ /^2/;
    }
}
my $total = 0;
$total += $_ for values %requests;
is_deeply \@failed, [], "every request through the front and to each host during the rolls was answered 2xx ($total requests: "
    . join(', ', map { "$_ $requests{$_}" } sort keys %requests) . ')'
    or diag join "\n", @failed[0 .. ($#failed < 9 ? $#failed : 9)];
my ($expect, @feed) = (0);
for my $l (grep { $_->[0] eq 'page' } lines_of('follower')) {
    my (undef, $since, $next, $list) = @$l;
    my @s = grep { length } split /,/, $list;
    push @feed, "asked since $since, expected $expect" if $since != $expect;
    my @want = ($since + 1 .. $since + @s);
    push @feed, "since $since: seqs @s" if "@s" ne "@want" || (@s && $next != $s[-1]);
    $expect = $next if $next > $expect;
}
is_deeply \@feed, [], "the follower read every event once, in order, through the front (up to seq $expect)";
if ($old) {
    ok $old_on_new{2} && $old_on_new{3}, 'hosts 2 and 3, on the previous release, answered on the new schema until their turn ('
        . join(', ', map { "host $_: " . ($old_on_new{$_} // 0) } 2, 3) . ' requests)';
}
my $front = client_for($env{PURSER_URL});
my ($r, $list) = $front->api('GET', "$base/clients");
my @missing = grep { !exists $list->{$_} } @created;
is_deeply \@missing, [], 'every acknowledged creation is there (' . scalar(@created) . ')';
my $galera = PurserGalera->new("$dir/galera");
ok $galera->in_step(30), 'the three Galera nodes are in step';
my @pointers = map { $_->[3] =~ /^2/ && $_->[2] =~ /^pointer (w-\d+)$/ ? "p-w/$1" : () } lines_of('writer');
for my $n (1 .. 3) {
    my %names = map { ($_->[0] => 1) } $galera->sql($n, "SELECT name FROM principals WHERE name LIKE 'roll-%' OR name LIKE 'direct-%'");
    my $revisions = $galera->policy_revisions($n);
    is_deeply [ grep { !$names{$_} } @created ], [], "Galera node $n holds every acknowledged creation";
    is_deeply [ grep { !$revisions->{$_} } @pointers ], [], '  and every acknowledged pointer (' . scalar(@pointers) . ')';
}
my @after = map { $deep->($_) } 1 .. 3;
is_deeply [ map { "$_->{status} $_->{schema} $_->{build}" } @after ], [ ("200 $latest $latest") x 3 ],
    "each host serves this build on schema $latest after the rolls";
my $lines = join ', ', map { "host $took[2 * $_] $took[2 * $_ + 1] s" } 0 .. $#took / 2;
diag sprintf 'the rolling upgrade took %.1f s (%s); both versions served for %.1f s', $turn_end{3} - $turn_start{1},
    join(', ', map { sprintf 'host %d %.1f s', $_, $turn_end{$_} - $turn_start{$_} } 1 .. 3), $turn_start{3} - $turn_end{1}
    if $old;
diag sprintf 'the rolling restart took %.1f s (%s); %d requests meanwhile and after, %d failed', $roll_took, $lines, $total, scalar @failed;
diag sprintf 'total %.0f s', time - $t_start;
done_testing();

#!/usr/bin/perl
# 9008: a rolling restart under load with no failed request (issue 53 item 3). Three hosts of
# tools/hosts; clients through the front read (an organization, a group's pointer), move a
# group's pointer (PUT), create clients (POST: not idempotent, so the front may not replay one)
# and follow the event feed with wait=, while `tools/hosts roll` drains each host in turn (out
# of the front, what it took finishes), stops it, starts it again and puts it back. Then: every
# request was answered 2xx, the follower read every event once and in order, every acknowledged
# creation is there, and each host served again after its turn; the figures (requests, and the
# time each host took) are printed. About 70 s here. Root only.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use HTTP::Tiny;
use IO::Handle;
use POSIX ();
use Time::HiRes qw(sleep time);
use Test::More;
use PurserStack;
use PurserGalera qw(lock_for);

plan skip_all => 'network namespaces need root' if $> != 0;
plan skip_all => 'network namespaces cannot be made here'
    if system("ip netns add purser-probe-$$ > /dev/null 2>&1 && ip netns del purser-probe-$$") != 0;

my $tool = PurserStack::root() . '/tools/hosts';
my $dir = tempdir('purser-roll-XXXXXX', TMPDIR => 1, CLEANUP => !$ENV{PURSER_KEEP});
my (@clients, %client_pid);
my $parent = $$;
END {
    if ($$ == $parent) {
        my $status = $?;
        kill 'KILL', @clients if @clients;
        waitpid $_, 0 for @clients;
        system($tool, 'stop', $dir);
        $? = $status;
    }
}
$SIG{INT} = $SIG{TERM} = sub { exit 1 };
$SIG{PIPE} = 'IGNORE';

sub hosts { system($tool, $_[0], $dir, @_[1 .. $#_]) == 0 or BAIL_OUT("tools/hosts @_ failed (logs in $dir)") }
my $t_start = time;
hosts('start');
my %env;
{
    open my $fh, '<', "$dir/hosts.env" or BAIL_OUT('no hosts.env');
    while (<$fh>) { $env{$1} = $2 if /^export (\w+)=(.*)$/ }
}
diag sprintf 'three hosts, three Galera nodes and the front started in %.1f s', time - $t_start;
my $base = "/organizations/$env{PURSER_ORG}";

sub client_for {
    my ($url, $timeout) = @_;
    return bless { dir => $dir, pid => $parent, opt => {}, stopped => 1, env => { %env, PURSER_URL => $url },
        http => HTTP::Tiny->new(verify_SSL => 1, SSL_options => { SSL_ca_file => $env{PURSER_CA} },
                                max_redirect => 0, timeout => $timeout // 100, keep_alive => 1) }, 'PurserStack';
}
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
    logged($out, "create roll-$$-$i", sub { $c->api('POST', "$base/clients", { name => "roll-$i" }) });
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
sub lines_of { my ($name) = @_; open my $fh, '<', "$dir/client-$name.log" or return (); map { chomp; [ split /\t/, $_, -1 ] } <$fh> }
ok PurserStack::wait_for(60, sub { (grep { $_->[3] =~ /^2/ } lines_of('writer')) >= 10 }), 'the writer is acknowledged through the front';

# ---- the roll ----
my $t_roll = time;
my $out = `'$tool' roll '$dir' 2>&1`;
is $?, 0, 'tools/hosts roll drained, restarted and put back each host' or diag $out;
my $roll_took = time - $t_roll;
my @took = $out =~ /host (\d) drained, restarted and back in the front in ([\d.]+) s/g;
sleep 3; # (load on the rolled hosts)
open my $touch, '>', $stop_file or die;
close $touch;
waitpid $_, 0 for @clients;
@clients = ();

# ---- what the clients saw ----
my (%requests, @failed, @created);
for my $name ('reader-1', 'reader-2', 'writer', 'creator', 'follower') {
    for my $l (lines_of($name)) {
        next if $l->[0] eq 'page';
        $requests{$name}++;
        push @failed, "$name $l->[2] at $l->[0]: $l->[3] $l->[4]" unless $l->[3] =~ /^2/;
        push @created, $1 if $name eq 'creator' && $l->[3] =~ /^2/ && $l->[2] =~ /^create roll-\d+-(\d+)$/;
    }
}
my $total = 0;
$total += $_ for values %requests;
is_deeply \@failed, [], "every request through the front during the roll was answered 2xx ($total requests: "
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
my $front = client_for($env{PURSER_URL});
my ($r, $list) = $front->api('GET', "$base/clients");
my @missing = grep { !exists $list->{"roll-$_"} } @created;
is_deeply \@missing, [], 'every acknowledged creation is there (' . scalar(@created) . ')';
for my $n (1 .. 3) {
    my $h = client_for($env{"PURSER_HOST${n}_URL"}, 10);
    is $h->get('/healthz/deep')->{status}, 200, "host $n serves after the roll";
}
my $lines = join ', ', map { "host $took[2 * $_] $took[2 * $_ + 1] s" } 0 .. $#took / 2;
diag sprintf 'the roll took %.1f s (%s); %d requests through the front meanwhile and after, %d failed', $roll_took, $lines, $total, scalar @failed;
diag sprintf 'total %.0f s', time - $t_start;
done_testing();

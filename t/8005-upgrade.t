# 8005: an upgrade with nothing lost (docs/operator/upgrades.md). The previous release, built from git
# (PURSER_UPGRADE_FROM, default b5fc351: schema 18, before 0019 converts the document history
# to intervals), runs a stack with its own tools/stack; it is filled with every kind of data
# (t/lib/PurserFill.pm) and a site with a history of revisions. While a client keeps reading
# and writing, the new build is installed over it as docs/operator/upgrades.md says: the old
# purser-fcgi stopped (nginx answers 503 with Retry-After), this build's `purser migrate`, this
# build's purser-fcgi started on the same configuration, socket and database. Then: every
# request the client made succeeded or was a 503 with Retry-After; every write it saw
# acknowledged is there; each organization's export (with secrets) is byte for byte the one
# taken before; the schema is this build's. Prints how long the upgrade took and what the
# client was answered meanwhile.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use POSIX ();
use Time::HiRes qw(time sleep);
use PurserStack;
use PurserFill;

my $root = PurserStack::root();
my $build = PurserStack::build();
my $from = $ENV{PURSER_UPGRADE_FROM} // 'b5fc351';
plan skip_all => 'not a git checkout' unless -e "$root/.git";
my $commit = `git -C '$root' rev-parse --verify -q '$from^{commit}'`;
chomp $commit;
ok $commit, "the previous release $from is in the history (a clone, not a shallow one)" or BAIL_OUT("no commit $from");

my $tmp = tempdir('purser-upgrade-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my ($old, $dir) = ("$tmp/old", "$tmp/stack");
my $writer;
sub run_out { my $out = `@_ 2>&1`; return ($? >> 8, $out) }
sub slurp { local (@ARGV, $/) = @_; return -e $_[0] ? scalar <> : '' }
sub cleanup {
    if ($writer) { kill 'KILL', $writer; waitpid $writer, 0; $writer = 0 }
    system("'$root/tools/stack' stop '$dir' > /dev/null 2>&1") if -d "$dir/run";
}
END { my $status = $?; cleanup(); $? = $status }
$SIG{INT} = $SIG{TERM} = sub { cleanup(); exit 1 };

# ---- the previous release, from git, with its own stack ----
mkdir $old or die;
is system("git -C '$root' archive '$commit' | tar -x -C '$old'"), 0, "git archive $from";
# (without optimisation: a third of the compile time; this file checks what the old release
# stores and serves, not its speed)
my ($rc, $out) = run_out("CFLAGS='-O0 -g' make -s -C '$old' -j2 BUILD=build build/purser-fcgi build/purser");
is $rc, 0, '  built (purser-fcgi, purser)' or diag $out;
my $old_version = `'$old/build/purser' --version`;
($rc, $out) = run_out("PURSER_BUILD='$old/build' PURSER_WORKERS=2 PURSER_MAX_BODY=67108864 '$old/tools/stack' start '$dir'");
is $rc, 0, '  its stack started by its own tools/stack' or BAIL_OUT($out);
my $s = PurserStack->attach($dir);
my $conf = $s->env('PURSER_CONFIG');
my $schema_before = $s->sql('SELECT MAX(version) FROM schema_migrations') =~ s/\s+$//r;

# every kind of data, and a site of 300 documents with a history of 8 revisions
my @orgs = ('up1', 'up2', 'site');
PurserFill::fill($s, $_) for @orgs[0, 1];
$s->must('org', 'POST', '/organizations', { name => 'site' });
for my $v (1 .. 8) {
    my $bundle = `'$root/bench/site-bundle' 300 $v`;
    $s->yaml_call('PUT', '/organizations/site/api/v1.0/buckets/site/documents', $bundle);
}
$s->must('org', 'POST', '/organizations', { name => 'busy' });
my %before = map { $_ => PurserFill::export("$old/build/purser", $conf, $_) } @orgs;
ok length $before{site} > 100_000, "the previous release's exports (site: " . length($before{site}) . ' bytes)';
like $before{up1}, qr/s3cr3t-passphrase-up1/, '  with their encrypted data';
my $site_rev = $s->sql("SELECT MAX(id) FROM doc_revisions WHERE org_id = (SELECT id FROM organizations WHERE name = 'site')") =~ s/\s+$//r;

# ---- a client reading and writing, each answer logged: time status retry-after what ----
my $log = "$tmp/client.log";
$writer = fork // die;
if (!$writer) {
    open my $fh, '>', $log or POSIX::_exit(1);
    $fh->autoflush(1);
    my $n = 0;
    my $record = sub { my ($what, $r) = @_; printf $fh "%.3f %d %s %s\n", time, $r->{status}, $r->{headers}{'retry-after'} // '-', $what };
    while (!-e "$tmp/stop") {
        my ($r) = $s->call('POST', '/organizations/busy/nodes', { name => 'busy-' . ($n + 1), normal => { n => $n + 1 } });
        $n++ if $r->{status} == 201;
        $record->('write busy-' . ($r->{status} == 201 ? $n : 'x'), $r);
        ($r) = $s->call('GET', '/organizations/up1/nodes/web1');
        $record->('read node', $r);
        $r = $s->request('GET', "/organizations/site/api/v1.0/revisions/$site_rev/documents?metadata.name=component-7",
            { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') } });
        $record->('read documents', $r);
        sleep 0.02;
    }
    POSIX::_exit(0);
}
# the client under way: some answers logged before the upgrade begins
PurserStack::wait_for(30, sub { (() = slurp($log) =~ /\n/g) >= 10 });

# ---- the upgrade (docs/operator/upgrades.md), with the client going on ----
my $t0 = time;
my $old_pid = slurp("$dir/run/purser-fcgi.pid") =~ s/\s+$//r;
kill 'TERM', $old_pid;
for (1 .. 400) { last unless -d "/proc/$old_pid"; sleep 0.1 }
ok !-d "/proc/$old_pid", 'the previous purser-fcgi stopped (gracefully: each worker ends its request)';
my $t_stopped = time;
# the new build's default policy (the package's conffile prompt; new routes may need new actions)
{
    my $yaml = slurp($conf);
    $yaml =~ s{^(\s*policy_file:) .*$}{$1 $root/policies/default.yaml}m;
    open my $fh, '>', $conf or die;
    print $fh $yaml;
    close $fh;
}
my $fcgi = fork // die;
if (!$fcgi) {
    open STDIN, '<', '/dev/null';
    open STDOUT, '>>', "$dir/log/purser-fcgi.log";
    open STDERR, '>&', \*STDOUT;
    POSIX::setsid();
    exec "$build/purser-fcgi", '-c', $conf;
    POSIX::_exit(127);
}
open my $pidfh, '>', "$dir/run/purser-fcgi.pid" or die;
print $pidfh "$fcgi\n";
close $pidfh;
# started before the migrations (an operator's order, or a restart): it serves nothing on a
# schema that is not its own
my ($gated, $deep_early);
for (1 .. 100) {
    $deep_early = $s->get('/healthz/deep');
    ($gated) = $s->call('GET', '/organizations/up1/nodes/web1');
    last if $gated->{status} == 503 && $deep_early->{status} == 503 && $deep_early->{content} =~ /schema/;
    sleep 0.1;
}
is $gated->{status}, 503, "this build's purser-fcgi, on the previous schema: 503" or diag $gated->{content};
ok $gated->{headers}{'retry-after'}, '  with Retry-After';
like $gated->{content}, qr/schema is at version $schema_before and this purser-fcgi needs \d+: an upgrade is under way/, '  saying why';
($rc, $out) = run_out("'$build/purser' -c '$conf' migrate");
my $t_migrated = time;
is $rc, 0, "this build's purser migrate, while the client reads and writes and the new purser-fcgi waits" or diag $out;
note "migrate:\n$out";
my $deep;
for (1 .. 300) {
    $deep = $s->get('/healthz/deep');
    last if $deep->{status} == 200;
    sleep 0.1;
}
my $t_up = time;
is $deep->{status}, 200, "this build's purser-fcgi serves, its schema current" or diag $deep->{content};
# the client goes on: answers logged from more than a second after the upgrade (checked below)
PurserStack::wait_for(30, sub { (grep { /^(\S+)/ && $1 > $t_up + 1 } split /\n/, slurp($log)) >= 20 });
open my $stop, '>', "$tmp/stop" or die;
close $stop;
waitpid $writer, 0;
$writer = 0;

# ---- what the client was answered ----
my (@all, @bad, %during);
for (split /\n/, slurp($log)) {
    my ($t, $status, $retry, $what) = split ' ', $_, 4;
    push @all, [$t, $status, $retry, $what];
    push @bad, $_ unless $status =~ /^20[01]$/ || ($status == 503 && $retry ne '-');
    $during{$status}++ if $t >= $t0 && $t <= $t_up;
}
ok @all > 30, scalar(@all) . ' requests made over the upgrade';
is_deeply \@bad, [], '  each answered 200/201, or 503 with Retry-After' or diag join "\n", grep { defined } @bad[0 .. 9];
my @after = grep { $_->[0] > $t_up + 1 } @all; # (each worker reads the schema's version once a second)
ok @after && !grep({ $_->[1] !~ /^20[01]$/ } @after), '  and all of them from a second after it (' . scalar(@after) . ')' or diag join "\n", map { "@$_" } grep { $_->[1] !~ /^20[01]$/ } @after;
my $summary = join ', ', map { "$_: $during{$_}" } sort keys %during;
note sprintf 'upgrade %.2fs (stop %.2fs, start and migrate %.2fs, serving %.2fs after); during it: %s',
    $t_up - $t0, $t_stopped - $t0, $t_migrated - $t_stopped, $t_up - $t_migrated, $summary || 'no request';
diag sprintf 'upgrade from %s took %.2fs; the client was answered %s', $from, $t_up - $t0, $summary || 'nothing';

# ---- nothing lost ----
my @acked = map { $_->[3] =~ /^write (busy-\d+)$/ ? $1 : () } @all;
my %stored = map { $_ => 1 } split /\n/, $s->sql("SELECT name FROM nodes WHERE org_id = (SELECT id FROM organizations WHERE name = 'busy')");
is_deeply [grep { !$stored{$_} } @acked], [], 'every acknowledged write is stored (' . scalar(@acked) . ')';
for my $org (@orgs) {
    my $after = PurserFill::export("$build/purser", $conf, $org);
    ok $after eq $before{$org}, "$org: the export after the upgrade is byte for byte the one before (" . length($after) . ' bytes)';
}
my $schema_after = $s->sql('SELECT MAX(version) FROM schema_migrations') =~ s/\s+$//r;
ok $schema_after > $schema_before, "the schema went from $schema_before to $schema_after";
note "from $old_version";

cleanup();
done_testing;

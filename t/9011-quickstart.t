#!/usr/bin/perl
# 9011: the README's quickstart, run as written (the block between its quickstart markers) by
# bash with `set -e`, in a folder where var/ is a private stack and examples/ the project's;
# then what it claims, checked through the API: the promoted policy, the rendered site, the
# unchanged second apply, the cluster with its facts, the watched event.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use PurserStack;

my $root = PurserStack::root();
open my $fh, '<', "$root/README.md" or die "README.md: $!";
my $readme = do { local $/; <$fh> };
close $fh;
my ($block) = $readme =~ /<!-- quickstart -->\s*```sh\n(.*?)```\s*<!-- \/quickstart -->/s;
ok defined $block, 'the README has a quickstart block' or BAIL_OUT('no quickstart in README.md');
like $block, qr/^\. var\/stack\.env/m, '  which starts from the stack make run starts';

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $work = tempdir('purser-quickstart-XXXXXX', TMPDIR => 1, CLEANUP => 1);
symlink $s->dir, "$work/var" or die "symlink: $!";
symlink "$root/examples", "$work/examples" or die "symlink: $!";
open my $script, '>', "$work/quickstart.sh" or die $!;
print $script "set -e\n$block";
close $script;

# as a newcomer's shell: no purser settings but what the block sources; its own home
my %env = (PATH => $ENV{PATH}, HOME => "$work/home", LANG => 'C.UTF-8', PURSER_CTL_STRICT => 1);
mkdir "$work/home";
my $cmd = join ' ', map { "$_='$env{$_}'" } sort keys %env;
my $out = `cd '$work' && env -i $cmd bash quickstart.sh 2>&1`;
my $rc = $? >> 8;
is $rc, 0, 'the quickstart runs to its end, every command succeeding' or diag $out;
note $out;

like $out, qr/logged in to https:\/\/127\.0\.0\.1:\d+/, 'login from the stack\'s settings';
ok -f "$work/home/.config/purser/config.yaml", '  writing the context where the README says';
like $out, qr/bucket site: unchanged/, 'the second apply of the same site says unchanged';
like $out, qr/postgresql:\/\/inventory:[^@\s]+\@/, 'render shows the substituted secret';
like $out, qr/c-edge-1/, 'the cluster is listed';
like $out, qr/cluster\s+c-edge-1\s+put/, 'watch printed the cluster\'s event';

# what the quickstart claims, through the API
my $v2 = do {
    open my $l, '<', "$root/examples/policies/base-v2.lock.json" or die $!;
    JSON::PP::decode_json(do { local $/; <$l> });
};
my ($r, $d) = $s->call('GET', "/organizations/$org/policy_groups/prod");
is $d->{policies}{base}{revision_id}, $v2->{revision_id}, 'prod points at the second lock after the promote';
($r, $d) = $s->call('GET', "/organizations/$org/clusters/c-edge-1");
is $r->{status}, 200, 'the cluster is registered';
ok $d->{status}{dynamic_facts}, '  with its reported facts';
my $revisions = $s->sql("SELECT COUNT(*) FROM doc_revisions");
chomp $revisions;
is $revisions, 2, 'two document revisions: the repeated apply made none';

PurserStack::finish();

#!/usr/bin/perl
# 9014: every example of the manual runs. Each fenced block of docs/ names its language; each
# shell block is marked <!-- example --> (run here) or <!-- not run: REASON --> (why it cannot
# be: a real Argo CD, a package installed as root...). The examples run as written, page by
# page, by bash with `set -e` after `. var/stack.env`, in a folder where var/ is a private stack
# on which the README's quickstart has run (as t/9011 runs it): the reader's state when they
# open the manual. Each must succeed.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use PurserStack;

my $root = PurserStack::root();
sub slurp { local (@ARGV, $/) = @_; return scalar <> }

# ---- the blocks and their marks ----
my @pages = sort grep { !m{/reference/} } glob("$root/docs/*.md"), glob("$root/docs/*/*.md");
my (@examples, @unmarked, @bare, $not_run);
for my $page (@pages) {
    my @lines = split /\n/, slurp($page);
    (my $name = $page) =~ s{^\Q$root\E/}{};
    for (my $i = 0; $i < @lines; $i++) {
        next unless $lines[$i] =~ /^```(\S*)\s*$/;
        my ($lang, $start) = ($1, $i);
        my @body;
        push @body, $lines[$i] while ++$i < @lines && $lines[$i] !~ /^```\s*$/;
        if ($lang eq '') { push @bare, "$name:" . ($start + 1); next }
        next unless $lang =~ /^(?:sh|shell|bash|console)$/;
        my $mark = $start > 0 ? $lines[$start - 1] : '';
        if ($mark =~ /^<!-- example -->$/) {
            push @examples, { where => "$name:" . ($start + 1), code => join("\n", @body) . "\n" };
        } elsif ($mark =~ /^<!-- not run: (.{10,}) -->$/) {
            $not_run++;
        } else {
            push @unmarked, "$name:" . ($start + 1);
        }
    }
}
is_deeply \@bare, [], 'every fenced block of the manual names its language';
is_deeply \@unmarked, [], 'every shell block is marked as an example or says why it is not run';
cmp_ok scalar(@examples), '>=', 5, scalar(@examples) . " examples to run ($not_run shell blocks say why they are not)";

# ---- a stack after the quickstart ----
my $readme = slurp("$root/README.md");
my ($quickstart) = $readme =~ /<!-- quickstart -->\s*```sh\n(.*?)```\s*<!-- \/quickstart -->/s;
ok $quickstart, 'the README\'s quickstart, to start from' or BAIL_OUT('no quickstart');
my $s = PurserStack->new(workers => 2);
my $work = tempdir('purser-examples-XXXXXX', TMPDIR => 1, CLEANUP => 1);
symlink $s->dir, "$work/var" or die "symlink: $!";
symlink "$root/$_", "$work/$_" or die "symlink: $!" for qw(examples t);
mkdir "$work/home";
my %env = (PATH => $ENV{PATH}, HOME => "$work/home", LANG => 'C.UTF-8', PURSER_CTL_STRICT => 1);
my $envs = join ' ', map { "$_='$env{$_}'" } sort keys %env;

sub run_block {
    my ($code) = @_;
    open my $fh, '>', "$work/block.sh" or die $!;
    print $fh "set -e\n. var/stack.env\n$code";
    close $fh;
    my $out = `cd '$work' && env -i $envs bash block.sh 2>&1 < /dev/null`;
    return ($? >> 8, $out);
}
my ($rc, $out) = run_block($quickstart);
is $rc, 0, 'the quickstart' or diag $out;

for my $e (@examples) {
    ($rc, $out) = run_block($e->{code});
    is $rc, 0, "$e->{where} runs" or diag $out;
    note $out;
}

PurserStack::finish();

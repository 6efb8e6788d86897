#!/usr/bin/perl
# 7002: the admin pages with big lists (issue 14, item 7): the policies page of 5,000 policies
# and the documents page of the 4,000-document bench site (bench/site-bundle) show their first
# page of rows, and the rest on asking, without freezing. The browser's load times are printed
# (diag) for the closing note, not asserted: this machine's speed varies.
use strict;
use warnings;
use utf8;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use POSIX ();
use File::Path qw(make_path);
use PurserStack;

my $s = PurserStack->new(workers => 4, max_body => 67108864);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org";

# 5,000 policies, one revision each, from 4 writers
my @kids;
for my $w (0 .. 3) {
    my $pid = fork // die;
    if (!$pid) {
        my $bad = 0;
        for my $i (grep { $_ % 4 == $w } 1 .. 5000) {
            my ($r) = $s->call('POST', "$base/policies/p$i/revisions",
                { revision_id => sprintf('%040x', $i), name => "p$i", run_list => ['recipe[a::default]'],
                  cookbook_locks => { a => { version => '1.0.0', identifier => "i$i" } } });
            $bad++ unless $r->{status} == 201;
        }
        POSIX::_exit($bad ? 1 : 0);
    }
    push @kids, $pid;
}
my $failed = 0;
for (@kids) { waitpid $_, 0; $failed++ if $? }
is $failed, 0, '5,000 policies uploaded';

my $bundle = `'${\ PurserStack::root()}/bench/site-bundle' 4000 1`;
my $r = $s->request('PUT', "$base/api/v1.0/buckets/site/documents", { headers => {
    authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN'), 'content-type' => 'application/x-yaml' }, content => $bundle });
is $r->{status}, 200, 'the 4,000-document bench site written';
my ($rev) = $r->{content} =~ /revision: (\d+)/;

my $out = PurserStack::build() . '/test-output/7002-admin-scale';
make_path($out);
my $config = "$out/config.json";
open my $fh, '>', $config or die;
print $fh encode_json({ url => $s->url, org => $org, admin => $s->env('PURSER_ADMIN_TOKEN'), out => $out,
    measure => [ [ 'policies', "/o/$org/policies" ], [ 'documents', "/o/$org/documents/$rev" ] ] });
close $fh;
my %seen;
open my $driver, '-|', 'node', PurserStack::root() . '/t/browser/admin.mjs', $config or die;
while (my $line = <$driver>) { my $o = eval { decode_json($line) } or next; $seen{ $o->{name} } = $o->{value} }
close $driver;
unlink $config;
ok !exists $seen{'driver error'}, 'the browser measured both pages' or diag $seen{'driver error'};
my $p = $seen{'load policies'} // {};
is $p->{rows}, 100, 'the policies page shows its first 100 rows';
like $p->{caption} // '', qr/^1–100 of 5000 policies/, '  of 5,000';
my $d = $seen{'load documents'} // {};
is $d->{rows}, 50, 'the documents page shows its first 50 documents';
like $d->{caption} // '', qr/^1–50 of 4001 documents/, '  of 4,001';
diag sprintf 'first page on screen (ms, 3 loads each): policies of 5,000: %s; documents of 4,001: %s',
    join(' ', @{ $p->{times} // [] }), join(' ', @{ $d->{times} // [] });
is_deeply $seen{'measure problems'}, [], 'no console error';

$s->stop;
done_testing;

#!/usr/bin/perl
# The real Deckhand's own functional tests (../shared/deckhand-gabbits, read in place, never
# copied), run unchanged by Debian's gabbi against a stack in development mode: every file,
# 209 tests. One test per gabbit file (it passes when every test in the file passes), and one
# for the total.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(make_path);
use PurserStack;
use Test::More;

my $gabbits = PurserStack::root() . '/../shared/deckhand-gabbits';
-d $gabbits or BAIL_OUT("$gabbits is missing: the Deckhand suite lives in ../shared");

my @files = map { s{.*/}{}r } sort glob("$gabbits/*.yaml");
cmp_ok(scalar @files, '>=', 28, scalar(@files) . ' gabbit files') or diag "@files";

my $stack = PurserStack->new(development => 1);
my $url = $stack->url;
local $ENV{PYTHONPATH} = PurserStack::root() . '/t/lib';
# every answer is checked against GET /docs, as PurserStack checks the other tests' answers
# (t/lib/purser_openapi.py), the counts with theirs
{
    my $docs = $stack->request('GET', '/docs');
    open my $fh, '>', $stack->dir . '/openapi.json' or die;
    print $fh $docs->{content};
}
local $ENV{PURSER_OPENAPI_DOC} = $stack->dir . '/openapi.json';
make_path(PurserStack::build() . '/test-output/openapi');
local $ENV{PURSER_OPENAPI_COUNTS} = PurserStack::build() . '/test-output/openapi/5001-deckhand-gabbi.t.tsv';
my ($all_passed, $all_failed) = (0, 0);
for my $file (@files) {
    my $out = `cd '$gabbits' && /usr/bin/python3 /usr/bin/gabbi-run -k -r purser_gabbi:MultidocJsonpaths -r purser_openapi:OpenAPICheck '$url' -- '$file' 2>&1`;
    my $status = $?;
    my $passed = () = $out =~ /^\xe2\x9c\x93 /mg;
    my $failed = () = $out =~ /^\xe2\x9c\x97 /mg;
    $all_passed += $passed;
    $all_failed += $failed;
    ok($status == 0 && $failed == 0 && $passed > 0, "$file: $passed passed, $failed failed")
        or diag(join "\n", grep { /FAIL|Error|assert|\xe2\x9c\x97/ } split /\n/, $out);
}
is("$all_passed passed, $all_failed failed", '209 passed, 0 failed', "Deckhand's suite: every test");
$stack->finish;

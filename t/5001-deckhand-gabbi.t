#!/usr/bin/perl
# The real Deckhand's own functional tests (../shared/deckhand-gabbits, read in place, never
# copied), run unchanged by Debian's gabbi against a stack in development mode. One test per
# gabbit file: it passes when every test in the file passes.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use PurserStack;
use Test::More;

my $gabbits = PurserStack::root() . '/../shared/deckhand-gabbits';
-d $gabbits or BAIL_OUT("$gabbits is missing: the Deckhand suite lives in ../shared");

# The files of the document store (issue: document store); rendering's join them later.
my @files = map { s{.*/}{}r } grep { !/deepdiff/ } (
    glob("$gabbits/document-crud-*.yaml"), glob("$gabbits/revision-crud-*.yaml"),
    "$gabbits/revision-filters.yaml", glob("$gabbits/revision-documents-*.yaml"),
    glob("$gabbits/revision-tag-*.yaml"), glob("$gabbits/revision-diff-*.yaml"),
    glob("$gabbits/rollback-*.yaml"));
cmp_ok(scalar @files, '>=', 14, 'the document store gabbits are all found') or diag "@files";

my $stack = PurserStack->new(development => 1);
my $url = $stack->url;
local $ENV{PYTHONPATH} = PurserStack::root() . '/t/lib';
for my $file (@files) {
    my $out = `cd '$gabbits' && /usr/bin/python3 /usr/bin/gabbi-run -k -r purser_gabbi:MultidocJsonpaths '$url' -- '$file' 2>&1`;
    my $status = $?;
    my $passed = () = $out =~ /^\xe2\x9c\x93 /mg;
    my $failed = () = $out =~ /^\xe2\x9c\x97 /mg;
    ok($status == 0 && $failed == 0 && $passed > 0, "$file: $passed passed, $failed failed")
        or diag(join "\n", grep { /FAIL|Error|assert|\xe2\x9c\x97/ } split /\n/, $out);
}
$stack->finish;

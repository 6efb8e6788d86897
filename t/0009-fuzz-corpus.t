# 0009: the fuzz targets (t/fuzz/*.c, built by make test into build/fuzz with libFuzzer,
# AddressSanitizer and UBSan) replay every input of their corpus (t/fuzz/corpus/<target>/: the
# seeds, and each crash fuzzing once found). A crash, a leak or undefined behaviour on any of
# them fails here. Long runs: make fuzz FUZZ_SECONDS=N (docs/developer.md, "Fuzzing").
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

my $root = PurserStack::root();
my @targets = map { m{/([^/]+)\.c$} } sort glob "$root/t/fuzz/*.c";
ok @targets >= 9, scalar(@targets) . ' fuzz targets';
for my $t (@targets) {
    my $bin = "$root/build/fuzz/fuzz-$t";
    my @inputs = sort glob "$root/t/fuzz/corpus/$t/*";
    ok -x $bin, "fuzz-$t is built" or next;
    ok @inputs >= 1, "  its corpus has inputs (" . @inputs . ')';
    my $out = `'$bin' @{[ map { "'$_'" } @inputs ]} 2>&1`;
    my $ran = () = $out =~ /^Executed /mg;
    is $?, 0, "  replays all of them without a crash" or diag substr($out, -3000);
    is $ran, scalar @inputs, "  ($ran executed)";
}
done_testing;

# tools/docs-cycles: no two files of lib/docs call each other, however far round (issue 51), but
# for those its allow-list names; found from the build's objects with nm.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);

my $build = $ENV{PURSER_BUILD} // 'build';
my $out = `tools/docs-cycles $build 2>&1`;
is($? >> 8, 0, 'lib/docs has no call cycle') or diag $out;

my $root = tempdir(CLEANUP => 1);
sub tree { # tree(FILE => C SOURCE, ...): lib/docs/ under $root, compiled into $root/build
    system('rm', '-rf', "$root/lib", "$root/build");
    make_path("$root/lib/docs", "$root/build/lib/docs");
    my %files = @_;
    for my $name (keys %files) {
        open my $fh, '>', "$root/lib/docs/$name" or die $!;
        print $fh $files{$name};
        close $fh;
        (my $object = $name) =~ s/\.c$/.o/;
        system('cc', '-c', '-o', "$root/build/lib/docs/$object", "$root/lib/docs/$name") == 0
            or die "cc $name";
    }
}
sub cycles {
    my ($tool) = @_;
    my $text = `$tool @_[1 .. $#_] $root/build $root 2>&1`;
    return ($? >> 8, $text);
}

tree('a.c' => "int b(void);\nint a(void) { return b(); }\n", 'b.c' => "int b(void) { return 1; }\n");
my ($rc, $text) = cycles('tools/docs-cycles');
is($rc, 0, 'a calls b: no cycle') or diag $text;

tree('a.c' => "int b(void);\nint a(void) { return b(); }\n",
     'b.c' => "int c(void);\nint b(void) { return c(); }\n",
     'c.c' => "int a(void);\nint c(void) { return a(); }\n",
     'd.c' => "int a(void);\nint d(void) { return a(); }\n");
($rc, $text) = cycles('tools/docs-cycles');
is($rc, 1, 'a -> b -> c -> a fails');
like($text, qr/call each other: a\.c b\.c c\.c \(/, '  naming the three files, not d.c');
($rc, $text) = cycles('tools/docs-cycles', '--list');
like($text, qr/^  c\.c -> a\.c: a$/m, '  --list names the symbol of each call');

# an entry of the allow-list holds it
my $allowing = "$root/docs-cycles";
open my $in, '<', 'tools/docs-cycles' or die $!;
open my $copy, '>', $allowing or die $!;
while (my $line = <$in>) {
    print $copy $line;
    print $copy "    [[qw(a.c b.c c.c)], 'the test'],\n" if $line =~ /^my \@allowed = \($/;
}
close $copy;
close $in;
($rc, $text) = cycles("perl $allowing");
is($rc, 0, 'a cycle inside an allowed entry passes') or diag $text;
tree('a.c' => "int b(void);\nint a(void) { return b(); }\n",
     'b.c' => "int a(void);\nint e(void);\nint b(void) { return a() + e(); }\n",
     'e.c' => "int b(void);\nint e(void) { return b(); }\n");
($rc, $text) = cycles("perl $allowing");
is($rc, 1, '  one reaching past it fails');

done_testing();

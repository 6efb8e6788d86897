# tools/layers: the build's check that lib/ folders include only the folders below them.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);

my $root = tempdir(CLEANUP => 1);

sub tree { # tree(FILE => CONTENT, ...): a fresh lib/ under $root
    system('rm', '-rf', "$root/lib");
    my %files = @_;
    for my $path (keys %files) {
        (my $dir = "$root/$path") =~ s{/[^/]+$}{};
        make_path($dir);
        open my $fh, '>', "$root/$path" or die $!;
        print $fh $files{$path};
        close $fh;
    }
}

sub layers {
    my $out = `tools/layers $root 2>&1`;
    return ($? >> 8, $out);
}

my ($rc, $out) = (system('tools/layers') >> 8);
is($rc, 0, 'the real lib/ is layered');

tree('lib/base/a.h' => "#include <string.h>\n", 'lib/codec/b.c' => "#include \"base/a.h\"\n",
     'lib/docs/c.c' => "#include \"codec/b.h\"\n#include \"docs/d.h\"\n");
($rc, $out) = layers();
is($rc, 0, 'downward and same-folder includes pass') or diag $out;

tree('lib/base/a.c' => "#include \"codec/b.h\"\n", 'lib/codec/b.h' => "\n");
($rc, $out) = layers();
is($rc, 1, 'an upward include fails');
like($out, qr{lib/base/a\.c:1: lib/base/ includes codec/b\.h}, 'and names the file, line and include');

tree('lib/policy/a.c' => "#include \"docs/b.h\"\n", 'lib/docs/b.h' => "\n");
($rc, $out) = layers();
is($rc, 1, 'a sibling include (policy -> docs) fails');

tree('lib/auth/a.c' => "#include \"b.h\"\n");
($rc, $out) = layers();
is($rc, 1, 'an include without its folder fails');
like($out, qr/without its folder/, 'and says so');

tree('lib/store/a.c' => "#include <fcgiapp.h>\n");
($rc, $out) = layers();
is($rc, 1, 'a FastCGI header in lib/ fails');

tree('lib/extra/a.c' => "\n");
($rc, $out) = layers();
is($rc, 1, 'a folder missing from the order fails');
like($out, qr{lib/extra/ is not in the order}, 'and names it');

tree('lib/docs/a.c' => "char *t = json_dumps(v, 0);\n");
($rc, $out) = layers();
is($rc, 1, 'json_dumps() in lib/ fails');
like($out, qr{lib/docs/a\.c:1: json_dumps\(\); use json_text\(\)}, 'and names the file and line');

tree('lib/base/json_pool.c' => "char *t = json_dumps(v, 0);\n");
($rc, $out) = layers();
is($rc, 0, 'the pool itself may call it') or diag $out;

done_testing();

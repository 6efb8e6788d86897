# A fresh machine: nothing that depends on a package may be evaluated before `make deps` has
# installed it. The build runs in a copy of the tree with a pkg-config that answers nothing (as
# on a machine without the -dev packages) until a stand-in for tools/deps has run.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);

my $real = `sh -c 'command -v pkg-config'`;
chomp $real;
BAIL_OUT('pkg-config is not installed (make deps installs it)') unless $real;

my $dir = tempdir(CLEANUP => 1);
my $marker = "$dir/deps-ran";
system("tar -c Makefile lib fcgi client tools sql t/*.c t/*.h docs t/browser/screenshots | tar -x -C $dir") == 0 or die 'copy';
mkdir "$dir/bin";
open my $fh, '>', "$dir/bin/pkg-config" or die $!;
print $fh "#!/bin/sh\n[ -e '$marker' ] && exec '$real' \"\$@\"\n"
  . "echo \"Package \$* was not found in the pkg-config search path\" >&2\nexit 1\n";
close $fh;
open $fh, '>', "$dir/fake-deps" or die $!;
print $fh "#!/bin/sh\necho deps-ran > '$marker'\n";
close $fh;
chmod 0755, "$dir/bin/pkg-config", "$dir/fake-deps";

sub make_in_copy {
    my ($target) = @_;
    my $out = `cd $dir && PATH=$dir/bin:\$PATH CFLAGS=-O0 make --no-print-directory DEPS=./fake-deps BUILD=build $target 2>&1`;
    return ($? >> 8, $out);
}

# The stand-in pkg-config really hides the packages before deps.
is(system("PATH=$dir/bin:\$PATH pkg-config --libs jansson >/dev/null 2>&1") >> 8, 1,
   'before deps, pkg-config finds nothing');

my ($rc, $out) = make_in_copy('ready');
is($rc, 0, 'make ready (deps, then the build and the manual) links on the first try') or diag $out;
ok(-e $marker, 'deps ran');
ok(-x "$dir/build/purser-fcgi" && -x "$dir/build/purser" && -x "$dir/build/purserctl",
   "purser-fcgi, purser and purserctl are built");
ok(-f "$dir/build/manual/index.html", 'and the manual, by pandoc once deps ran');
like($out, qr/-ljansson/, 'the link line has the libraries pkg-config gave after deps');
like($out, qr{-I/usr/include/mariadb}, 'the compile lines have the flags pkg-config gave after deps');

done_testing();

# tools/lib-nohttp: lib/ speaks no HTTP (issue 51 item 4): no HTTP text, no API paths (the web
# layer builds links from the route table), no store_set_actor (the actor is an argument).
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
use File::Copy qw(copy);

my $root = tempdir(CLEANUP => 1);
make_path("$root/fcgi");
copy('fcgi/routes.c', "$root/fcgi/routes.c") or die $!;

sub tree { # tree(FILE => CONTENT, ...): a fresh lib/ under $root, beside the real route table
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

sub check {
    my $out = `tools/lib-nohttp $root 2>&1`;
    return ($? >> 8, $out);
}

my $out = `tools/lib-nohttp 2>&1`;
is($? >> 8, 0, 'the real lib/ speaks no HTTP') or diag $out;

tree('lib/policy/a.c' => "static const char *s = \"%s/organizations/%s/nodes/%s\";\n");
my $rc;
($rc, $out) = check();
is($rc, 1, 'an API path literal fails');
like($out, qr{lib/policy/a\.c:1: "%s/organizations/%s/nodes/%s" spells an API path}, '  naming file, line and literal');

tree('lib/store/a.c' => "#define HEAD \"POST /%s HTTP/1.0\\r\\n\"\n");
($rc, $out) = check();
is($rc, 1, 'an HTTP request line fails');
like($out, qr{lib/store/a\.c:1: HTTP text}, '  and says so');

tree('lib/store/a.c' => "static const char h[] = \"Content-Type: application/json\\r\\n\";\n");
($rc, $out) = check();
is($rc, 1, 'an HTTP header fails');

tree('lib/store/a.h' => "void store_set_actor(struct store *store, const char *actor);\n");
($rc, $out) = check();
is($rc, 1, 'store_set_actor fails');
like($out, qr{store_set_actor: the actor is an argument}, '  and says so');

tree('lib/policy/a.c' => "/* GET /organizations/{org}/nodes, \"HTTP/1.1\" */\nint x;\n",
     'lib/docs/b.c' => "const char *w = \"a/b\", *p = \"/tmp/x\";\n");
($rc, $out) = check();
is($rc, 0, 'comments and other slashes pass') or diag $out;

tree('lib/docs/docstore_read.c' => "const char *u = \"/revisions/\";\n");
($rc, $out) = check();
is($rc, 0, 'what the allow-list names passes') or diag $out;
tree('lib/docs/other.c' => "const char *u = \"/revisions/\";\n");
($rc, $out) = check();
is($rc, 1, '  in its own file only');

done_testing();

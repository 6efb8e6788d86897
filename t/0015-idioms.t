# tools/idioms: `make style`'s check that lib/, fcgi/ and client/ handle errors in STYLE's two
# forms, and no third form comes back.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);

my $root = tempdir(CLEANUP => 1);

sub tree { # tree(FILE => CONTENT, ...): a fresh lib/, fcgi/ and client/ under $root
    system('rm', '-rf', "$root/lib", "$root/fcgi", "$root/client");
    my %files = @_;
    for my $path (keys %files) {
        (my $dir = "$root/$path") =~ s{/[^/]+$}{};
        make_path($dir);
        open my $fh, '>', "$root/$path" or die $!;
        print $fh $files{$path};
        close $fh;
    }
}

sub idioms {
    my $out = `tools/idioms $root 2>&1`;
    return ($? >> 8, $out);
}

# a header declaring code-returning functions, as lib/ has
my $h = "int step_a(int x, struct purser_error *err);\nint step_b(struct purser_error *err);\n";

my ($rc, $out) = (system('tools/idioms') >> 8);
is($rc, 0, 'the real lib/, fcgi/ and client/ use the two forms only');

my $g = <<'C';
static int f(struct purser_error *err)
{
    int rc = step_a(1, err);
    if (!rc)
        rc = step_b(err);
    return rc;
}

static int g(struct purser_error *err)
{
    char *p = NULL;
    int rc = 0;
    if (!(p = malloc(4))) {
        rc = PURSER_EINTERNAL;
        goto cleanup;
    }
    rc = step_b(err);
cleanup:
    free(p);
    return rc;
}

static const char *k(const char *name, struct purser_error *err)
{
    int rc = 0;
    if (!name)
        return NULL;
    if (name)
        return name;
    for (int i = 0; i < 3; i++) {
        rc = step_a(i, err);
        if (rc)
            break;
    }
    if (rc != PURSER_EEXISTS)
        return NULL;
    return name;
}
C
# a handler: a list of steps with early returns (fcgi/ only)
my $handler = <<'C';
static int h(int x, struct purser_error *err)
{
    int rc;
    if (x && (rc = step_a(x, err)))
        return rc;
    if ((rc = step_b(err)))
        return rc;
    rc = step_a(x, err);
    if (rc)
        return rc;
    if (step_a(x, err) < 0 || !step_b(err))
        return 1;
    return x ? rc : 0;
}
C
tree('lib/base/s.h' => $h, 'lib/base/a.c' => $g, 'fcgi/a.c' => $handler);
($rc, $out) = idioms();
is($rc, 0, 'if (!rc) rc = ..., goto cleanup, a loop that breaks, a returned pointer, and a '
           . "handler's early returns in fcgi/ pass") or diag $out;

my @bad = (
    ['self-conditional', "    rc = rc ? rc : step_b(err);\n"],
    ['self-conditional', "    return rc ? rc : step_b(err);\n"],
    ['self-conditional', "    rc = rc || step_b(err);\n"],
    ['assignment-chain', "    if ((rc = step_a(1, err)) || (rc = step_b(err)))\n        return rc;\n"],
    ['assignment-chain', "    if (rc || (rc = step_b(err)))\n        return rc;\n"],
    ['collapse', "    if (step_a(1, err) || step_b(err))\n        return purser_error_set(err, PURSER_EINVAL, \"x\");\n"],
    ['collapse', "    rc = buf_adds(b, \"x\") || buf_addc(b, 'y');\n"],
    ['collapse', "    rc = buf_adds(b, \"x\") || other(b) ? purser_error_set(err, PURSER_EINVAL, \"too many tags\") : 0;\n"],
    ['return-code', "    if (step_a(1, err))\n        return err->code;\n"],
);
# an early return of a step's code, in lib/ and in client/ (the first failure's line named)
my @early = (
    "    rc = step_b(err);\n    if (rc)\n        return rc;\n",
    "    if ((rc = step_a(1, err)))\n        return rc;\n",
    "    if (b && (rc = step_a(1, err))) {\n        return rc;\n    }\n",
    "    rc = step_b(err);\n    if (rc || !b)\n        return rc;\n",
    "    if ((code = step_b(err)))\n        return code;\n",
);
for my $body (@early) {
    my $c = "static int f(struct buf *b, struct purser_error *err)\n{\n    int rc = 0, code;\n\n$body"
          . "    return rc;\n}\n";
    (my $what = $body) =~ s/\s+/ /g;
    for my $dir ('lib/docs', 'client') {
        tree('lib/base/s.h' => $h, "$dir/a.c" => $c);
        ($rc, $out) = idioms();
        is($rc, 1, "early-return fails in $dir/:$what");
        like($out, qr{^idioms: \Q$dir\E/a\.c:\d+: early-return: }m, 'and names the file and rule')
            or diag $out;
    }
    tree('lib/base/s.h' => $h, 'fcgi/a.c' => $c);
    ($rc, $out) = idioms();
    is($rc, 0, "and passes in fcgi/ (a handler's early return)") or diag $out;
}

for my $case (@bad) {
    my ($rule, $body) = @$case;
    tree('lib/base/s.h' => $h,
         'fcgi/a.c' => "static int f(struct buf *b, struct purser_error *err)\n{\n    int rc = 0;\n\n$body    return rc;\n}\n");
    ($rc, $out) = idioms();
    (my $what = $body) =~ s/\s+/ /g;
    is($rc, 1, "$rule fails:$what");
    like($out, qr{^idioms: fcgi/a\.c:5: \Q$rule\E: }m, 'and names the file, line and rule') or diag $out;
}

tree('lib/base/s.h' => $h, 'client/a.c' => <<'C');
static int f(struct purser_error *err)
{
    int rc = step_b(err);
    if (!rc)
        rc = step_b(err);
    if (rc)
        goto cleanup;
    rc = step_b(err);
cleanup:
    return rc;
}
C
($rc, $out) = idioms();
is($rc, 1, 'goto and if (!rc) rc = ... in one function fails');
like($out, qr{client/a\.c:2: mixed:}, 'and names the function');

tree('lib/base/s.h' => $h, 'lib/docs/a.c' => <<'C');
/* rc = rc ? rc : step_b(err); in a comment, and in a string: */
static const char *s = "(rc = a()) || (rc = b())";
C
($rc, $out) = idioms();
is($rc, 0, 'comments and strings are not code') or diag $out;

done_testing();

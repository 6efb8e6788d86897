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

tree('lib/base/s.h' => $h, 'lib/base/a.c' => <<'C');
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

static int h(int x, struct purser_error *err)
{
    int rc;
    if (x && (rc = step_a(x, err)))
        return rc;
    if (step_a(x, err) < 0 || !step_b(err))
        return 1;
    return x ? rc : 0;
}
C
($rc, $out) = idioms();
is($rc, 0, 'if (!rc) rc = ..., goto cleanup, a guarded step and compared calls pass') or diag $out;

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

# 9013: the manual (docs/). Its reference pages are what the code says today: each page of
# docs/reference/ is made again from its source (t/lib/PurserManual.pm: config-defaults, the
# command tables, GET /docs, GET /metrics, the feed's kinds) and must be the same, byte for
# byte. Every page builds with pandoc, every link of the built manual leads somewhere (a page,
# an anchor of it, or a path this server answers), nginx serves it at /manual/ with the admin
# pages' headers, and the admin pages and the API reference link to it.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use PurserStack;
use PurserManual;

my $root = PurserStack::root();
sub slurp { local (@ARGV, $/) = @_; return -e $_[0] ? scalar <> : '' }

my $s = PurserStack->new(workers => 1);

# ---- the reference pages and their sources ----
my $pages = PurserManual::pages($s);
is_deeply [ sort map { s{.*/}{}r } glob "$root/docs/reference/*.md" ], [ sort keys %$pages ],
    'docs/reference/ holds exactly the generated pages';
for my $name (sort keys %$pages) {
    my $committed = slurp("$root/docs/reference/$name");
    ok $committed eq $pages->{$name}, "docs/reference/$name is what its source says (else: make manual-ref)"
        or diag "first difference at line " . first_difference($committed, $pages->{$name});
}
sub first_difference {
    my @a = split /\n/, $_[0], -1;
    my @b = split /\n/, $_[1], -1;
    for my $i (0 .. ($#a > $#b ? $#a : $#b)) {
        return ($i + 1) . ":\n  committed: " . ($a[$i] // '(none)') . "\n  generated: " . ($b[$i] // '(none)')
            if ($a[$i] // "\0") ne ($b[$i] // "\0");
    }
    return 0;
}
like $pages->{'configuration.md'}, qr/^\| `database\.causal_reads` \| `true` \|/m, 'the configuration page has a key with its default';
like $pages->{'cli.md'}, qr/^### purserctl apply$/m, 'the command-line page has a section per purserctl command';
like $pages->{'api.md'}, qr{^\| GET \| `/organizations/\{org\}/nodes` \| read_node \|}m, 'the API page has an operation with its action';
like $pages->{'metrics.md'}, qr/^\| `purser_db_errors_total` \| counter \| kind: connection, deadlock, lock_wait, other \|/m,
    'the metrics page has a family with its labels\' values';
like $pages->{'events.md'}, qr/^- `policy_group_pointer`$/m, 'the event kinds page has a kind';
like $pages->{'errors.md'}, qr/^- `not_found`$/m, 'the error codes page has a code';

# ---- built with pandoc, every link checked ----
my $out = tempdir('purser-manual-XXXXXX', TMPDIR => 1, CLEANUP => 1) . '/manual';
my $log = `'$root/tools/manual' build '$out' 2>&1`;
is $?, 0, 'tools/manual build' or diag $log;
my @sources = map { s{^\Q$root\E/docs/}{}r } grep { !m{/assets/} } glob "$root/docs/*.md $root/docs/*/*.md";
is_deeply [ grep { !-f "$out/" . s/\.md$/.html/r } @sources ], [], scalar(@sources) . ' pages, each built to HTML';
my $check = `'$root/tools/manual' check '$out' 2>&1`;
is $?, 0, 'tools/manual check: no broken link' or diag $check;
like $check, qr/ 0 broken links$/m, '  (it says how many it read)';
my @server = $check =~ /^server (\S+)$/mg;
ok @server, 'the manual links to the server\'s own pages: ' . join(' ', @server);
for my $path (@server) {
    my $r = $s->request('GET', $path);
    ok $r->{status} == 200 || $r->{status} == 301, "  GET $path answers ($r->{status})";
}
{
    # the checker finds a broken link and a missing anchor
    my $bad = "$out/broken.html";
    open my $fh, '>', $bad or die;
    print $fh '<a href="index.html#no-such-part">x</a> <a href="no-such-page.html">y</a>';
    close $fh;
    my $found = `'$root/tools/manual' check '$out' 2>&1`;
    isnt $?, 0, 'a broken link fails the check';
    like $found, qr/no-such-page\.html: no such file/, '  naming the link';
    like $found, qr/index\.html#no-such-part: no id "no-such-part" there/, '  and an anchor that is not there';
    unlink $bad;
}

# ---- served at /manual/ ----
my $build = PurserStack::build();
if (!-f "$build/manual/index.html") { # make ready builds it; a test run after make build alone
    my $made = `'$root/tools/manual' build '$build/manual' 2>&1`;
    die "tools/manual build $build/manual: $made" if $?;
}
my $r = $s->request('GET', '/manual/');
is $r->{status}, 200, 'GET /manual/';
like $r->{headers}{'content-type'}, qr{^text/html}, '  HTML';
like $r->{content}, qr{<title>The purser manual · purser manual</title>}, '  the manual\'s home page';
like $r->{headers}{'content-security-policy'} // '', qr/default-src 'none'/, '  with a content security policy';
like $r->{headers}{'strict-transport-security'} // '', qr/max-age=/, '  and HSTS';
is $s->request('GET', '/manual')->{status}, 301, 'GET /manual is sent to /manual/';
is $s->request('GET', '/manual/reference/metrics.html')->{status}, 200, 'GET /manual/reference/metrics.html';
like $s->request('GET', '/manual/assets/manual.css')->{headers}{'content-type'}, qr{^text/css}, '  and its style sheet';

# ---- linked from the admin pages and the API reference ----
like $s->request('GET', '/admin/')->{content}, qr{<a class="manual" href="/manual/">Manual</a>}, 'the admin pages link to /manual/';
like $s->request('GET', '/docs/')->{content}, qr{<a href="/manual/">Manual</a>}, 'the API reference links to /manual/';
{
    my $site = slurp("$root/nginx/purser-site.conf.in");
    like $site, qr{location /manual/ \{\s*alias \@DOCDIR\@/manual/;}, 'the production site serves the installed manual (make install: $(DOCDIR)/manual)';
    like slurp("$root/Makefile"), qr{cp -R \$\(BUILD\)/manual \$\(DESTDIR\)\$\(DOCDIR\)/manual}, '  where make install copies it';
}

PurserStack::finish();

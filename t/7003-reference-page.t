#!/usr/bin/perl
# 7003: the API reference page (/docs/, nginx/admin/reference), a page of our own built in the
# browser from GET /docs. nginx serves it with the admin pages' headers (and /docs stays
# purser's JSON); in Debian's chromium (t/browser/reference.mjs) every operation of /docs has
# its section and its link in the contents, the search keeps exactly the operations it matches,
# an anchor navigates (a link of the contents, and an address opened with one), HTML in the
# document stays text, there is no console error or CSP violation, and at 390 px nothing
# scrolls sideways. make install puts the page where the production site's /docs/ looks.
# Screenshots in build/test-output/7003-reference-page/.
use strict;
use warnings;
use utf8;
binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use File::Path qw(make_path remove_tree);
use PurserStack;

my $root = PurserStack::root();
my $s = PurserStack->new(workers => 2);
my $anchor = 'putOrganizationsOrgPolicyGroupsGroupPoliciesName';
my $search = 'policy_groups';

# ---- the document, as the page reads it ----
my $docs = $s->get('/docs', { headers => { accept => 'text/html,application/xhtml+xml' } });
is $docs->{status}, 200, 'GET /docs (a browser asking) ...';
like $docs->{headers}{'content-type'}, qr{^application/json}, '  stays purser\'s JSON';
my $doc = decode_json($docs->{content});
my (%ops, %expected); # operationId -> [method, path, op]; those the search should keep
for my $path (keys %{ $doc->{paths} }) {
    for my $method (grep { /^(get|put|post|patch|delete|head|options)$/ } keys %{ $doc->{paths}{$path} }) {
        my $op = $doc->{paths}{$path}{$method};
        $ops{ $op->{operationId} } = [$method, $path, $op];
        my $text = lc join ' ', $method, $path, $op->{summary} // '', $op->{'x-purser-action'} // '', $op->{operationId};
        $expected{ $op->{operationId} } = 1 if index($text, $search) >= 0;
    }
}
ok scalar(keys %ops) > 100, 'the document has ' . scalar(keys %ops) . ' operations';
ok $ops{$anchor}, "  among them $anchor";

# ---- nginx's headers on the page ----
{
    my $admin = $s->get('/admin/');
    my $r = $s->get('/docs/');
    is $r->{status}, 200, 'GET /docs/';
    like $r->{headers}{'content-type'}, qr{^text/html}, '  HTML';
    like $r->{content}, qr{<script type="module" src="/docs/reference\.js"></script>}, '  the reference page';
    ok length($r->{headers}{'content-security-policy'} // ''), '  with a CSP';
    is $r->{headers}{'content-security-policy'}, $admin->{headers}{'content-security-policy'}, '  the admin pages\' CSP';
    unlike $r->{headers}{'content-security-policy'}, qr/unsafe-inline|unsafe-eval|\*/, '  nothing inline, no other origin';
    is $r->{headers}{'x-content-type-options'}, 'nosniff', '  X-Content-Type-Options';
    is $r->{headers}{'referrer-policy'}, 'no-referrer', '  Referrer-Policy';
    like $r->{headers}{'cache-control'}, qr/no-cache/, '  revalidated on every load';
    ok $r->{headers}{etag}, '  with an ETag';
    unlike $r->{content}, qr/<script(?![^>]*\bsrc=)/i, '  no inline script';
    my $js = $s->get('/docs/reference.js');
    is $js->{status}, 200, 'GET /docs/reference.js';
    like $js->{headers}{'content-type'}, qr{^application/javascript}, '  served as JavaScript';
    is $js->{headers}{'content-security-policy'}, $admin->{headers}{'content-security-policy'}, '  with the same headers';
    my $gz = $s->request('GET', '/docs/reference.js', { headers => { 'accept-encoding' => 'gzip' } });
    is $gz->{headers}{'content-encoding'}, 'gzip', '  compressed when the browser accepts it';
    like $s->get('/docs/reference.css')->{headers}{'content-type'}, qr{^text/css}, 'GET /docs/reference.css';
    my $size = 0;
    $size += -s $_ for glob("$root/nginx/admin/reference/*");
    ok $size < 30_000, "the page's HTML, JavaScript and CSS: $size bytes (under 30 KB)";
}

# ---- the browser ----
my $out = PurserStack::build() . '/test-output/7003-reference-page';
remove_tree($out);
make_path($out);
my %seen = PurserStack::browser_run('reference', { url => $s->url, out => $out, anchor => $anchor, search => $search });
ok !exists $seen{'driver error'}, 'the browser went through every step' or diag $seen{'driver error'};
is $seen{'error shown'}, '', 'the page shows no error';

my @shown = @{ $seen{operations} // [] };
is scalar(@shown), scalar(keys %ops), 'one section per operation of /docs (' . scalar(@shown) . ')';
is_deeply [sort @shown], [sort keys %ops], '  each operation\'s, by its operationId';
is_deeply [sort @{ $seen{'contents links'} // [] }], [sort keys %ops], 'the contents link to every one';
ok !grep({ $_ eq 'Other' } @{ $seen{areas} // [] }), 'every operation has its area (none under "Other": add its segment to reference.js\'s areas)'
    or diag explain $seen{areas};

my $one = $seen{'an operation'} // {};
my ($method, $path, $op) = @{ $ops{$anchor} };
is_deeply [ $one->{method}, $one->{path} ], [ uc $method, $path ], "$anchor: its method and path";
like $one->{text} // '', qr/\Q$op->{summary}\E/, '  its summary';
like $one->{text} // '', qr/\Q$op->{'x-purser-action'}\E/, '  its RBAC action';
is_deeply [ map { $_->[0] } grep { $_->[1] eq 'path' && $_->[2] } @{ $one->{parameters} // [] } ], [qw(org group name)],
    '  its path parameters, required';
my $schema = $doc->{components}{schemas}{ (split m{/}, $op->{requestBody}{content}{'application/json'}{schema}{'$ref'})[-1] };
my %fields = map { $_ => 1 } @{ $one->{fields} // [] };
is_deeply [ grep { !$fields{$_} } sort keys %{ $schema->{properties} } ], [], '  every field of its request body\'s schema';
is $one->{curl}, 'api -X PUT -d @policy-lock.json $PURSER_URL/organizations/$PURSER_ORG/policy_groups/GROUP/policies/NAME',
    '  a curl line with the manual\'s api() (docs/operator/identity.md)';

my @found = @{ $seen{'search shows'} // [] };
ok @found && @found < keys %ops, "typing '$search' keeps " . scalar(@found) . ' of ' . scalar(keys %ops);
is_deeply [sort @found], [sort keys %expected], '  exactly those whose method, path, summary, action or id has it';
like $seen{'search count'} // '', qr/^\Q${\ scalar @found} of ${\ scalar keys %ops}\E operations$/, '  and says how many';
is $seen{'search cleared shows'}, scalar(keys %ops), 'emptied: every operation again';

for my $how ('anchor followed', 'anchor opened') {
    my $p = $seen{$how} // {};
    is $p->{hash}, "#$anchor", "$how: the address names the operation";
    ok $p->{target} && $p->{scrolled} > 0, '  its section is the target, scrolled to';
    ok defined $p->{top} && $p->{top} >= 0 && $p->{top} < 120, "  at the top of the window, below the search ($p->{top} px)";
}

my $hostile = $seen{'hostile document'} // {};
is_deeply [ $hostile->{xss} // 'not seen', $hostile->{imgs} // 'not seen' ], [0, 0],
    'HTML in a summary and in schema descriptions: no script ran, no element made';
ok(($hostile->{as_text} // 0) > 0, '  it is shown as text');

is_deeply $seen{problems}, [], 'no console error and no CSP violation';
is_deeply $seen{'hostile problems'}, [], '  (the hostile document)';
is_deeply $seen{'phone problems'}, [], '  (phone)';
my $phone = $seen{'phone overflow'} // {};
is_deeply [ grep { ($phone->{$_} // 1) > 0 } sort keys %$phone ], [], 'at 390 px nothing scrolls sideways'
    or diag explain $phone, $seen{'phone widest'};
is scalar(keys %$phone), 3, '  measured at the top, with everything unfolded, and at an anchor';
ok -s "$out/$_.png", "screenshot $_" for qw(reference search anchor phone phone-anchor);

# ---- make install: the page where the production site's /docs/ looks, with the same headers ----
# (t/8002 installs and finds every file of nginx/admin/*/*; here: that the site points there)
{
    my $make = do { local (@ARGV, $/) = "$root/Makefile"; <> };
    like $make, qr{cp -R nginx/admin \$\(DESTDIR\)\$\(SHAREDIR\)/admin$}m, 'make install copies nginx/admin to $(SHAREDIR)/admin';
    my %block;
    for my $conf ('purser.conf.in', 'purser-site.conf.in') {
        my $text = do { local (@ARGV, $/) = "$root/nginx/$conf"; <> };
        ($block{$conf}{$_}) = $text =~ m#location \Q$_\E \{([^}]*)\}# for '/admin/', '/docs/';
        my @headers = map { [ ($block{$conf}{$_} // '') =~ /^\s*(add_header .*)$/mg ] } '/admin/', '/docs/';
        ok @{ $headers[1] }, "$conf: /docs/ sends headers";
        is_deeply $headers[1], $headers[0], '  the same as /admin/';
    }
    my ($alias) = ($block{'purser-site.conf.in'}{'/docs/'} // '') =~ /alias ([^;]+);/;
    is $alias, '@SHAREDIR@/admin/reference/', 'the production site\'s /docs/ serves $(SHAREDIR)/admin/reference/';
    ok -f "$root/nginx/admin/reference/$_", "  where make install puts nginx/admin/reference/$_" for qw(index.html reference.js reference.css);
}

$s->stop;
done_testing;

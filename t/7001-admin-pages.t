#!/usr/bin/perl
# 7001: the admin pages (issue 14) in Debian's chromium, driven headless by playwright-core
# (t/browser/admin.mjs) against the real stack. Signs in (a bad token is refused with a
# message), visits every page (no error, no console error, no CSP violation), keeps the page
# on reload and goes back with the browser; promotes a policy between groups and sees the
# pointer move through the API; diffs two document revisions; creates a cluster and resets its
# token (each shown once, each the one that works); creates and revokes an API token; a reader
# is offered no write control and a forced write shows the API's 403 naming the action; XSS
# payloads in a document's data, a cluster's description and annotations and a token's
# description stay text; at 390 px nothing scrolls sideways; every input has a label. The
# screenshots are left in build/test-output/7001-admin-pages/. nginx's safety headers on the
# pages are checked here too.
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

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org";
my $xss = '<img src=x onerror="window.__xss=1">';
sub call { $s->call(@_) }
sub ok_call { $s->must(@_) }
sub yaml_put { my ($path, $text, $method) = @_; $s->yaml_call($method // 'PUT', $path, $text) }
sub lock_for {
    my ($name, $rev) = @_;
    return { revision_id => $rev, name => $name, run_list => ['recipe[base::default]'],
             cookbook_locks => { base => { version => '1.0.0', identifier => "id-$rev" } },
             default_attributes => { note => $xss }, override_attributes => {} };
}

# ---- what the pages show ----
ok_call('lock', 'PUT', "$base/policy_groups/prod/policies/web", lock_for('web', 'w1'));
ok_call('lock', 'PUT', "$base/policy_groups/staging/policies/web", lock_for('web', 'w2'));
ok_call('node', 'POST', "$base/nodes", { name => 'web1', policy_name => 'web', policy_group => 'prod' });
my $doc = sub { my ($v) = @_; "---\nschema: deckhand/LayeringPolicy/v1\nmetadata: {schema: metadata/Control/v1, name: layering-policy}\ndata: {layerOrder: [site]}\n---\nschema: example/Kind/v1\nmetadata: {schema: metadata/Document/v1, name: page-doc, layeringDefinition: {abstract: false, layer: site}}\ndata: {html: '$xss', v: $v}\n" };
my $rev_a = yaml_put("$base/api/v1.0/buckets/site/documents", $doc->(1))->[0]{status}{revision};
my $rev_b = yaml_put("$base/api/v1.0/buckets/site/documents", $doc->(2))->[0]{status}{revision};
ok_call('cluster', 'POST', "$base/clusters", { metadata => { name => 'xss', labels => { env => 'prod' },
    annotations => { note => $xss }, description => $xss }, spec => { display_name => $xss } });
ok_call('token', 'POST', '/users/admin/tokens', { description => $xss });
ok_call('user', 'POST', '/users', { username => 'ui-reader' });
ok_call('member', 'POST', "$base/users", { username => 'ui-reader', roles => ['reader'] });
my $reader = ok_call('token', 'POST', '/users/ui-reader/tokens', { description => 'pages' })->{token};
# a reader who is also an operator on policy group lim-b alone (grants by group, issue 32)
ok_call('lock', 'PUT', "$base/policy_groups/lim-a/policies/web", lock_for('web', 'w1'));
ok_call('lock', 'PUT', "$base/policy_groups/lim-b/policies/web", lock_for('web', 'w2'));
ok_call('user', 'POST', '/users', { username => 'ui-ci' });
ok_call('member', 'POST', "$base/users", { username => 'ui-ci', roles => ['reader', 'operator'],
    policy_groups => { operator => ['lim-b'] } });
my $limited = ok_call('token', 'POST', '/users/ui-ci/tokens', { description => 'pages' })->{token};
# an operator on lim-b alone, without reader: it sees only lim-b of the groups
ok_call('user', 'POST', '/users', { username => 'ui-op' });
ok_call('member', 'POST', "$base/users", { username => 'ui-op', roles => ['operator'], policy_groups => { operator => ['lim-b'] } });
my $operator_only = ok_call('token', 'POST', '/users/ui-op/tokens', { description => 'pages' })->{token};

# ---- nginx's headers on the pages ----
{
    my $r = $s->get('/admin/');
    is $r->{status}, 200, 'GET /admin/';
    like $r->{headers}{'content-security-policy'}, qr/script-src 'self'/, '  a CSP allowing only its own scripts';
    unlike $r->{headers}{'content-security-policy'}, qr/unsafe-inline|unsafe-eval|\*/, '  nothing inline, no other origin';
    is $r->{headers}{'x-content-type-options'}, 'nosniff', '  X-Content-Type-Options';
    is $r->{headers}{'referrer-policy'}, 'no-referrer', '  Referrer-Policy';
    like $r->{headers}{'cache-control'}, qr/no-cache/, '  revalidated on every load (safe across releases)';
    ok $r->{headers}{etag}, '  with an ETag';
    unlike $r->{content}, qr/<script(?![^>]*\bsrc=)/i, '  no inline script';
    my $js = $s->get('/admin/app.js');
    like $js->{headers}{'content-type'}, qr{^application/javascript}, 'modules are served as JavaScript';
    my $gz = $s->request('GET', '/admin/app.js', { headers => { 'accept-encoding' => 'gzip' } });
    is $gz->{headers}{'content-encoding'}, 'gzip', '  compressed when the browser accepts it';
    ok length($gz->{content}) < length($js->{content}), '  smaller (' . length($gz->{content}) . ' of ' . length($js->{content}) . ' bytes)';
    $r = $s->request('GET', '/', { headers => { accept => 'text/html,application/xhtml+xml' } });
    is $r->{status}, 302, 'a browser asking for / ...';
    like $r->{headers}{location}, qr{/admin/$}, '  is sent to the admin pages';
    $r = $s->get('/admin');
    is $r->{status}, 301, '/admin without its slash ...';
    like $r->{headers}{location}, qr{/admin/$}, '  is sent to /admin/';
    my $size = 0;
    $size += -s $_ for glob(PurserStack::root() . '/nginx/admin/*.{js,css}'), glob(PurserStack::root() . '/nginx/admin/pages/*.js');
    ok $size < 150_000, "the pages' JavaScript and CSS: $size bytes (under 150 KB)";
}

# ---- the browser ----
my $out = PurserStack::build() . '/test-output/7001-admin-pages';
remove_tree($out);
make_path($out);
my %seen = PurserStack::browser_run('admin', { url => $s->url, org => $org, admin => $s->env('PURSER_ADMIN_TOKEN'), reader => $reader,
    out => $out, policy => 'web', policy_rev => 'w1', group_to => 'prod', group_from => 'staging',
    cluster => 'c-xss', rev_a => $rev_a, rev_b => $rev_b,
    limited => { token => $limited, groups => ['lim-a', 'lim-b'], operator_only => $operator_only } });
ok !exists $seen{'driver error'}, 'the browser went through every step' or diag $seen{'driver error'};

like $seen{'bad token message'} // '', qr/not valid/, 'a bad token: the sign-in says so';
{
    my $c = $seen{'new cluster shown once'} // {};
    like(($c->{labels} // [])->[1] // '', qr/^Install URL \(shown once/, 'a cluster created: its install URL shown once too');
    like(($c->{values} // [])->[1] // '', qr{^https://.*/install/}, '  the URL the new machine runs');
    ok $c->{until}, '  and until when its token can be redeemed';
}
{
    my $m = $seen{'compare with a missing group'} // {};
    is_deeply $m->{headings}, ['Policy group prod', 'What prod points at'], 'a group compared with one that is not there: the group page still';
    is scalar(@{ $m->{errors} // [] }), 1, '  with one error';
    like(($m->{errors} // [])->[0] // '', qr/no-such-group/, '  naming the missing group');
    ok(($m->{pointers} // 0) >= 1, '  and the group\'s own pointers');
}
is $seen{'signed in at'}, '#/orgs', 'signed in: the organizations';
ok $seen{'token in sessionStorage, not in the URL'}, '  the token kept in sessionStorage, never in the address';
for my $name (qw(orgs policies policy revision groups group nodes nodes-of-policy node documents document-revision rendered diff
                 clusters cluster members tokens events user client)) {
    my $p = $seen{"page $name"} // {};
    ok length($p->{h1} // ''), "page $name shows its title ($p->{h1})";
    is $p->{error} // 'not seen', '', '  without an error';
    is_deeply [ $p->{xss} // 'not seen', $p->{imgs} // 'not seen' ], [0, 0], '  and what the API said stays text (no script ran, no image made)';
}
like $seen{'page diff'}{h1} // '', qr/Revision $rev_a and $rev_b/, 'the diff of two revisions';
is_deeply [ @{ $seen{'page diff'}{cells} // [] }[0, 1] ], ['site', 'modified'], '  shows the bucket that changed';
is_deeply [ @{ $seen{'page nodes-of-policy'}{cells} // [] }[0 .. 2] ], ['web1', 'web', 'prod'], 'nodes by group and policy: the node, its policy and group';
ok grep({ $_ eq 'w1' } @{ $seen{'page policy'}{cells} // [] }), 'a policy page lists its revisions';
is_deeply [ @{ $seen{'page policy'}{cells} // [] }[3, 8] ], ['lim-b, staging', 'lim-a, prod'],
    '  with the groups pointing at each (one answer of the API, not every group read)';
is_deeply $seen{'after reload'}, ["#/o/$org/clusters", 'Clusters'], 'reload keeps the page';
is $seen{'after back'}, "#/o/$org/clusters", 'back goes to the page before';
my %tab = map { $_ => 1 } @{ $seen{'reached by Tab on clusters'} // [] };
ok $tab{'org-switch'} && $tab{labels} && $tab{newname} && $tab{newlabels} && $tab{'sign-out'}, 'every control of a page is reached with Tab';
is_deeply $seen{'inputs without a label'}, [], 'every input and select has a label';

like $seen{'promote asks'} // '', qr/web: w1 → w2/, 'promote lists what will change before it does';
my (undef, $now) = call('GET', "$base/policy_groups/prod/policies/web");
is $now->{revision_id}, 'w2', '  and the API shows the pointer moved';

my ($first, $reset) = ($seen{'new cluster token'}, $seen{'reset cluster token'});
like $first // '', qr/^[0-9a-f]{64}$/, 'a new cluster: its bootstrap token shown once';
like $reset // '', qr/^[0-9a-f]{64}$/, 'reset: a new token shown once';
my ($r1) = call('GET', "/install/bootstrap.json?token=$first", undef, authorization => '');
isnt $r1->{status}, 200, '  the first no longer works';
my ($r2) = call('GET', "/install/bootstrap.json?token=$reset", undef, authorization => '');
is $r2->{status}, 200, '  the new one does';
my (undef, $c) = call('GET', "$base/clusters/c-from-the-page");
is_deeply $c->{metadata}{labels}, { env => 'ui' }, '  the cluster has the labels typed';
ok scalar(grep { $_ eq 'c-from-the-page' } @{ $seen{'clusters listed after a create'} // [] }),
    '  and the list shows it at once (no reload)';
like $seen{'status after a reset'} // '', qr/\Q$c->{status}{bootstrap_token}{expires_at}\E/,
    "  the page's status shows the new token's expiry after the reset"
    or diag "page: $seen{'status after a reset'}; API: $c->{status}{bootstrap_token}{expires_at}";

like $seen{'new api token'} // '', qr/^purser_/, 'a new API token shown once';
my ($rt) = call('GET', '/organizations', undef, authorization => "Bearer $seen{'new api token'}");
is $rt->{status}, 401, '  revoked from the page: refused';

is_deeply $seen{'reader controls'}, { map { ($_ => { create => JSON::PP::false, reset => JSON::PP::false, promote => JSON::PP::false }) } qw(clusters cluster group) },
    'a reader is offered no write control';
like $seen{'reader forced write'} // '', qr/403.*write_cluster/s, 'a forced write shows the API\'s 403, naming the action';

is_deeply $seen{'limited promote'}, { 'lim-a' => JSON::PP::false, 'lim-b' => JSON::PP::true },
    'an operator on lim-b alone is offered promote into lim-b, not into lim-a';
ok scalar(grep { /ui-ci/ && /operator \(policy groups lim-b\)/ } @{ $seen{'limited members'} // [] }),
    '  and the members page shows the limit'
    or diag explain $seen{'limited members'};
is_deeply $seen{'limited members linked'}, ['ui-ci'], '  a member who is no server admin: only its own name links to a user page';
is_deeply $seen{'limited problems'}, [], '  (no console error)';
like $seen{'limited reader sees every group'} // '', qr/^(?:No group points at it\.|Groups point at it \([^)]*\): they lose this policy, and their nodes find none on their next run\.)$/,
    'a delete asked by one who reads every group: what points at the revision, nothing more';
like $seen{'operator only, delete asks'} // '', qr/Groups you cannot see may point at it too: then the delete is refused\./,
    'a delete asked by one who sees some groups only: the dialog says others may point at it';
is_deeply $seen{'operator only problems'}, [], '  (no console error)';
is_deeply $seen{'admin problems'}, [], 'no console error and no CSP violation (admin)';
is_deeply $seen{'reader problems'}, [], '  (reader)';
is_deeply $seen{'phone problems'}, [], '  (phone)';
my $phone = $seen{'phone overflow'} // {};
is_deeply [ grep { ($phone->{$_} // 1) > 0 } sort keys %$phone ], [], 'at 390 px no page scrolls sideways';
ok scalar(keys %$phone) >= 19, '  every page measured';
ok -s "$out/$_.png", "screenshot $_" for qw(signin clusters group promoted token-reset phone-clusters);

$s->stop;
done_testing;

#!/usr/bin/perl
# 7004: the admin pages' fixes of issue 38, in Debian's chromium (t/browser/fixes.mjs): the
# group comparison shows no stray "null"; the events page shows that it is loading while its
# feed answers; a page whose API call fails keeps its title, back link and filters and shows
# the API's message in place; every time is relative with the exact local and UTC time on
# hover (<time datetime title>); an encrypted document is marked and its value is read (and
# shown) only after a click on reveal; revoking the token the tab is signed in with warns first
# and then signs out cleanly to the sign-in page. Screenshots in build/test-output/7004-admin-fixes/.
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
sub ok_call { $s->must(@_) }
sub lock_for {
    my ($name, $rev, $attrs) = @_;
    return { revision_id => $rev, name => $name, run_list => ['recipe[base::default]'],
             cookbook_locks => { base => { version => '1.0.0', identifier => "id-$rev" } },
             default_attributes => $attrs, override_attributes => {} };
}

# two groups whose policies differ, one policy in one group only
ok_call('lock', 'PUT', "$base/policy_groups/prod/policies/web", lock_for('web', 'w1', { port => 80 }));
ok_call('lock', 'PUT', "$base/policy_groups/staging/policies/web", lock_for('web', 'w2', { port => 8080, tls => 1 }));
ok_call('lock', 'PUT', "$base/policy_groups/staging/policies/db", lock_for('db', 'd1', {}));
ok_call('cluster', 'POST', "$base/clusters", { metadata => { name => 'timed', labels => { env => 'prod' } } });
# a revision with an encrypted document and a cleartext one
my $secret = sprintf 'purser-secret-%08x', int rand 0xffffffff;
my $bundle = "---\nschema: deckhand/Passphrase/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: db-password\n"
    . "  storagePolicy: encrypted\n  layeringDefinition:\n    abstract: false\n    layer: site\ndata: $secret\n"
    . "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: public\n"
    . "  layeringDefinition:\n    abstract: false\n    layer: site\ndata:\n  public: yes\n";
my $rev = $s->yaml_call('PUT', "$base/api/v1.0/buckets/secrets/documents", $bundle)->[0]{status}{revision};
ok $rev, "a revision with an encrypted document ($rev)";
# a change by another user, for the events page's actor filter
ok_call('user', 'POST', '/users', { username => 'ev-op' });
ok_call('member', 'POST', "$base/users", { username => 'ev-op', roles => ['operator'] });
my $op_made = ok_call('token', 'POST', '/users/ev-op/tokens', { description => 'events' });
my $op = $op_made->{token};
my ($rop) = $s->call('PUT', "$base/policy_groups/qa/policies/web", lock_for('web', 'w1', { port => 80 }),
    authorization => "Bearer $op");
is $rop->{status}, 201, 'ev-op points qa at web';
# a token of admin's own, for the tab that revokes it
my $own = ok_call('token', 'POST', '/users/admin/tokens', { description => 'this tab' });
# a cluster and a node deleted since their events: the events page says so, no 404 page
ok_call('cluster', 'POST', "$base/clusters", { metadata => { name => 'gone' } });
is +($s->call('DELETE', "$base/clusters/c-gone"))[0]{status}, 204, 'a cluster deleted after its event';
ok_call('node', 'POST', "$base/nodes", { name => 'gone-node' });
ok_call('node', 'DELETE', "$base/nodes/gone-node");
# what the API says of a revision that does not exist
my ($r404, $b404) = $s->call('GET', "$base/api/v1.0/revisions/99999/documents");
my ($rd404, $bd404) = $s->call('GET', "$base/api/v1.0/revisions/99998/diff/99999");

my $out = PurserStack::build() . '/test-output/7004-admin-fixes';
remove_tree($out);
make_path($out);
my %seen = PurserStack::browser_run('fixes', { url => $s->url, org => $org, admin => $s->env('PURSER_ADMIN_TOKEN'), out => $out,
    own => { token => $own->{token}, id => $own->{id} }, group_to => 'prod', group_from => 'staging',
    rev_secret => $rev, actor => 'ev-op', secret_name => 'db-password', secret_value => $secret,
    error_pages => [ [ 'revision', "/o/$org/documents/99999?view=rendered&schema=example/Kind/v1" ],
                     [ 'diff', "/o/$org/diff/99998/99999" ], [ 'cluster', "/o/$org/clusters/c-nothing" ] ],
    time_pages => [ [ 'policies', "/o/$org/policies" ], [ 'policy', "/o/$org/policies/web" ],
                    [ 'documents', "/o/$org/documents" ], [ 'clusters', "/o/$org/clusters" ],
                    [ 'cluster', "/o/$org/clusters/c-timed" ], [ 'tokens', "/o/$org/tokens" ],
                    [ 'events', "/o/$org/events" ] ] });
ok $seen{done} && !exists $seen{'driver error'}, 'the browser went through every step' or diag $seen{'driver error'};

# bug 1
my $group = $seen{'group text'} // '';
like $group, qr/web/, 'the group comparison lists the policies';
unlike $group, qr/\bnull\b/, '  with no stray "null" (a guard: no valid lock made one appear on the old page either)' or diag $group;
unlike $group, qr/"run_list"|"cookbooks"/, '  no raw JSON diff';
like $group, qr/base\s*1\.0\.0 \(id-w1\) → 1\.0\.0 \(id-w2\)/, '  a cookbook from version (identifier) to version (identifier)' or diag $group;
like $group, qr/default_attributes\.tls/, '  and the attribute paths that change';

# bug 5
ok $seen{'events while loading'}{loading}, 'the events page says it is loading while its feed answers';
is $seen{'events while loading'}{rows}, 0, '  (no rows yet)';
ok !$seen{'events after loading'}{loading} && $seen{'events after loading'}{rows} > 0, '  then shows the rows, loading gone';

# the events page's links (issue 50): only what is there and the admin's to open
{
    my @rows = @{ $seen{'events links'} // [] };
    my $row = sub { my ($kind, $op, $name) = @_; (grep { $_->[0] eq $kind && $_->[1] eq $op && $_->[2] =~ /^\Q$name\E\b/ } @rows)[0] // [] };
    is_deeply $row->('cluster', 'put', 'c-gone'), ['cluster', 'put', 'c-gone (deleted)', undef],
        'an event of a cluster deleted since: "deleted", no link to a page that is gone';
    is_deeply $row->('cluster', 'delete', 'c-gone'), ['cluster', 'delete', 'c-gone (deleted)', "#/o/$org/clusters"],
        '  its delete: "deleted", linking the list';
    is_deeply $row->('node', 'put', 'gone-node'), ['node', 'put', 'gone-node (deleted)', undef], '  a node deleted since, the same';
    is_deeply $row->('cluster', 'put', 'c-timed'), ['cluster', 'put', 'c-timed', "#/o/$org/clusters/c-timed"],
        '  a cluster still there links its page';
    is_deeply $row->('token', 'put', $own->{id}), ['token', 'put', $own->{id}, "#/o/$org/tokens"],
        '  a token of the signed-in user links "My tokens"';
    is_deeply $row->('token', 'put', $op_made->{id}), ['token', 'put', $op_made->{id}, undef],
        "  another user's token links nowhere";
}

# the events page's filters
my $f = $seen{'events filtered'} // {};
ok @{ $f->{kinds} // [] } > 0 && !grep({ $_->[0] ne 'cluster' } @{ $f->{kinds} }), 'the events filtered by kind: only cluster events'
    or diag explain $f->{kinds};
ok @{ $f->{actor} // [] } > 0 && !grep({ $_->[1] ne 'ev-op' } @{ $f->{actor} }), '  by actor: only what ev-op did'
    or diag explain $f->{actor};

# bug 6
my $e = $seen{'error pages'} // {};
like $e->{revision}{h1} // '', qr/Revision 99999/, 'a revision that fails keeps its title';
ok scalar(grep { $_ eq "#/o/$org/documents" } @{ $e->{revision}{back} // [] }), '  its back link';
is $e->{revision}{inputs}{schema}, 'example/Kind/v1', '  and its filters as they were';
like $e->{revision}{error} // '', qr/404.*\Q$b404->{message}\E/s, "  with the API's message in place ($r404->{status} $b404->{message})";
like $e->{diff}{h1} // '', qr/Revision 99998 and 99999/, 'a diff that fails keeps its title';
ok scalar(grep { $_ eq "#/o/$org/documents" } @{ $e->{diff}{back} // [] }), '  its back link';
like $e->{diff}{error} // '', qr/\Q$bd404->{message}\E/, "  and shows the API's message ($bd404->{message})";
like $e->{cluster}{h1} // '', qr/c-nothing/, 'a cluster that does not exist: its title';
ok scalar(grep { $_ eq "#/o/$org/clusters" } @{ $e->{cluster}{back} // [] }), '  the back link to the clusters';
like $e->{cluster}{error} // '', qr/404/, '  and the 404';

# readable times
my $t = $seen{times} // {};
for my $name (qw(policies policy documents clusters cluster tokens events)) {
    my $p = $t->{$name} // {};
    is_deeply $p->{raw} // ['not seen'], [], "page $name: no raw ISO time";
    my @times = @{ $p->{times} // [] };
    ok @times > 0, '  its times are <time datetime> elements (' . scalar(@times) . ')';
    is_deeply [ grep { $_->{text} !~ /^(just now|(in )?\d+ (s|min|h|days?|months?|years?)( ago)?)$/
                       || $_->{title} !~ /UTC/ || $_->{datetime} !~ /^\d{4}-\d\d-\d\dT/ } @times ], [],
        '  each relative ("3 min ago"), the exact local and UTC time on hover';
}

# secrets behind a click
my $sb = $seen{'secret before reveal'} // {};
ok $sb->{row} && $sb->{row}{marker}, 'an encrypted document carries a marker';
ok !$sb->{shown}, '  its value is not on the page before a reveal';
ok !grep({ !/cleartext-secrets=false/ } @{ $sb->{asked} // ['none'] }), '  nor read from the API (cleartext-secrets=false)'
    or diag explain $sb->{asked};
my $sa = $seen{'secret after reveal'} // {};
ok $sa->{shown}, 'reveal shows the value';
ok scalar(grep { /metadata\.name=db-password/ && !/cleartext-secrets=false/ } @{ $sa->{asked} // [] }),
    '  read for that document only, on the click' or diag explain $sa->{asked};
is_deeply $seen{'admin problems'}, [], 'no console error and no CSP violation';

# bug 4
like $seen{'own revoke asks'} // '', qr/signed out/, 'revoking a token of your own warns that the tab may be signed out';
my $after = $seen{'after own revoke'} // {};
ok $after->{signin}, 'revoking the token the tab signed in with: the sign-in page';
is $after->{token}, undef, '  the token forgotten';
unlike $after->{text} // '', qr/401|invalid token/i, '  no "401 invalid token"';
like $after->{text} // '', qr/sign in again/i, '  and it says why';
my ($rt) = $s->call('GET', '/organizations', undef, authorization => "Bearer $own->{token}");
is $rt->{status}, 401, '  the token is revoked';

$s->stop;
done_testing;

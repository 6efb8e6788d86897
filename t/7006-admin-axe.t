#!/usr/bin/perl
# 7006: the admin pages checked by axe-core (npm, pinned in t/browser/package-lock.json), as
# issue 38 asks: every page, at 1280 px and at 390 px, signed in as an admin over a stack with
# something on each page (policies in two groups, nodes, a layered site with an encrypted
# document, a cluster, members, tokens, events), has no serious or critical violation, and no
# text squeezed into a column a few characters wide (a word wrapped letter by letter) nor a
# sideways scroll. The minor ones are printed (diag) for the closing note.
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
my $lock = sub { my ($rev, $port) = @_; { revision_id => $rev, name => 'web', run_list => ['recipe[base::default]'],
    cookbook_locks => { base => { version => '1.0.0', identifier => "id-$rev" } }, default_attributes => { port => $port }, override_attributes => {} } };
ok_call('lock', 'PUT', "$base/policy_groups/prod/policies/web", $lock->('w1', 80));
ok_call('lock', 'PUT', "$base/policy_groups/staging/policies/web", $lock->('w2', 8080));
ok_call('node', 'POST', "$base/nodes", { name => 'web1', policy_name => 'web', policy_group => 'prod',
    automatic => { platform => 'debian', platform_version => '12', ipaddress => '10.0.0.1', ohai_time => time } });
my $site = sub { my ($v) = @_; "---\nschema: deckhand/LayeringPolicy/v1\nmetadata: {schema: metadata/Control/v1, name: layering-policy}\ndata: {layerOrder: [site]}\n"
    . "---\nschema: example/Kind/v1\nmetadata: {schema: metadata/Document/v1, name: app, layeringDefinition: {abstract: false, layer: site}}\ndata: {replicas: $v}\n"
    . "---\nschema: deckhand/Passphrase/v1\nmetadata: {schema: metadata/Document/v1, name: db-password, storagePolicy: encrypted, layeringDefinition: {abstract: false, layer: site}}\ndata: s3cret-$v\n" };
my $rev_a = $s->yaml_call('PUT', "$base/api/v1.0/buckets/site/documents", $site->(1))->[0]{status}{revision};
my $rev_b = $s->yaml_call('PUT', "$base/api/v1.0/buckets/site/documents", $site->(2))->[0]{status}{revision};
ok_call('cluster', 'POST', "$base/clusters", { metadata => { name => 'axe', labels => { env => 'prod' } }, spec => { display_name => 'Axe' } });
ok_call('token', 'POST', '/users/admin/tokens', { description => 'for axe', expires_in => 86400 });

my @pages = (
    ['orgs', '/orgs'], ['policies', "/o/$org/policies"], ['policy', "/o/$org/policies/web"],
    ['revision', "/o/$org/policies/web/w1"], ['compare', "/o/$org/policies/web/compare/w1/w2"],
    ['compare-split', "/o/$org/policies/web/compare/w1/w2?diff=split"], ['diff-split', "/o/$org/diff/$rev_a/$rev_b?diff=split"], ['groups', "/o/$org/groups"], ['group', "/o/$org/groups/prod?from=staging"],
    ['nodes', "/o/$org/nodes"], ['node', "/o/$org/nodes/web1"], ['documents', "/o/$org/documents"],
    ['document-revision', "/o/$org/documents/$rev_b"], ['rendered', "/o/$org/documents/$rev_b?view=rendered"],
    ['diff', "/o/$org/diff/$rev_a/$rev_b"], ['clusters', "/o/$org/clusters"], ['cluster', "/o/$org/clusters/c-axe"],
    ['members', "/o/$org/members"], ['user', "/o/$org/users/admin"], ['client', "/o/$org/clients/$org-validator"],
    ['tokens', "/o/$org/tokens"], ['events', "/o/$org/events"], ['organization', "/o/$org/organization"], ['users', '/users'],
);
my $out = PurserStack::build() . '/test-output/7006-admin-axe';
remove_tree($out);
make_path($out);
my %seen = PurserStack::browser_run('axe', { url => $s->url, org => $org, admin => $s->env('PURSER_ADMIN_TOKEN'), out => $out, pages => \@pages });
ok !exists $seen{'driver error'}, 'axe ran on every page' or diag $seen{'driver error'};

my %minor;
for my $width (1280, 390) {
    for my $name ('signin', map { $_->[0] } @pages) {
        my $r = $seen{"axe $width $name"};
        ok $r && $r->{checked} > 10, "$name at $width px: checked (" . ($r ? $r->{checked} : 0) . ' rules)';
        is_deeply $r && $r->{violations}, [], '  no serious or critical violation' or diag explain $r->{violations};
        $minor{$_}++ for @{ $r ? $r->{minor} : [] };
        next if $name eq 'signin';
        is_deeply [ $r && $r->{narrow}{cells}, $r && $r->{narrow}{overflow} ], [[], 0], '  no text a few characters wide, no sideways scroll'
            or diag explain $r->{narrow};
    }
}
diag 'minor or moderate (pages x widths): ' . (join(', ', map { "$_ x$minor{$_}" } sort keys %minor) || 'none');
is_deeply $seen{problems}, [], 'no console error, no CSP violation';

$s->stop;
done_testing;

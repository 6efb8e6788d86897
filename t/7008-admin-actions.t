#!/usr/bin/perl
# 7008: the admin pages' remaining actions of issue 38, in Debian's chromium
# (t/browser/actions.mjs): a client disabled (after a confirmation) and enabled; a key added to a
# client (the server's pair, its private key shown once) and to a user (a public key given, with
# an expiry); a user created (its key shown once) and another deleted after a confirmation; an
# organization created (its validator's key shown once), filled by importing an export and
# deleted (refused while it holds things, then with everything after a second confirmation);
# old policy revisions collected after a dry run listing them; an export downloaded, without and
# with encrypted documents' data; an import refused by a non-empty organization with the API's
# message; an admin role taken away on the members page (not by its holder), then a 403 shown
# with the API's message; and none of these offered to a reader (nor the organizations list's
# settings link, to a page with nothing hers to change), the members form offering only the
# roles for people. Each
# change is read back through the API. Screenshots and downloads in
# build/test-output/7008-admin-actions/.
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
my $lock = sub { my ($rev) = @_; { revision_id => $rev, name => 'web', run_list => ['recipe[base::default]'],
    cookbook_locks => {}, default_attributes => {}, override_attributes => {} } };
ok_call('revision', 'POST', "$base/policies/web/revisions", $lock->("w$_")) for 1 .. 4;
ok_call('pointer', 'PUT', "$base/policy_groups/prod/policies/web", $lock->('w2'));
my $would = ok_call('dry run', 'POST', "$base/collect_policies", { keep => 1, dry_run => JSON::PP::true });
my @would = sort map { $_->{revision_id} } @{ $would->{revisions} };
$s->yaml_call('PUT', "$base/api/v1.0/buckets/site/documents",
    "---\nschema: deckhand/Passphrase/v1\nmetadata: {schema: metadata/Document/v1, name: db-password, storagePolicy: encrypted, layeringDefinition: {abstract: false, layer: site}}\ndata: ta-secret-value\n");
ok_call('client', 'POST', "$base/clients", { name => 'ta-client' });
ok_call('org', 'POST', '/organizations', { name => 'ta-full' });
ok_call('client', 'POST', '/organizations/ta-full/clients', { name => 'ta-full-node' });
ok_call('user', 'POST', '/users', { username => $_ }) for qw(ta-user ta-gone ta-reader ta-admin2);
ok_call('member', 'POST', "$base/users", { username => 'ta-reader', roles => ['reader'] });
ok_call('member', 'POST', "$base/users", { username => 'ta-admin2', roles => ['admin'] });
my $reader = ok_call('token', 'POST', '/users/ta-reader/tokens', { description => 'pages' })->{token};
my $demoted = ok_call('token', 'POST', '/users/ta-admin2/tokens', { description => 'pages' })->{token};

my $out = PurserStack::build() . '/test-output/7008-admin-actions';
remove_tree($out);
make_path($out);
system("openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out $out/given.key 2>/dev/null") == 0 or die 'openssl';
my $public = `openssl pkey -in $out/given.key -pubout`;
my %seen = PurserStack::browser_run('actions', { url => $s->url, org => $org, admin => $s->env('PURSER_ADMIN_TOKEN'), reader => $reader, demoted => $demoted,
    public_key => $public, out => $out });
ok !exists $seen{'driver error'}, 'the browser went through every step' or diag $seen{'driver error'};
my $r;

# ---- a client's active flag and keys ----
is_deeply $seen{'client offers'}, ['#toggle-active', '#add-key'], "an admin is offered a client's active flag and a new key";
like $seen{'client disable asks'} // '', qr/Disable client ta-client\?.*refused/s, 'disabling asks first, saying what it does';
like $seen{'client disable says'} // '', qr/Client ta-client disabled/, '  and says it is done';
like $seen{'client after disable'} // '', qr/^Disabled/, '  the page shows it disabled';
like $seen{'client enable says'} // '', qr/Client ta-client enabled/, 'enabled again (no question): it says so';
my $events = $s->must('events', 'GET', "$base/events?last=50&kinds=client")->{events};
is scalar(grep { $_->{name} eq 'ta-client' } @$events), 3, '  the API recorded created, disabled, enabled';
my $active = sub { $s->must('clients', 'GET', "$base/clients?page_size=1&filter=name==ta-client")->{items}[0]{spec}{active} };
is $active->(), JSON::PP::true, '  and has it active';
like $seen{'client key'} // '', qr/^-----BEGIN (RSA )?PRIVATE KEY-----\n/, "a client's key made by the server: its private key shown once";
like $seen{'client key says'} // '', qr/Key made-here added to ta-client/, '  the page says so';
like $seen{'client keys listed'} // '', qr/made-here/, '  and lists it';
ok grep({ $_->{name} eq 'made-here' } @{ $s->must('keys', 'GET', "$base/clients/ta-client/keys") }), '  the API has it';
like $seen{'user key says'} // '', qr/Key given added to ta-user/, "a user's key from a public key given";
ok !$seen{'user key shows a secret'}, '  (no private key to show)';
my $key = $s->must('key', 'GET', '/users/ta-user/keys/given');
(my $norm = $key->{public_key} // '') =~ s/\s+//g;
(my $want = $public) =~ s/\s+//g;
is $norm, $want, '  the API has that public key';
like $key->{expiration_date} // '', qr/^2031-01-02/, '  with its expiry';
is_deeply $seen{'user page offers'}, ['#toggle-active', '#add-key'], "another user's page offers disabling it and a key";
is_deeply $seen{'own user page offers'}, ['#add-key'], "  one's own a key, not disabling oneself";

# ---- users and organizations ----
is_deeply $seen{'orgs offers'}, ['#add-org', 'a[href="#/users"]'], 'a server admin is offered organizations and users';
like $seen{'user create says'} // '', qr/Created user ta-made/, 'a user created: the page says so';
like $seen{'user create key'} // '', qr/^-----BEGIN (RSA )?PRIVATE KEY-----\n/, '  its private key shown once';
is $s->must('user', 'GET', '/users/ta-made')->{display_name}, 'Made Here', '  the API has it, with its display name';
is_deeply $seen{'own user row'}, ['you'], '  (not oneself)';
like $seen{'user delete asks'} // '', qr/Delete user ta-gone\?.*every organization/s, 'a user deleted after a confirmation naming it';
like $seen{'user delete says'} // '', qr/User ta-gone deleted/, '  the page says so';
($r) = $s->call('GET', '/users/ta-gone');
is $r->{status}, 404, '  the API has it gone';
like $seen{'org create says'} // '', qr/Created organization ta-new with its validator client ta-new-validator/, 'an organization created: the page says so';
like $seen{'org create key'} // '', qr/^-----BEGIN (RSA )?PRIVATE KEY-----\n/, "  its validator's key shown once";
ok grep({ $_ eq 'ta-new' } @{ $seen{'org listed'} // [] }), '  and lists it';
is_deeply $seen{'org full name listed'}, ['Made in the browser'], '  with its full name (the organizations are pages of the API\'s envelopes)';
is $seen{'org filtered'}[0], 'ta-new', '  and a filter by name asks the API for it alone' or diag explain $seen{'org filtered'};
ok grep({ $_ eq 'ta-new' } @{ $seen{'org switcher'} // [] }), '  and the switcher offers it on the next page, without a reload';

# ---- collect_policies ----
ok scalar(@would), "the API's dry run finds revisions to collect (@would)";
like $seen{'collect dry run'} // '', qr/Would go: ${\ scalar @would} revisions/, 'the dry run shows how many would go';
ok !grep({ ($seen{'collect dry run'} // '') !~ /revision $_ of web/ } @would), '  and each of them';
like $seen{'collect asks'} // '', qr/Collect ${\ scalar @would} revisions.*cannot be brought back/s, 'collecting asks first';
like $seen{'collect says'} // '', qr/Collected: ${\ scalar @would} revisions/, '  and says what went';
my %left = %{ $s->must('policy', 'GET', "$base/policies/web")->{revisions} };
ok !grep({ exists $left{$_} } @would), '  the API has them gone';
ok exists $left{w2}, '  the one a group points at stays';

# ---- export and import ----
is_deeply $seen{'org page offers'}, ['#export', '#import', '#delete-org'], "an organization's page offers export, import and delete";
is $seen{'export file'}{name}, "$org.yaml", 'the export is a download named after the organization';
my $slurp = sub { open my $in, '<:raw', $_[0] or return ''; local $/; <$in> };
my $yaml = $slurp->($seen{'export file'}{path} // '');
like $yaml, qr/^---/m, '  a YAML stream';
like $yaml, qr/ta-client/, '  holding the organization (its client)';
unlike $yaml, qr/ta-secret-value/, '  without encrypted data unless asked';
like $seen{'export says'} // '', qr/Exported \d+ resources of \Q$org\E/, '  the page says what it exported';
like $slurp->($seen{'export with secrets file'} // ''), qr/ta-secret-value/, 'asked for, the export holds encrypted data';
like $seen{'import refused says'} // '', qr/409/, "an import into a non-empty organization: the API's 409 shown";
like $seen{'import asks'} // '', qr/Import export-secrets\.yaml into ta-new\?/, 'an import asks first';
like $seen{'import says'} // '', qr/Imported export-secrets\.yaml into ta-new/, '  and says what it imported';
is $s->must('client', 'GET', '/organizations/ta-new/clients/ta-client')->{name}, 'ta-client', '  the API has its client';
ok exists $s->must('policy', 'GET', '/organizations/ta-new/policies/web')->{revisions}{w2}, '  and its policy revisions';
like $seen{'org delete asks'} // '', qr/Delete organization ta-full\?/, 'deleting an organization asks first';
like $seen{'org delete asks again'} // '', qr/ta-full is not empty.*1 × client/s, '  and, as it holds things, again, naming what goes';
like $seen{'org delete says'} // '', qr/Organization ta-full deleted with everything in it/, '  and says it is done';
($r) = $s->call('GET', '/organizations/ta-full');
is $r->{status}, 404, '  the API has it gone';

# ---- a 403, and a reader ----
cmp_ok $seen{'orgs settings links'} // 0, '>', 0, 'a server admin is offered each organization\'s settings page';
is $seen{'reader orgs settings links'}, 0, '  a reader none: nothing there is hers to change';
is_deeply $seen{'member form roles'}, [qw(admin operator reader release)],
    "the members form offers the roles for people, not the machines' node, validator and cluster";
is_deeply $seen{'demoted offers'}, ['#toggle-active', '#add-key'], 'an organization admin is offered the actions';
like $seen{'own role says'} // '', qr/cannot take your own role admin away here/, 'an organization admin may not take its own admin role away';
like $seen{'demote asks'} // '', qr/Take admin away from ta-admin2\?/, 'its admin role taken away on the members page, after a confirmation';
like $seen{'demote says'} // '', qr/ta-admin2 is a member with roles reader\./, '  which says what it holds now';
is_deeply [ map { @{ $_->{user}{roles} } } grep { $_->{user}{username} eq 'ta-admin2' } @{ $s->must('members', 'GET', "$base/users") } ], ['reader'],
    '  as the API has it';
like $seen{'403 says'} // '', qr/^403 .*update_client/, "once its role is gone, a 403 shows the API's message naming the action";
is $active->(), JSON::PP::true, '  and nothing changed';
is_deeply $seen{'reader orgs offers'}, [], 'a reader is offered no organization or user actions';
is_deeply $seen{"reader $_ offers"}, [], "  nothing on the $_ page" for qw(client policies organization);
like $seen{'reader users page'} // '', qr/403/, "  and the users page shows the API's 403";
is_deeply $seen{csp}, [], 'no CSP violation';
# the refusals the steps ask for (an import and a deletion refused, the 403s) are the only errors
is_deeply [ grep { !/status of (403|409) / } @{ $seen{problems} // ['none reported'] } ], [], 'no other console or page error';

done_testing;

#!/usr/bin/perl
# 7005: the admin pages' tables and actions of issue 38, in Debian's chromium
# (t/browser/tables.mjs): the nodes list (250 nodes) in pages of 100 with a total, Previous and
# Next, a sort by clicking a column (kept over a reload), a filter, and a group chosen; each
# node's policy, group, revision, platform, address and last save (what the column sorts by), and its page (deleted there,
# after a confirmation); the policies and policy groups lists asking the API for one page each,
# sorted and filtered by the server; the document revisions and a revision's documents (123, as
# stored and rendered) in pages the API gives (next, previous, sorted, filtered, with the total);
# a cluster edited (display name, labels, description) and deleted with a
# confirmation; a member added with roles, a role taken away (asked first) and removed; a client created (its
# key shown once) and deleted; a token made with an expiry; the events page opening with one
# request for the newest events (last=) and linking each event to its object; at 390 px rows as
# cards, the menu folded behind a button, nothing a few pixels wide. Each change is checked
# through the API. Screenshots in build/test-output/7005-admin-tables/.
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
use Time::Local ();

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org";
sub ok_call { $s->must(@_) }
my $lock = sub { my ($rev, $port, $name) = @_; { revision_id => $rev, name => $name // 'web', run_list => ['recipe[base::default]'],
    cookbook_locks => { base => { version => $port == 80 ? '1.0.0' : '1.1.0', identifier => "id-$rev" } },
    default_attributes => { port => $port, tls => { enabled => $port == 80 ? JSON::PP::false : JSON::PP::true } }, override_attributes => {} } };
ok_call('lock', 'PUT', "$base/policy_groups/prod/policies/web", $lock->('r-prod', 80));
ok_call('lock', 'PUT', "$base/policy_groups/dev/policies/web", $lock->('r-dev', 8080));
ok_call('lock', 'PUT', "$base/policy_groups/prod/policies/db", $lock->('d-prod', 80, 'db'));
ok_call('lock', 'PUT', "$base/policy_groups/dev/policies/db", $lock->('d-dev', 8080, 'db'));
ok_call('old', 'POST', "$base/policies/web/revisions", $lock->('r-old', 81));
ok_call('lock', 'PUT', "$base/policy_groups/qa/policies/web", $lock->('r-dev', 8080));
my $site = sub { my ($v) = @_; "---\nschema: deckhand/LayeringPolicy/v1\nmetadata: {schema: metadata/Control/v1, name: layering-policy}\ndata: {layerOrder: [site]}\n"
    . "---\nschema: example/Kind/v1\nmetadata: {schema: metadata/Document/v1, name: app, layeringDefinition: {abstract: false, layer: site}}\ndata: {image: app, replicas: $v, zone: a}\n"
    . "---\nschema: deckhand/Passphrase/v1\nmetadata: {schema: metadata/Document/v1, name: db-password, storagePolicy: encrypted, layeringDefinition: {abstract: false, layer: site}}\ndata: tb-secret-value\n" };
my $rev_a = $s->yaml_call('PUT', "$base/api/v1.0/buckets/site/documents", $site->(1))->[0]{status}{revision};
my $rev_b = $s->yaml_call('PUT', "$base/api/v1.0/buckets/site/documents", $site->(3))->[0]{status}{revision};
# a third revision: 120 more documents in bucket many (123 in all)
my $rev_c = $s->yaml_call('PUT', "$base/api/v1.0/buckets/many/documents", join '', map {
    sprintf "---\nschema: example/Many/v1\nmetadata: {schema: metadata/Document/v1, name: doc-%03d, layeringDefinition: {abstract: false, layer: site}}\ndata: {n: $_}\n", $_ } 1 .. 120)->[0]{status}{revision};
for my $i (1 .. 250) {
    ok_call('node', 'POST', "$base/nodes", { name => sprintf('web%03d', $i), policy_name => 'web', policy_group => $i % 5 ? 'prod' : 'dev',
        automatic => { platform => 'debian', platform_version => '12.7', ipaddress => "10.1.0.$i", ohai_time => time - 600 } });
}
ok_call('cluster', 'POST', "$base/clusters", { metadata => { name => 'edit-me', labels => { env => 'prod', old => 'yes' } } });
ok_call('user', 'POST', '/users', { username => 'tb-user' });
ok_call('client', 'POST', "$base/clients", { name => 'tb-keyed' });
ok_call('user', 'POST', '/users', { username => 'tb-release' });
ok_call('member', 'POST', "$base/users", { username => 'tb-release', roles => ['reader', 'release'], policy_groups => { release => ['prod-eu'] } });
ok_call('user', 'POST', '/users', { username => 'tb-reader' });
ok_call('member', 'POST', "$base/users", { username => 'tb-reader', roles => ['reader'] });
my $reader = ok_call('token', 'POST', '/users/tb-reader/tokens', { description => 'pages' })->{token};

# validations reported on the first revision: one failed, one succeeded (no ValidationPolicy:
# the revision's own status stays succeeded, as Deckhand has it)
$s->yaml_call('POST', "$base/api/v1.0/revisions/$rev_a/validations/tb-check", "status: failure\nvalidator: {name: tb, version: '1'}\n");
$s->yaml_call('POST', "$base/api/v1.0/revisions/$rev_a/validations/tb-lint", "status: success\nvalidator: {name: tb, version: '1'}\n");

my $out = PurserStack::build() . '/test-output/7005-admin-tables';
remove_tree($out);
make_path($out);
my %seen = PurserStack::browser_run('tables', { url => $s->url, org => $org, admin => $s->env('PURSER_ADMIN_TOKEN'), reader => $reader, out => $out, rev_a => $rev_a, rev_b => $rev_b, rev_c => $rev_c });
ok !exists $seen{'driver error'}, 'the browser went through every step' or diag $seen{'driver error'};

# ---- the nodes list ----
my $p = $seen{'nodes first page'} // {};
is $p->{caption}, '1–100 of 250 nodes', 'nodes: the first page of 100, with the total';
is scalar @{ $p->{names} // [] }, 100, '  100 rows';
is_deeply [ @{ $p->{first} // [] }[0 .. 5] ], ['web001', 'web', 'prod', 'r-prod', 'debian 12.7', '10.1.0.1'],
    '  each with policy, group, revision, platform, address';
{
    # the last column shows what it sorts by (updated_at: the last save), not the ohai_time of
    # the node's run, 10 minutes before it was saved here (issue 50)
    my $c = $seen{'nodes time column'} // {};
    my $n = $s->must('web001', 'GET', "$base/nodes?page_size=1&filter=name==web001")->{items}[0] // {};
    my $epoch = sub { my ($t) = @_; $t && $t =~ /^(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)/ ? Time::Local::timegm($6, $5, $4, $3, $2 - 1, $1) : -1 };
    like $c->{title} // '', qr/^Last saved/, '  and when it was last saved, the column the list sorts by';
    ok abs($epoch->($c->{datetime}) - $epoch->($n->{updated_at})) <= 1,
        "  showing updated_at ($n->{updated_at}), what sort=updated_at orders by, not ohai_time"
        or diag "shown $c->{datetime}";
}
is_deeply $p->{sort}, [['Node', 'ascending']], '  sorted by name, marked so';
is $seen{'nodes next page'}{caption}, '101–200 of 250 nodes', 'Next: the second page';
{
    my $p = $seen{'page in the address'} // {};
    like $p->{hashOnPage2} // '', qr/[?&]page=2\./, 'the page shown is kept in the address';
    is $p->{backTo}, '101–200 of 250 nodes', '  a node opened from page 2, then Back: page 2 again';
    is $p->{previous}, '1–100 of 250 nodes', '  and Previous from there: the first';
    unlike $p->{hashOnPage1} // '', qr/page=/, '  the first page needs none';
}
{
    my $k = $seen{'keyboard focus'} // {};
    is $k->{afterNext}, 'BUTTON next', 'Next by keyboard: the focus stays on it';
    is $k->{afterSort}, 'BUTTON name', 'a sort by keyboard: the focus stays on its column\'s button';
    like $k->{opener}, qr/^BUTTON Delete node/, '(a delete button focused)';
    is $k->{afterDialog}, $k->{opener}, 'a dialog closed by Escape: the focus goes back to the button that opened it';
}
is $seen{'nodes next page'}{names}[0], 'web101', '  from web101';
is $seen{'nodes previous page'}{names}[0], 'web001', 'Previous: back to the first';
my $d = $seen{'nodes sorted by name, descending'} // {};
is_deeply [ @{ $d->{names} // [] }[0, 1] ], ['web250', 'web249'], 'a click on the sorted column: descending';
is_deeply $d->{sort}, [['Node', 'descending']], '  marked so';
is_deeply [ $seen{'nodes sort after a reload'}{names}[0], $seen{'nodes sort after a reload'}{hash} ], ['web250', "#/o/$org/nodes?sort=-name"],
    '  kept in the address, over a reload';
my $f = $seen{'nodes filtered'} // {};
is $f->{caption}, '1–10 of 10 nodes', 'a filter by name: its total';
is_deeply [ sort @{ $f->{names} // [] } ], [ map { sprintf 'web01%d', $_ } 0 .. 9 ], '  the nodes whose name holds it';
my $g = $seen{'nodes of group dev'} // {};
is $g->{caption}, '1–50 of 50 nodes', 'a group chosen: its nodes';
is_deeply [ @{ $g->{first} // [] }[0, 2, 3] ], ['web005', 'dev', 'r-dev'], '  with the revision that group points at';

like $seen{'node page'} // '', qr/Node web007.*Policyweb.*Policy groupprod.*Revision its group points atr-prod.*Platformdebian 12\.7.*Address10\.1\.0\.7.*Last check-in10 min ago/s,
    "a node's page: what it runs and what its last run reported";
like $seen{'node delete asks'} // '', qr/Delete node web007\?/, '  delete asks first';
like $seen{'node delete says'} // '', qr/Node web007 deleted/, '  and says it is done';
my ($r) = $s->call('GET', "$base/nodes/web007");
is $r->{status}, 404, '  the API has it gone';

# ---- the policies and groups lists: one page asked of the server ----
$p = $seen{'policies list'} // {};
is $p->{caption}, '1–2 of 2 policies', 'policies: a page with the total';
is_deeply $p->{first}, ['db', '2', $p->{first}[2]], '  db: its 2 revisions';
is_deeply $seen{'policies by revisions, descending'}{names}, [qw(web db)], '  Revisions twice: the most first';
like $seen{'policies by revisions, descending'}{hash}, qr/sort=-revision_count/, '  kept in the address';
is_deeply [ @{ $seen{'policies filtered'} // {} }{qw(caption names)} ], ['1–1 of 1 policies', ['web']], '  filtered by name';
$p = $seen{'groups list'} // {};
is $p->{caption}, '1–3 of 3 groups', 'groups: a page with the total';
is_deeply $p->{first}, ['dev', '2', 'db → d-dev, web → r-dev'], '  dev: what it points at';
is_deeply $seen{'groups by policies'}{names}, [qw(qa dev prod)], '  sorted by their policies\' count';
is_deeply $seen{'groups filtered'}{names}, ['prod'], "  filtered by name ('*' any text)";
my @lists = @{ $seen{'lists asked'} // [] };
ok scalar(@lists) >= 6 && !grep({ !/[?&]page_size=100(&|$)/ } @lists), 'each list asked the API for one page of 100'
    or diag explain \@lists;
ok scalar(grep { /^policies\?.*sort=-revision_count/ } @lists), '  sorted by the server';
ok scalar(grep { /^policy_groups\?.*filter=name==p\*/ } @lists), '  filtered by the server';

# ---- the cluster ----
like $seen{'cluster edit says'} // '', qr/Saved: revision \S+/, 'a cluster edited: the page says so';
my ($r0, $c) = (undef, undef);
like $seen{'cluster delete asks'} // '', qr/Delete cluster c-edit-me\?.*stops working/s, 'delete asks first, saying what goes';
like $seen{'cluster delete says'} // '', qr/Cluster c-edit-me deleted/, '  and says it is done';
($r) = $s->call('GET', "$base/clusters/c-edit-me");
is $r->{status}, 404, '  the API has it gone';
my @ev = @{ $s->must('events', 'GET', "$base/events?last=50&kinds=cluster")->{events} };
is scalar(grep { $_->{name} eq 'c-edit-me' && $_->{op} eq 'put' } @ev), 2, '  (it was written twice: created, then edited)';

# ---- members and clients ----
like $seen{'member added says'} // '', qr/tb-user is a member with roles (reader, operator|operator, reader)\./, 'a member added: the page says so';
ok scalar(grep { /operator \(policy groups dev-\*\)/ } @{ $seen{'member row'} // [] }), '  and lists it with its roles and limit';
is_deeply $seen{'member edit prefills'}, { user => 'tb-user', operator => JSON::PP::true, groups => 'dev-*' }, '"Edit roles" fills the form with its roles';
like $seen{'member roles change asks'} // '', qr/Take operator away from tb-user\?.*keeps reader/s, 'a role taken away: it asks first';
like $seen{'member roles changed says'} // '', qr/roles reader\./, 'its roles changed: the page says what it holds now';
is_deeply $seen{'member row after the change'}, ['reader'], '  and lists it with that role only';
# each page's title names it (its heading) and the organization: tabs and history tell them apart
is $seen{titles}{node}, "Node web001 · $org · purser", "a page's title: its heading, the organization, purser";
is $seen{titles}{nodes}, "Nodes · $org · purser", '  a list\'s too';
is scalar(keys %{ { map { $_ => 1 } values %{ $seen{titles} // {} } } }), scalar(keys %{ $seen{titles} // {} }), '  each page its own';
# the form offers the roles of the RBAC policy: a member's release role is shown, and kept
is_deeply $seen{'member with release prefills'}, { release => JSON::PP::true, reader => JSON::PP::true },
    '"Edit roles" of a member with release ticks release (the roles are the policy\'s)';
like $seen{'member with release, operator added'} // '', qr/^tb-release is a member with roles /, '  adding operator takes nothing away (no question asked)';
{
    my ($m) = grep { $_->{user}{username} eq 'tb-release' } @{ $s->must('members', 'GET', "$base/users") };
    is_deeply [ sort @{ $m->{user}{roles} } ], [qw(operator release)], '  reader then taken away: the API has release and operator';
    is_deeply(($m->{user}{policy_groups} // {})->{release}, ['prod-eu'], '  and release still limited to prod-eu (the membership made again with it)');
}
like $seen{'member with release, reader taken away asks'} // '', qr/Take reader away from tb-release\?/, '  (taking reader away asked first)';
like $seen{'member remove asks'} // '', qr/Remove member tb-user\?/, 'remove asks first';
like $seen{'member remove says'} // '', qr/Member tb-user: removed/, '  and says it is done';
my $members = $s->must('members', 'GET', "$base/users");
ok !grep({ $_->{user}{username} eq 'tb-user' } @$members), '  the API has it gone';
my $member_events = [ grep { $_->{name} eq 'tb-user' } @{ $s->must('events', 'GET', "$base/events?last=50&kinds=member")->{events} } ];
is scalar(@$member_events), 4, '  (added; removed and added again, as a role was taken away; removed: four member events)';
like $seen{'client key'} // '', qr/^-----BEGIN (RSA )?PRIVATE KEY-----\n/, 'a client created: its private key shown once';
like $seen{'client delete asks'} // '', qr/Delete client tb-client\?/, '  delete asks first';
($r) = $s->call('GET', "$base/clients/tb-client");
is $r->{status}, 404, '  deleted: the API has it gone';

# ---- the token ----
my ($tid) = ($seen{'token made'}{label} // '') =~ /Token ([0-9a-f]+)/;
ok $tid, 'a token made with an expiry';
like $seen{'token made'}{says} // '', qr/Expires in 7 days/, '  the page says when it expires';
my ($tok) = grep { $_->{id} eq ($tid // '') } @{ $s->must('tokens', 'GET', '/users/admin/tokens') };
ok $tok && $tok->{expires_at}, '  the API has its expiry' or diag explain $tok;

like $seen{'token disabled says'} // '', qr/Token \Q$tid\E disabled/, 'a token disabled from the page: it says so';
($tok) = grep { $_->{id} eq ($tid // '') } @{ $s->must('tokens', 'GET', '/users/admin/tokens') };
ok $tok && !$tok->{active}, '  the API has it inactive' or diag explain $tok;
like $seen{'key delete asks'} // '', qr/Delete key default of tb-keyed\?/, "a client's key deleted after a confirmation";
like $seen{'key delete says'} // '', qr/Key default deleted/, '  the page says so';
is_deeply $s->must('keys', 'GET', "$base/clients/tb-keyed/keys"), [], '  the API has no key left';

# ---- events ----
my @asked = @{ $seen{'events asked'} // [] };
like $asked[0] // '', qr/^last=200(&|$)/, 'the events page asks for the newest 200 first';
ok !grep({ /since=0(&|$)/ } @asked), '  and never reads the log from its start';
my @links = @{ $seen{'events links'} // [] };
my $link_of = sub { my ($kind, $op, $name) = @_; my ($r) = grep { $_->[0] eq $kind && $_->[1] eq $op && $_->[3] =~ /^\Q$name\E\b/ } @links; $r ? $r->[2] : undef };
is $link_of->('cluster', 'delete', 'c-edit-me'), "#/o/$org/clusters", 'a delete event links to its object\'s list';
is $link_of->('cluster', 'put', 'c-edit-me'), '', '  the cluster\'s earlier events link nowhere: it was deleted since';
my ($made) = ($seen{'token made'}{label} // '') =~ /Token ([0-9a-f]+)/;
like $link_of->('token', 'put', $made // '?') // '', qr{#/o/\Q$org\E/tokens$}, '  a token event of the signed-in user to "My tokens"';
is_deeply $seen{'admin problems'}, [], 'no console error, no CSP violation';

# ---- comparisons and promote ----
my $cmp = $seen{'group compare'} // {};
like $cmp->{summary} // '', qr/attribute default_attributes\.port 80 → 8080/, 'a group comparison: each attribute path with its old and new value';
like $cmp->{summary} // '', qr/cookbook base 1\.0\.0 \(id-r-prod\) → 1\.1\.0 \(id-r-dev\)/, '  each cookbook from version (identifier) to version (identifier)';
ok !$cmp->{open}, '  collapsed by default';
ok $cmp->{promoteFirst}, '  promote above the comparison';
is_deeply $cmp->{choices}, ['db', 'web'], '  offering each policy that would change';
like $seen{'promote asks'} // '', qr/web: r-prod → r-dev/, 'promote of web alone asks, naming it';
unlike $seen{'promote asks'} // '', qr/db:/, '  and not db (unticked)';
like $seen{'promote says'} // '', qr/Promoted 1 policy from dev to prod:\s*web: r-prod → r-dev/, '  and reports what moved';
is ok_call('ptr', 'GET', "$base/policy_groups/prod/policies/web")->{revision_id}, 'r-dev', '  the API: web moved';
is ok_call('ptr', 'GET', "$base/policy_groups/prod/policies/db")->{revision_id}, 'd-prod', '  db did not';
like $seen{'revision delete asks'} // '', qr/Delete revision r-old of web\?.*No group points at it/s, 'a revision deleted after a confirmation';
like $seen{'revision delete says'} // '', qr/Revision r-old deleted/, '  the page says so';
my ($rr) = $s->call('GET', "$base/policies/web/revisions/r-old");
is $rr->{status}, 404, '  the API has it gone';
like $seen{'pointed revision delete asks'} // '', qr/Groups point at it \(dev, prod, qa\): they lose this policy/, 'a revision groups point at: the dialog says they lose it';
my ($rp) = $s->call('GET', "$base/policies/web/revisions/r-dev");
is $rp->{status}, 200, '  cancelled: nothing deleted';
like $seen{'pointer remove asks'} // '', qr/Remove db from dev\?/, 'a policy removed from a group after a confirmation';
like $seen{'pointer remove says'} // '', qr/db removed from dev/, '  the page says so';
($rp) = $s->call('GET', "$base/policy_groups/dev/policies/db");
is $rp->{status}, 404, '  the API has the pointer gone';
like $seen{'group delete asks'} // '', qr/Delete policy group qa\?.*Its 1 pointers go/s, 'a group deleted after a confirmation';
like $seen{'group delete says'} // '', qr/Policy group qa deleted/, '  the page says so';
($rp) = $s->call('GET', "$base/policy_groups/qa");
is $rp->{status}, 404, '  the API has it gone';
my $rc = $seen{'revision compare'} // {};
like $rc->{h1} // '', qr/web: r-prod → r-dev/, 'two revisions of a policy compared';
like $rc->{summary} // '', qr/attribute default_attributes\.tls\.enabled false → true/, '  the summary, open, with values';
is_deeply [ sort @{ $rc->{removed} // [] } ], ['    enabled: false', '    identifier: id-r-prod', '    version: 1.0.0', '  port: 80', 'revision_id: r-prod'],
    '  the locks as YAML: the lines removed' or diag explain $rc->{removed};
ok scalar(grep { $_ eq '  port: 8080' } @{ $rc->{added} // [] }), '  and added';
# ---- the revisions and a revision's documents: pages from the server ----
my $v = $seen{'revisions list'} // {};
is $v->{caption}, '1–3 of 3 revisions', 'revisions: a page with the total';
is_deeply $v->{ids}, [ $rev_c, $rev_b, $rev_a ], '  newest first';
is_deeply $seen{'revisions ascending'}{ids}, [ $rev_a, $rev_b, $rev_c ], '  Revision clicked: oldest first';
is_deeply $seen{'revisions by an old sort key'}{ids}, [ $rev_c, $rev_b, $rev_a ],
    '  an address with a sort no column offers (an old link\'s sort=created): the default order';
is $seen{'revisions by an old sort key'}{caption}, '1–3 of 3 revisions', '  not an error';
is_deeply $seen{'revisions by id from the address'}{ids}, [ $rev_a, $rev_b, $rev_c ], '  one a column offers is kept';
is_deeply $seen{'revisions filtered'}{ids}, [$rev_c], '  filtered by bucket: the one that holds many';
is $seen{'revision validations'}{status}, 'Status: succeeded', 'a revision shows its status (no ValidationPolicy: succeeded)';
is $seen{'revision validations'}{validations},
    'tb-check: failure, deckhand-policy-validation: success, deckhand-schema-validation: success, tb-lint: success',
    "  and every validation of it (Deckhand's own too), failures first";
is_deeply $seen{'revision validations'}{failed}, ['tb-check: failure'], '  the failure marked';
is $seen{'missing revision'}{title}, 'Revision 999999', 'a revision that is not there: its title';
is scalar(@{ $seen{'missing revision'}{errors} // [] }), 1, '  one error';
like(($seen{'missing revision'}{errors} // [])->[0] // '', qr/999999/, '  naming it');
ok !$seen{'missing revision'}{actions}, '  and no tag form, rollback or status';
ok !grep({ !/404|Not Found/i } @{ $seen{'missing revision problems'} // [] }), '  nothing on the console but its 404' or diag explain $seen{'missing revision problems'};
$v = $seen{'documents first page'} // {};
is $v->{caption}, '1–50 of 123 documents', "a revision's documents: the first page of 50, with the total";
is $v->{pager}, 'Page 1 of 3', '  page 1 of 3';
my $next = $seen{'documents next page'} // {};
is $next->{caption}, '51–100 of 123 documents', '  next: the second page';
is scalar @{ $next->{names} // [] }, 50, '  50 rows';
my %first = map { $_ => 1 } @{ $v->{names} // [] };
is scalar(grep { $first{$_} } @{ $next->{names} // [] }), 0, '  none of them on the first page';
is_deeply $seen{'documents previous page'}{names}, $v->{names}, '  previous: the first page again';
is_deeply [ @{ $seen{'documents by name, descending'}{names} // [] }[0 .. 2] ], ['layering-policy', 'doc-120', 'doc-119'], '  Name twice: sorted descending';
is $seen{'documents filtered'}{caption}, '1–10 of 10 documents', '  filtered by name: doc-110..119';
like $seen{'rendered first page'}{caption} // '', qr/^1–50 of 12\d documents$/, 'rendered: a page with the total';
like $seen{'rendered next page'}{caption} // '', qr/^51–100 of 12\d documents$/, '  and the next';
my @docs_asked = @{ $seen{'documents asked'} // [] };
my @doc_asks = grep { m{documents\?} } @docs_asked;
ok scalar(@doc_asks) >= 6 && !grep({ !/[?&]page_size=50(&|$)/ } @doc_asks), 'each documents page asked the API for one page of 50'
    or diag explain \@docs_asked;
ok scalar(grep { /sort=metadata\.name&order=desc/ } @doc_asks), '  sorted by the server';
ok scalar(grep { /filter=text==\*doc-11\*/ } @doc_asks), '  filtered by the server';
ok scalar(grep { m{^revisions/N/rendered-documents\?.*page_token=50} } @doc_asks), '  the rendered view too, page by page' or diag explain \@doc_asks;
my @rev_asks = grep { /^revisions\?/ } @docs_asked;
ok scalar(@rev_asks) >= 3 && !grep({ !/page_size=100/ } @rev_asks), 'the revisions page asked for pages of 100'
    or diag explain \@rev_asks;
ok scalar(grep { /filter=text==\*many\*/ } @rev_asks), '  filtered by the server';

my $dd = $seen{'document diff'} // {};
is_deeply $dd->{unified}, [['-', '  replicas: 1'], ['+', '  replicas: 3']], 'a document diff as YAML, unified: the line removed, then added';
like $dd->{heading} // '', qr/changed: example\/Kind\/v1 app/, '  under the document it is in';
is $dd->{folded}, 1, '  unchanged lines folded';
is_deeply $dd->{split}, [['  replicas: 1', '  replicas: 3']], 'side by side: old and new on one row';
like $dd->{hash} // '', qr/diff=split/, '  kept in the address';

# ---- tags and rollback ----
like $seen{'tag says'} // '', qr/Revision $rev_a tagged known-good/, 'a revision tagged: the page says so';
like $seen{'untag asks'} // '', qr/Delete tag scratch of revision $rev_a\?/, 'a tag deleted after a confirmation';
like $seen{'untag says'} // '', qr/Tag scratch deleted/, '  and says so';
my $tags = $s->yaml_call('GET', "$base/api/v1.0/revisions/$rev_a/tags");
is_deeply [ sort map { ref $_ ? $_->{tag} // $_->{name} : $_ } (ref $tags eq 'HASH' ? keys %$tags : @$tags) ], ['known-good'], '  the API: known-good, not scratch' or diag explain $tags;
like $seen{'rollback asks'} // '', qr/Roll back to revision $rev_a\?/, 'rollback asks first';
my ($new_rev) = ($seen{'rollback says'} // '') =~ /revision (\d+) has the documents of revision $rev_a/;
ok $new_rev && $new_rev > $rev_b, "  and names the new revision ($new_rev)";
my $app = sub { my ($rev) = @_; (grep { $_->{metadata}{name} eq 'app' } @{ $s->yaml_call('GET', "$base/api/v1.0/revisions/$rev/documents") })[0]{data} };
is_deeply $app->($new_rev), $app->($rev_a), '  the API: it has the documents of the revision rolled back to';

# ---- a reader: encrypted documents seen, not read; no action offered ----
my $rd = $seen{'reader'} // {};
is_deeply $rd->{encrypted}, ['db-password'], 'a reader sees the encrypted document listed, marked';
is $rd->{reveal}, 0, '  with no Reveal';
like $rd->{cell} // '', qr/hidden/, '  its value hidden';
ok !$rd->{leak}, '  the value nowhere in the page';
is_deeply $rd->{controls}, {}, '  and no write control on any page' or diag explain $rd->{controls};
is_deeply $seen{'reader problems'}, [], '  (no console error)';

# ---- a phone ----
my $ph = $seen{'phone nodes'} // {};
is $ph->{tdDisplay}, 'block', 'at 390 px: rows are cards';
is $ph->{label}, '"Node"', '  each value beside its column\'s name';
ok !$ph->{navShown}, '  the menu folded';
is $ph->{narrow}, 0, '  no cell of text narrower than 48 px (nothing wraps letter by letter)';
is $ph->{overflow}, 0, '  nothing scrolls sideways';
is_deeply $seen{'phone menu opened'}, { shown => JSON::PP::true, expanded => 'true' }, 'the menu button opens it';
is_deeply $seen{'phone menu after a choice'}, { hash => "#/o/$org/clusters", shown => JSON::PP::false }, '  a choice goes there and folds it';
is_deeply $seen{'phone menu after Escape'}, { shown => JSON::PP::false, expanded => 'false', focus => 'menu-toggle' }, '  Escape folds it, the focus back on its button';
is_deeply $seen{'phone problems'}, [], '  (no console error)';
ok -s "$out/$_.png", "screenshot $_" for qw(nodes node phone-nodes group-compare revision-compare document-diff);

$s->stop;
done_testing;

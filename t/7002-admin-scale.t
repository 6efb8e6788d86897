#!/usr/bin/perl
# 7002: the admin pages with big lists (issue 14, item 7; issue 38 item 2): the policies page of
# 5,000 policies (sorted by latest upload, filtered by name), the policy groups page of 100,004
# groups (sorted by their policies' count, filtered by name), the documents page of the
# 4,000-document bench site (bench/site-bundle), the document revisions page of 100,001 revisions
# and the nodes page of 100,000 nodes (sorted, by
# group, filtered by name) show their first page of rows with the total, and the rest on asking,
# without freezing. The browser's load times are printed (diag) for the closing note, not
# asserted: this machine's speed varies.
use strict;
use warnings;
use utf8;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use POSIX ();
use File::Path qw(make_path);
use PurserStack;

my $s = PurserStack->new(workers => 4, max_body => 67108864);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org";

# 5,000 policies, one revision each, from 4 writers
my @kids;
for my $w (0 .. 3) {
    my $pid = fork // die;
    if (!$pid) {
        my $bad = 0;
        for my $i (grep { $_ % 4 == $w } 1 .. 5000) {
            my ($r) = $s->call('POST', "$base/policies/p$i/revisions",
                { revision_id => sprintf('%040x', $i), name => "p$i", run_list => ['recipe[a::default]'],
                  cookbook_locks => { a => { version => '1.0.0', identifier => "i$i" } } });
            $bad++ unless $r->{status} == 201;
        }
        POSIX::_exit($bad ? 1 : 0);
    }
    push @kids, $pid;
}
my $failed = 0;
for (@kids) { waitpid $_, 0; $failed++ if $? }
is $failed, 0, '5,000 policies uploaded';

my $bundle = `'${\ PurserStack::root()}/bench/site-bundle' 4000 1`;
my $r = $s->request('PUT', "$base/api/v1.0/buckets/site/documents", { headers => {
    authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN'), 'content-type' => 'application/x-yaml' }, content => $bundle });
is $r->{status}, 200, 'the 4,000-document bench site written';
my ($rev) = $r->{content} =~ /revision: (\d+)/;
# 100,000 more document revisions (straight into the table), each holding the site
$s->sql("INSERT INTO doc_revisions (org_id, id, created_at, created_by, buckets) SELECT o.id, $rev + n.seq,"
    . " UTC_TIMESTAMP(6), 'bench', '[\"site\"]' FROM seq_1_to_100000 n JOIN organizations o ON o.name = '$org'");

# 100,000 nodes (written straight into the table: a node's API write is measured elsewhere),
# each with a Chef node's automatic attributes, spread over 4 groups
$s->must('lock', 'PUT', "$base/policy_groups/g$_/policies/p1", { revision_id => sprintf('%040x', 1), name => 'p1',
    run_list => ['recipe[a::default]'], cookbook_locks => { a => { version => '1.0.0', identifier => 'i1' } } }) for 0 .. 3;
$s->sql("INSERT INTO nodes (org_id, name, policy_name, policy_group, body)"
    . " SELECT o.id, CONCAT('node-', LPAD(n.seq, 6, '0')), 'p1', CONCAT('g', n.seq % 4),"
    . " JSON_OBJECT('name', CONCAT('node-', LPAD(n.seq, 6, '0')), 'chef_type', 'node', 'json_class', 'Chef::Node',"
    . " 'policy_name', 'p1', 'policy_group', CONCAT('g', n.seq % 4), 'run_list', JSON_ARRAY(), 'normal', JSON_OBJECT(),"
    . " 'default', JSON_OBJECT(), 'override', JSON_OBJECT(), 'automatic', JSON_OBJECT('platform', 'debian',"
    . " 'platform_version', '12', 'ipaddress', CONCAT('10.', n.seq DIV 65536, '.', (n.seq DIV 256) % 256, '.', n.seq % 256),"
    . " 'fqdn', CONCAT('node-', n.seq, '.example.com'), 'ohai_time', 1764000000 + n.seq, 'packages', JSON_OBJECT('openssl', '3.0.15')))"
    . " FROM seq_1_to_100000 n JOIN organizations o ON o.name = '$org'");
# 100,000 policy groups (straight into the table), each pointing web p1 at its revision
$s->sql("INSERT INTO policy_groups (org_id, name) SELECT o.id, CONCAT('grp-', LPAD(n.seq, 6, '0'))"
    . " FROM seq_1_to_100000 n JOIN organizations o ON o.name = '$org'");
$s->sql("INSERT INTO policy_group_pointers (group_id, policy_id, revision_pk, updated_by)"
    . " SELECT g.id, p.id, r.id, 'admin' FROM policy_groups g JOIN organizations o ON o.id = g.org_id AND o.name = '$org'"
    . " JOIN policies p ON p.org_id = o.id AND p.name = 'p1' JOIN policy_revisions r ON r.policy_id = p.id"
    . " WHERE g.name LIKE 'grp-%' AND MOD(SUBSTRING(g.name, 5), 10) = 0");
is $s->must('groups', 'GET', "$base/policy_groups?page_size=1")->{total}, 100004, '100,004 policy groups';
my $nodes = $s->must('nodes', 'GET', "$base/nodes?page_size=1");
is $nodes->{total}, 100000, '100,000 nodes';

my $out = PurserStack::build() . '/test-output/7002-admin-scale';
make_path($out);
my %seen = PurserStack::browser_run('admin', { url => $s->url, org => $org, admin => $s->env('PURSER_ADMIN_TOKEN'), out => $out,
    measure => [ [ 'policies', "/o/$org/policies" ], [ 'documents', "/o/$org/documents/$rev" ], [ 'revisions', "/o/$org/documents" ], [ 'nodes', "/o/$org/nodes" ],
                 [ 'nodes by last check-in', "/o/$org/nodes?sort=-updated_at" ], [ 'nodes of a group', "/o/$org/nodes?group=g2" ],
                 [ 'nodes by name', "/o/$org/nodes?q=node-09" ], [ 'policies by latest upload', "/o/$org/policies?sort=-latest_at" ],
                 [ 'policies by name', "/o/$org/policies?q=p12" ], [ 'groups', "/o/$org/groups" ],
                 [ 'groups by policies', "/o/$org/groups?sort=-policy_count" ], [ 'groups by name', "/o/$org/groups?q=grp-0999" ],
                 [ 'a policy', "/o/$org/policies/p1" ], [ 'a group', "/o/$org/groups/g2?from=g1" ] ],
    group_search => [ "/o/$org/groups/g2?from=g1", 'grp-09999' ] });
ok !exists $seen{'driver error'}, 'the browser measured every page' or diag $seen{'driver error'};
my $p = $seen{'load policies'} // {};
is $p->{rows}, 100, 'the policies page shows its first 100 rows';
like $p->{caption} // '', qr/^1–100 of 5000 policies/, '  of 5,000';
is $seen{'load policies by latest upload'}{rows}, 100, '  by latest upload: 100 rows';
like $seen{'load policies by name'}{caption} // '', qr/^1–100 of 111 policies/, '  a name filter: its 111';
like $seen{'load groups'}{caption} // '', qr/^1–100 of 100004 groups/, 'the groups page: its first 100 of 100,004';
like $seen{'load groups by policies'}{caption} // '', qr/^1–100 of 100004 groups/, '  by their policies\' count';
like $seen{'load groups by name'}{caption} // '', qr/^1–100 of 100 groups/, '  a name filter: its 100';
# a policy's page and a group's page read what they show, not the 100,004 groups' pointers
cmp_ok $seen{'load a policy'}{rows} // 0, '>=', 1, 'a policy\'s page shows its revisions';
cmp_ok $seen{'load a group'}{rows} // 0, '>=', 1, 'a group\'s page shows its pointers';
my $gs = $seen{'group search'} // {};
is $gs->{before}, 199, '  its "Compare with" list holds the first page of 200 groups by name less itself, not 100,004';
is_deeply $gs->{after}, [ 'g1', map { sprintf 'grp-%06d', $_ } 99990 .. 99999 ],
    '  a search by name fills it with the groups found (the one chosen kept first)';
my $d = $seen{'load documents'} // {};
is $d->{rows}, 50, 'the documents page shows its first 50 documents';
like $d->{caption} // '', qr/^1–50 of 4001 documents/, '  of 4,001';
my $v = $seen{'load revisions'} // {};
is $v->{rows}, 100, 'the document revisions page shows its first 100 revisions';
like $v->{caption} // '', qr/^1–100 of 100001 revisions/, '  of 100,001';
my $n = $seen{'load nodes'} // {};
is $n->{rows}, 100, 'the nodes page shows its first 100 rows';
like $n->{caption} // '', qr/^1–100 of 100000 nodes/, '  of 100,000, with the total';
like $seen{'load nodes of a group'}{caption} // '', qr/^1–100 of 25000 nodes/, '  a group: its 25,000';
like $seen{'load nodes by name'}{caption} // '', qr/^1–100 of 10000 nodes/, '  a name filter: its 10,000';
is $seen{'load nodes by last check-in'}{rows}, 100, '  by last check-in: 100 rows';
diag sprintf 'first page on screen (ms, 3 loads each): policies of 5,000: %s; by latest upload: %s; ' .
    'filtered by name (111): %s; documents of 4,001: %s; revisions of 100,001: %s; nodes of 100,000: %s; by last check-in: %s; ' .
    'of a group (25,000): %s; filtered by name (10,000): %s; groups of 100,004: %s; by policies: %s; ' .
    'filtered by name (100): %s; a policy: %s; a group, compared with another: %s',
    map { join(' ', @{ ($seen{"load $_"} // {})->{times} // [] }) } 'policies', 'policies by latest upload',
    'policies by name', 'documents', 'revisions', 'nodes', 'nodes by last check-in', 'nodes of a group', 'nodes by name',
    'groups', 'groups by policies', 'groups by name', 'a policy', 'a group';
is_deeply $seen{'measure problems'}, [], 'no console error';

$s->stop;
done_testing;

#!/usr/bin/perl
# 9012: purserctl's commands beyond the resource verbs (client/apply.c, verbs.c, stream.c and
# cookbook.c), one subtest each, end to end against a private stack: apply, diff, promote,
# render, rollback, tag, validation and facts reports, reset-token, bootstrap, git, token, watch
# (also across nginx going away and back: no event lost or shown twice), export, import,
# cookbook upload and download, health, version, api, clusters by their dynamic facts, policy
# revisions and collect. A subtest is skipped while its command still answers "not built
# yet" (a stub). t/9010 holds the command table, contexts and the resource verbs; both share
# t/lib/purserctl-common.pl.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
use Digest::MD5 qw(md5_hex);
use IO::Socket::INET;
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);
use YAML::XS ();
use PurserStack;

our ($tmp, $config, $purserctl, $examples, $s, $org, $url, $ca, $admin_token, $admin_key,
     $stack_env, $json, $ORG, $DOCS, $closed_port, $site_v1, $site_v2, $lock_v1, $lock_v2, $facts,
     $rev1, %last);
BEGIN { require 'purserctl-common.pl' } # the stack, running purserctl, the API's answers
purserctl_setup();

# the contexts the commands use: chef (the admin's key), local (the token, current)
ctl_ok('login', '--from', $stack_env, '--chef', '--name', 'chef');
ctl_ok('login', '--from', $stack_env);
# a user who is no member of any organization, and another organization with a cluster
$s->must('user', 'POST', '/users', { username => 'ctl-nobody' });
my $nobody_token = $s->must('token', 'POST', '/users/ctl-nobody/tokens', { description => 'purserctl tests' })->{token};
$s->must('org', 'POST', '/organizations', { name => 'ctl-other' });
$s->must('cluster', 'POST', '/organizations/ctl-other/clusters', { metadata => { name => 'elsewhere' }, spec => {} });
seed_state();
my ($code, $out, $err);

############################################################################################
# 7. The commands of client/apply.c, verbs.c, stream.c and cookbook.c (skipped while stubs)
############################################################################################
subtest 'apply' => sub {
    my ($code, $out, $err) = guard('apply', 'apply', '-f', "$examples/site/site-v2.yaml", '--bucket', 'site');
    exit_is($code, 0, 'apply -f site-v2.yaml --bucket site: exit 0');
    my $rev = newest_revision();
    ok $rev > $rev1, "  a new revision: $rev";
    my ($oam) = grep { $_->{metadata}{name} eq 'oam-network' } @{ api_data("$DOCS/revisions/$rev/documents") // [] };
    is $oam && $oam->{data}{gateway}, '10.20.0.254', '  holding the changed document';
    ($code, $out, $err) = ctl('apply', '-f', "$examples/site/site-v2.yaml", '--bucket', 'site');
    exit_is($code, 0, 'the same again: exit 0');
    like $out . $err, qr/unchanged/, '  said to be unchanged';
    is newest_revision(), $rev, '  and no new revision';

    ($code, $out, $err) = ctl('apply', '-f', "$examples/policies/base.lock.json", '--policy-group', 'ctl-apply');
    exit_is($code, 0, 'apply -f base.lock.json --policy-group ctl-apply: exit 0');
    is api_data("$ORG/policy_groups/ctl-apply/policies/base")->{revision_id}, $lock_v1->{revision_id}, '  the group serves the lock';
    ($code, $out, $err) = ctl('apply', '-f', "$examples/policies/base.lock.json", '--policy-group', 'ctl-apply');
    exit_is($code, 0, '  again: exit 0');
    like $out . $err, qr/unchanged/, '  unchanged';
    ($code, $out, $err) = ctl('apply', '-f', "$examples/policies/base-v2.lock.json", '--policy-group', 'ctl-apply');
    exit_is($code, 0, 'apply -f base-v2.lock.json --policy-group ctl-apply: exit 0');
    is api_data("$ORG/policy_groups/ctl-apply/policies/base")->{revision_id}, $lock_v2->{revision_id}, '  the group serves v2';

    ($code, $out, $err) = ctl('apply', '-f', "$examples/cluster.yaml");
    exit_is($code, 0, 'apply -f cluster.yaml (c-edge-1 exists, changed since): exit 0');
    my $c = api_data("$ORG/clusters/c-edge-1");
    is $c->{spec}{display_name}, 'Edge 1 (Lisbon lab)', '  the file\'s spec is back';
    my $revision = cluster_revision('c-edge-1');
    ($code, $out, $err) = ctl('apply', '-f', "$examples/cluster.yaml");
    exit_is($code, 0, '  again: exit 0');
    like $out . $err, qr/unchanged/, '  unchanged';
    is cluster_revision('c-edge-1'), $revision, '  and not written (the same revision)';

    my $broken = write_file('broken-site.yaml', "---\nschema: [\n");
    ($code, $out, $err) = ctl('apply', '-f', $broken, '--bucket', 'site');
    exit_is($code, 7, 'apply a file that does not parse: exit 7');

    # an organization: created (its validator's key once, on stderr), then unchanged, then updated
    my $org_doc = sub { write_file('apply-org.yaml', "kind: Organization\nversion: v1\nmetadata:\n"
        . "  name: ctl-apply-org\n  labels: {team: ctl}\nspec:\n  full_name: $_[0]\n") };
    ($code, $out, $err) = ctl('apply', '-f', $org_doc->('Apply Org'));
    exit_is($code, 0, 'apply -f an Organization: exit 0');
    like $out, qr/organization ctl-apply-org: created/, '  created';
    like $err, qr/validator.*shown this once:\n-----BEGIN RSA PRIVATE KEY/s, '  its validator\'s key on stderr, once';
    my $o = api_data('/organizations/ctl-apply-org');
    is $o && $o->{full_name}, 'Apply Org', '  the API has it, with its full name';
    is_deeply $o && $o->{labels}, { team => 'ctl' }, '  and its labels';
    ($code, $out, $err) = ctl('apply', '-f', $org_doc->('Apply Org'));
    exit_is($code, 0, '  again: exit 0');
    like $out, qr/organization ctl-apply-org: unchanged/, '  unchanged';
    unlike $err, qr/PRIVATE KEY/, '  and no key this time';
    ($code, $out, $err) = ctl('apply', '-f', $org_doc->('Apply Org, renamed'));
    exit_is($code, 0, '  with another full name: exit 0');
    like $out, qr/organization ctl-apply-org: configured/, '  configured';
    is api_data('/organizations/ctl-apply-org')->{full_name}, 'Apply Org, renamed', '  the API has the new name';
    api('DELETE', '/organizations/ctl-apply-org?force=true');

    # a member: its roles granted, a limit given, unchanged when held, and a role it holds beyond
    # the file's is said (POST adds roles to a member, never takes one away)
    $s->must('user', 'POST', '/users', { username => 'ctl-apply-user', email => 'apply@example.com', create_key => JSON::PP::false });
    my $member = sub { write_file('apply-member.yaml', "kind: Member\nversion: v1\nmetadata:\n"
        . "  name: ctl-apply-user\nspec:\n$_[0]") };
    ($code, $out, $err) = ctl('apply', '-f', $member->("  roles: [reader]\n"));
    exit_is($code, 0, 'apply -f a Member: exit 0');
    like $out, qr/member ctl-apply-user: created/, '  created';
    ok is_member('ctl-apply-user'), '  a member';
    ($code, $out, $err) = ctl('apply', '-f', $member->("  roles: [reader]\n"));
    like $out, qr/member ctl-apply-user: unchanged/, '  again: unchanged';
    my $limited = "  roles: [release, reader]\n  policy_groups: {release: [ctl-dev, 'stage-*']}\n";
    ($code, $out, $err) = ctl('apply', '-f', $member->($limited));
    exit_is($code, 0, '  another role, limited: exit 0');
    like $out, qr/member ctl-apply-user: configured/, '  configured';
    my ($m) = grep { $_->{user}{username} eq 'ctl-apply-user' } @{ api_data("$ORG/users") // [] };
    is_deeply $m && $m->{user}{policy_groups}, { release => ['ctl-dev', 'stage-*'] }, '  the API has the limit';
    ($code, $out, $err) = ctl('apply', '-f', $member->($limited));
    like $out, qr/member ctl-apply-user: unchanged/, '  again: unchanged';
    ($code, $out, $err) = ctl('apply', '-f', $member->("  roles: [reader]\n"));
    exit_is($code, 0, '  the first file again: exit 0');
    like $out, qr/member ctl-apply-user: unchanged/, '  unchanged';
    like $err, qr/also holds release/, '  saying the role it holds beyond the file';
    ($code, $out, $err) = ctl('apply', '-f', $member->("  roles: reader\n"));
    exit_is($code, 7, '  roles that are not a list: exit 7');
    like $err, qr/document 1 \(Member ctl-apply-user\): spec\.roles: a list/, '  naming the document and what is wrong';

    # what a resource document lacks, said as kubectl says it of apiVersion: the document, what
    # is missing, what to write (issue 50)
    ($code, $out, $err) = ctl('apply', '-f', write_file('apply-noversion.yaml', "kind: Cluster\nmetadata: {name: c-x}\n"));
    exit_is($code, 7, 'apply a document without version: exit 7');
    like $err, qr/document 1 \(Cluster c-x\): no "version"; add "version: v1"/, '  naming it, what is missing and what to write';
    ($code, $out, $err) = ctl('apply', '-f', write_file('apply-v2.yaml', "kind: Cluster\nversion: v2\nmetadata: {name: c-x}\n"));
    like $err, qr/document 1 \(Cluster c-x\): "version" is not v1; write "version: v1"/, '  another version: what to write';
    ($code, $out, $err) = ctl('apply', '-f', write_file('apply-noname.yaml', "kind: Node\nversion: v1\nmetadata: {}\n"));
    like $err, qr/document 1 \(Node\): no "metadata\.name"/, '  no name: the kind alone';

    # a kind apply does not know: the whole file refused before anything is sent
    ($code, $out, $err) = ctl('apply', '-f', write_file('apply-client.yaml',
        "kind: Organization\nversion: v1\nmetadata: {name: ctl-apply-never}\n---\n"
        . "kind: Client\nversion: v1\nmetadata: {name: ctl-x}\n"));
    exit_is($code, 7, 'apply a Client: exit 7');
    like $err, qr/document 2: kind Client .*Organization, Member, Cluster, Node/, '  naming the kinds it knows';
    is api_status('GET', '/organizations/ctl-apply-never'), 404, '  and the document before it not applied';
};

subtest 'diff' => sub {
    # the state, through the API: bucket site holds site.yaml (revision A), then site-v2 (B)
    $s->yaml_call('PUT', "$DOCS/buckets/site/documents", $site_v1);
    my $a = newest_revision();
    $s->yaml_call('PUT', "$DOCS/buckets/site/documents", $site_v2);
    my $b = newest_revision();
    my ($code, $out, $err) = guard('diff', 'diff', $a, $b);
    exit_is($code, 1, "diff $a $b (one document changed): exit 1");
    like $out, qr/oam-network|modified|changed/, '  saying what';
    ($code, $out, $err) = ctl('diff', $a, $a);
    exit_is($code, 0, "diff $a $a: exit 0");
    ($code, $out, $err) = ctl('diff', $a, $b, '--deep');
    exit_is($code, 1, "diff $a $b --deep: exit 1");
    like $out, qr/gateway|10\.20\.0\.254/, '  the rendered difference';
    like $out, qr/^\s+data\.gateway: "10\.20\.0\.1" -> "10\.20\.0\.254"$/m, '  its path as people read it (data.gateway)';
    unlike $out, qr/\['/, '  not deepdiff\'s (root[\'gateway\'])';
    ($code, $out, $err) = ctl('diff', '-f', "$examples/site/site-v2.yaml", '--bucket', 'site');
    exit_is($code, 0, 'diff -f site-v2.yaml --bucket site (what the server has): exit 0');
    ($code, $out, $err) = ctl('diff', '-f', "$examples/site/site.yaml", '--bucket', 'site');
    exit_is($code, 1, 'diff -f site.yaml --bucket site: exit 1');
    like $out, qr/gateway|oam-network/, '  saying what differs';
    $s->must('lock', 'PUT', "$ORG/policy_groups/ctl-da/policies/base", $lock_v1);
    $s->must('lock', 'PUT', "$ORG/policy_groups/ctl-db/policies/base", $lock_v1);
    $s->must('lock', 'PUT', "$ORG/policy_groups/ctl-dc/policies/base", $lock_v2);
    ($code, $out, $err) = ctl('diff', '--groups', 'ctl-da', 'ctl-db');
    exit_is($code, 0, 'diff --groups of two groups at the same lock: exit 0');
    ($code, $out, $err) = ctl('diff', '--groups', 'ctl-da', 'ctl-dc');
    exit_is($code, 1, 'diff --groups of groups at two locks: exit 1');
    like $out, qr/base/, '  naming the policy';
    ($code, $out, $err) = ctl('diff', $a, 999999);
    exit_is($code, 3, 'diff with a revision that does not exist: exit 3');

    # Policyfile locks: against --policy-group's, else the uploaded revision of its revision_id
    ($code, $out, $err) = ctl('diff', '-f', "$examples/policies/base.lock.json", '--policy-group', 'ctl-da');
    exit_is($code, 0, 'diff -f base.lock.json --policy-group ctl-da (the group\'s lock): exit 0');
    ($code, $out, $err) = ctl('diff', '-f', "$examples/policies/base-v2.lock.json", '--policy-group', 'ctl-da');
    exit_is($code, 1, 'diff -f base-v2.lock.json --policy-group ctl-da: exit 1');
    like $out, qr{^--- server/policy_group/ctl-da/base$}m, '  against the group\'s lock';
    like $out, qr/^-\s+version: 1\.0\.0$/m, '  the cookbook\'s version it has';
    like $out, qr/^\+\s+version: 1\.1\.0$/m, '  and the file\'s';
    ($code, $out, $err) = ctl('diff', '-f', "$examples/policies/base.lock.json");
    exit_is($code, 0, 'diff -f base.lock.json (its revision uploaded): exit 0');
    my $unknown = write_file('unknown.lock.json', $json->encode({ %$lock_v1, revision_id => 'f' x 64 }));
    ($code, $out, $err) = ctl('diff', '-f', $unknown);
    exit_is($code, 1, 'diff -f a lock whose revision is not uploaded: exit 1');
    like $out, qr{^--- server/policy/base/ffffffffff$}m, '  against nothing';
    like $out, qr/^\+revision_id: f{64}$/m, '  all of it added';

    # a node: the file's fields against the server's
    $s->must('node', 'POST', "$ORG/nodes", { name => 'ctl-diff-node', run_list => ['recipe[hello]'], normal => { tier => 'web' } });
    my $node = sub { write_file('diff-node.yaml', "kind: Node\nversion: v1\nmetadata: {name: ctl-diff-node}\n"
        . "spec:\n  run_list: ['recipe[hello]']\n  normal: {tier: $_[0]}\n") };
    ($code, $out, $err) = ctl('diff', '-f', $node->('web'));
    exit_is($code, 0, 'diff -f a Node as the server has it: exit 0');
    ($code, $out, $err) = ctl('diff', '-f', $node->('db'));
    exit_is($code, 1, 'diff -f a Node with another attribute: exit 1');
    like $out, qr{^--- server/node/ctl-diff-node\n.*^-  tier: web\n.*^\+  tier: db$}ms, '  saying what';
    ($code, $out, $err) = ctl('--verbose', 'diff', '-f', $node->('db'));
    like $err, qr{GET \S+/organizations/\Q$org\E/nodes/ctl-diff-node -> 200}, '  read with GET .../nodes/{node}';
};

subtest 'promote' => sub {
    $s->must('lock', 'PUT', "$ORG/policy_groups/ctl-pa/policies/base", $lock_v1);
    $s->must('lock', 'PUT', "$ORG/policy_groups/ctl-pb/policies/base", $lock_v2);
    my ($code, $out, $err) = guard('promote', 'promote', '--from', 'ctl-pa', '--to', 'ctl-pb', 'base');
    exit_is($code, 0, 'promote --from ctl-pa --to ctl-pb base: exit 0');
    is api_data("$ORG/policy_groups/ctl-pb/policies/base")->{revision_id}, $lock_v1->{revision_id}, '  ctl-pb serves what ctl-pa does';
    ($code, $out, $err) = ctl('promote', '--to', 'ctl-pb', 'base', '--revision', $lock_v2->{revision_id});
    exit_is($code, 0, 'promote --to ctl-pb base --revision V2: exit 0');
    is api_data("$ORG/policy_groups/ctl-pb/policies/base")->{revision_id}, $lock_v2->{revision_id}, '  ctl-pb serves v2';
    ($code, $out, $err) = ctl('promote', '--from', 'ctl-nosuch', '--to', 'ctl-pb');
    exit_is($code, 3, 'promote from a group that does not exist: exit 3');
    is api_data("$ORG/policy_groups/ctl-pb/policies/base")->{revision_id}, $lock_v2->{revision_id}, '  ctl-pb unchanged';
    ($code, $out, $err) = ctl('promote', '--to', 'ctl-pb');
    exit_is($code, 2, 'promote without --from or --revision: exit 2');
};

subtest 'render' => sub {
    my ($code, $out, $err) = guard('render', 'render', $rev1, '-o', 'json');
    exit_is($code, 0, "render $rev1 -o json: exit 0");
    is_deeply eval { $json->decode($out) }, api_data("$DOCS/revisions/$rev1/rendered-documents"),
        '  the rendered documents, as the API renders them';
    ($code, $out, $err) = ctl('render', $rev1, '--schema', 'example/Network/v1', '-o', 'yaml');
    exit_is($code, 0, "render $rev1 --schema example/Network/v1 -o yaml: exit 0");
    my $docs = yaml_load($out);
    is_deeply $docs, api_data("$DOCS/revisions/$rev1/rendered-documents?schema=example/Network/v1"), '  the same, as YAML';
    my ($service) = grep { $_->{metadata}{name} eq 'inventory-db' } @{ api_data("$DOCS/revisions/$rev1/rendered-documents") // [] };
    like $service->{data}{url}, qr/not-a-real-password/, '  (substituted: the secret is in the URL)';
    ($code, $out, $err) = ctl('render');
    exit_is($code, 0, 'render (the newest revision): exit 0');
    ok yaml_load($out) && @{ yaml_load($out) }, '  YAML documents';
    ($code, $out, $err) = ctl('render', 999999);
    exit_is($code, 3, 'render a revision that does not exist: exit 3');
};

subtest 'rollback' => sub {
    my $before = newest_revision();
    my ($code, $out, $err) = guard('rollback', 'rollback', $rev1);
    exit_is($code, 0, "rollback $rev1: exit 0");
    my $now = newest_revision();
    ok $now > $before, "  a new revision: $now";
    like $out, qr/\b$now\b/, '  named in the output';
    my $docs = sub { [ sort map { "$_->{schema} $_->{metadata}{name} " . $json->encode($_->{data}) } @{ api_data("$DOCS/revisions/$_[0]/documents") // [] } ] };
    is_deeply $docs->($now), $docs->($rev1), "  with the documents of revision $rev1";
    ($code, $out, $err) = ctl('rollback', 999999);
    exit_is($code, 3, 'rollback to a revision that does not exist: exit 3');
};

subtest 'tag' => sub {
    my ($code, $out, $err) = guard('tag', 'tag', $rev1, 'ctl-released');
    exit_is($code, 0, "tag $rev1 ctl-released: exit 0");
    is api_status('GET', "$DOCS/revisions/$rev1/tags/ctl-released"), 200, '  the API has the tag';
    my $data = write_file('tag.yaml', "approved_by: ops\n");
    ($code, $out, $err) = ctl('tag', $rev1, 'ctl-approved', '-f', $data);
    exit_is($code, 0, "tag $rev1 ctl-approved -f tag.yaml: exit 0");
    is_deeply api_data("$DOCS/revisions/$rev1/tags/ctl-approved"), { 'ctl-approved' => { approved_by => 'ops' } }, '  with its data';
    ($code, $out, $err) = ctl('tag', 999999, 'x');
    exit_is($code, 3, 'tag a revision that does not exist: exit 3');
    ($code, $out, $err) = ctl('tag', $rev1);
    exit_is($code, 2, 'tag without a TAG: exit 2');
};

subtest 'validation report' => sub {
    my ($code, $out, $err) = guard('validation', 'validation', 'report', $rev1, 'ctl-check', '--status', 'success');
    exit_is($code, 0, "validation report $rev1 ctl-check --status success: exit 0");
    my ($v) = grep { $_->{name} eq 'ctl-check' } @{ api_data("$DOCS/revisions/$rev1/validations")->{results} // [] };
    is $v && $v->{status}, 'success', '  the API has it';
    my $errors = write_file('errors.yaml', "- message: the gateway is not in the CIDR\n  name: oam-network\n  schema: example/Network/v1\n  path: .gateway\n  layer: site\n  error_section: {}\n  validation_schema: {}\n  schema_path: .\n");
    ($code, $out, $err) = ctl('validation', 'report', $rev1, 'ctl-failed', '--status', 'failure', '-f', $errors);
    exit_is($code, 0, "validation report ... --status failure -f errors.yaml: exit 0");
    ($v) = grep { $_->{name} eq 'ctl-failed' } @{ api_data("$DOCS/revisions/$rev1/validations")->{results} // [] };
    is $v && $v->{status}, 'failure', '  the API has the failure';
};

subtest 'facts report' => sub {
    my $versions = scalar @{ api_data("$ORG/clusters/c-edge-1/facts/history")->{items} // [] };
    my ($code, $out, $err) = guard('facts', 'facts', 'report', 'c-edge-1', '-f', "$examples/facts.json");
    exit_is($code, 0, 'facts report c-edge-1 -f examples/facts.json: exit 0');
    is_deeply api_data("$ORG/clusters/c-edge-1")->{status}{dynamic_facts}, $facts, '  the cluster\'s dynamic facts are the file\'s';
    is scalar @{ api_data("$ORG/clusters/c-edge-1/facts/history")->{items} // [] }, $versions + 1, '  kept as a version';
    ($code, $out, $err) = ctl('facts', 'report', 'c-nope', '-f', "$examples/facts.json");
    exit_is($code, 3, 'facts report for a cluster that does not exist: exit 3');
    ($code, $out, $err) = ctl('facts', 'report', 'c-edge-1', '-f', "$tmp/missing.json");
    exit_is($code, 7, 'facts report -f a missing file: exit 7');
};

subtest 'reset-token' => sub {
    my $old = $s->must('token', 'POST', "$ORG/clusters/c-edge-1/bootstrap-token")->{bootstrap_token}{token};
    my ($code, $out, $err) = guard('reset-token', 'reset-token', 'c-edge-1');
    exit_is($code, 0, 'reset-token c-edge-1: exit 0');
    my ($new) = $out =~ /\b([0-9a-f]{64})\b/;
    ok $new, '  the new token is shown';
    isnt $new // '', $old, '  a new one';
    isnt api_status('GET', "/install/bootstrap.json?token=$old", undef, authorization => ''), 200, '  the old one no longer works';
    ($code, $out, $err) = ctl('reset-token', 'c-nope');
    exit_is($code, 3, 'reset-token for a cluster that does not exist: exit 3');
};

subtest 'bootstrap' => sub {
    my $made = $s->must('cluster', 'POST', "$ORG/clusters", { metadata => { name => 'ctl-boot' }, spec => {} });
    my $install = $made->{bootstrap_token}{install_url};
    my ($code, $out, $err) = guard('bootstrap', 'bootstrap', $install, '--name', 'ctl-boot');
    exit_is($code, 0, 'bootstrap INSTALL_URL --name ctl-boot: exit 0');
    my $ctx = context_named('ctl-boot');
    ok $ctx, '  a context ctl-boot';
    is $ctx && $ctx->{organization}, $org, '  in the organization';
    is mode_of($config), '0600', '  the contexts file still mode 600';
    my @keys = glob "$tmp/ctl/keys/*.pem";
    ok @keys, '  the cluster\'s key beside the contexts file';
    is mode_of($_), '0600', "  $_: mode 600" for @keys;
    ok api_data("$ORG/clusters/c-ctl-boot")->{status}{bootstrap_token}{redeemed_at}, '  the API says the token was redeemed';
    ($code, $out, $err) = ctl('--context', 'ctl-boot', 'get', 'cluster', 'c-ctl-boot');
    exit_is($code, 0, 'the cluster\'s credential reads its own cluster');
    ($code, $out, $err) = ctl('--context', 'ctl-boot', 'delete', 'cluster', 'c-ctl-boot');
    exit_is($code, 5, '  but may not delete it: exit 5');
    is api_status('GET', "$ORG/clusters/c-ctl-boot"), 200, '  it is still there';
    ($code, $out, $err) = ctl('bootstrap', $install, '--name', 'ctl-boot-again');
    isnt $code, 0, 'a redeemed token again: refused';
    ok !context_named('ctl-boot-again'), '  no context written';
};

subtest 'git' => sub {
    my ($code, $out, $err) = guard('git', 'git', 'check');
    exit_is($code, 0, 'git check: exit 0');
    is $out, "$url/git/$org.git\n", '  the history\'s URL for git clone';
    my $made = $s->must('cluster', 'POST', "$ORG/clusters", { metadata => { name => 'ctl-git' }, spec => { git_repo => { type => 'auto' } } });
    ($code, $out, $err) = ctl('git', 'check', '--cluster', 'c-ctl-git');
    exit_is($code, 0, 'git check --cluster c-ctl-git: exit 0');
    is $out, "$url/git/$org/catalogs/c-ctl-git.git\n", '  the catalog\'s URL';
    ($code, $out, $err) = ctl('git', 'check', '--cluster', 'c-no-such');
    isnt $code, 0, 'git check of a cluster that does not exist fails';
    like $err, qr/c-no-such/, '  naming it';
    ($code, $out, $err) = ctl('git', 'push');
    isnt $code, 0, 'git with another verb: the usage';
    ($code, $out, $err) = ctl('bootstrap', $made->{bootstrap_token}{install_url}, '--name', 'ctl-git');
    exit_is($code, 0, 'bootstrap of a cluster with a catalog: exit 0');
    like $out, qr{^its git repository: \Q$url/git/$org/catalogs/c-ctl-git.git\E$}m, '  it prints the catalog\'s URL';
};

subtest 'token' => sub {
    my ($code, $out, $err) = guard('token', 'token', 'create', '--user', 'admin', '--description', 'ctl-ci', '-o', 'json');
    exit_is($code, 0, 'token create --user admin --description ctl-ci: exit 0');
    my $made = eval { $json->decode($out) } // {};
    like $made->{token} // '', qr/^purser_/, '  the token, shown once';
    my $id = $made->{id} // '';
    my ($listed) = grep { $_->{id} eq $id } @{ api_data('/users/admin/tokens') // [] };
    is $listed && $listed->{description}, 'ctl-ci', '  the API lists it';
    ($code, $out, $err) = ctl({ PURSER_TOKEN => $made->{token} }, 'get', 'clusters');
    exit_is($code, 0, '  and it works');
    ($code, $out, $err) = ctl('token', 'create', '--user', 'admin', '--description', 'ctl-30d', '--expires-in', '30');
    exit_is($code, 0, 'token create --expires-in 30 (the command table\'s example): exit 0');
    my ($t30) = grep { ($_->{description} // '') eq 'ctl-30d' } @{ api_data('/users/admin/tokens') // [] };
    ok $t30 && $t30->{expires_at}, '  it expires';
    ($code, $out, $err) = ctl('token', 'list', '--user', 'admin');
    exit_is($code, 0, 'token list --user admin: exit 0');
    like $out, qr/^\Q$id\E\s/m, '  lists it';
    ($code, $out, $err) = ctl('--context', 'chef', 'token', 'list');
    exit_is($code, 0, 'token list with the Chef context (your own tokens): exit 0');
    like $out, qr/^\Q$id\E\s/m, '  the admin\'s';
    ($code, $out, $err) = ctl('token', 'disable', $id, '--user', 'admin');
    exit_is($code, 0, "token disable $id: exit 0");
    ($listed) = grep { $_->{id} eq $id } @{ api_data('/users/admin/tokens') // [] };
    ok $listed && !$listed->{active}, '  the API has it inactive';
    $s->wait_auth_cache;
    ($code, $out, $err) = ctl({ PURSER_TOKEN => $made->{token} }, 'get', 'clusters');
    exit_is($code, 5, '  and refuses it: exit 5');
    ($code, $out, $err) = ctl('token', 'enable', $id, '--user', 'admin');
    exit_is($code, 0, "token enable $id: exit 0");
    ($listed) = grep { $_->{id} eq $id } @{ api_data('/users/admin/tokens') // [] };
    ok $listed && $listed->{active}, '  active again';
    ($code, $out, $err) = ctl('token', 'revoke', $id, '--user', 'admin');
    exit_is($code, 0, "token revoke $id: exit 0");
    ok !grep({ $_->{id} eq $id } @{ api_data('/users/admin/tokens') // [] }), '  the API no longer lists it';
    $s->wait_auth_cache;
    ($code, $out, $err) = ctl({ PURSER_TOKEN => $made->{token} }, 'get', 'clusters');
    exit_is($code, 5, '  and refuses it: exit 5');
    ($code, $out, $err) = ctl('token', 'revoke', $id, '--user', 'admin');
    exit_is($code, 3, 'revoke it again: exit 3');
};

subtest 'watch' => sub {
    my @events = all_events();
    my $since = @events ? $events[-1]{seq} : 0;
    my ($code, $out, $err) = guard('watch', 'watch', '--since', $since, '--kinds', 'cluster', '--timeout', '1');
    exit_is($code, 0, 'watch --since LAST --kinds cluster --timeout 1: exit 0 at its timeout');
    ok $last{seconds} >= 0.9 && $last{seconds} < 15, sprintf('  after about a second (%.1f s)', $last{seconds});
    my $run = spawn('watch', '--since', $since, '--kinds', 'cluster', '--timeout', '6');
    sleep 1.5; # its long poll under way (nothing tells when nginx holds it), so the event wakes it
    $s->must('cluster', 'POST', "$ORG/clusters", { metadata => { name => 'ctl-watched' }, spec => {} });
    $s->must('node', 'POST', "$ORG/nodes", { name => 'ctl-watch-node', chef_environment => '_default', run_list => [] });
    ($code, $out, $err) = finish_run($run, 40);
    exit_is($code, 0, 'watch --timeout 6 while a cluster and a node are made: exit 0');
    like $out, qr/c-ctl-watched/, '  the cluster\'s event is shown as it happens';
    unlike $out, qr/ctl-watch-node/, '  the node\'s is not (--kinds cluster)';
    ok $last{seconds} >= 5 && $last{seconds} < 30, sprintf('  it ended at its timeout (%.1f s)', $last{seconds});
    ($code, $out, $err) = ctl('watch', '--since', 0, '--kinds', 'organization', '--timeout', '1');
    exit_is($code, 0, 'watch --since 0: exit 0');
    like $out, qr/\b\Q$org\E\b/, '  the past events first';
    # the newest first (issue 38 item 7): --last N, one request for them, with --kinds and --actor
    my @clusters = grep { $_->{kind} eq 'cluster' && $_->{actor} eq 'admin' } all_events();
    ($code, $out, $err) = ctl('watch', '--last', 2, '--kinds', 'cluster', '--actor', 'admin', '--timeout', '1');
    exit_is($code, 0, 'watch --last 2 --kinds cluster --actor admin: exit 0');
    my @shown = $out =~ /^\s*(\d+)\s+cluster\b/mg;
    is_deeply \@shown, [ map { $_->{seq} } @clusters[-2, -1] ], '  the newest two cluster events, oldest first' or diag $out;
    ($code, $out, $err) = ctl('watch', '--last', 2, '--since', 3);
    exit_is($code, 2, 'watch --last with --since: exit 2 (usage)');
    like $err, qr/--last or --since/, '  saying so';
};

subtest 'watch across a disconnect' => sub {
    my @events = all_events();
    my $since = @events ? $events[-1]{seq} : 0;
    # (12 s: the cut below is over in about 7, and the watch runs to its timeout)
    my $run = spawn('watch', '--since', $since, '--kinds', 'cluster', '--timeout', '12');
    sleep 1.5; # its long poll under way (nothing tells when nginx holds it), so the event wakes it
    $s->must('cluster', 'POST', "$ORG/clusters", { metadata => { name => 'ctl-before-cut' }, spec => {} });
    PurserStack::wait_for(10, sub { slurp($run->{out}) =~ /c-ctl-before-cut/ }); # printed before the cut
    # nginx goes away under the watch's long poll; the watch retries while it is down
    my $nginx = $s->pidfile('nginx');
    ok $nginx && kill('TERM', $nginx), '  nginx stopped under the watch';
    my $gone = time + 10;
    Time::HiRes::sleep(0.1) while kill(0, $nginx) && time < $gone;
    sleep 2.5; # time itself: the watch stays cut off across its tries
    ok $s->start, '  and started again on the same port';
    # made while the watch is between tries: it must come from the feed's since, not be lost
    $s->must('cluster', 'POST', "$ORG/clusters", { metadata => { name => 'ctl-after-cut' }, spec => {} });
    my ($code, $out, $err) = finish_run($run, 60);
    exit_is($code, 0, 'watch --timeout 12 across nginx going away and back: exit 0');
    like $out, qr/c-ctl-before-cut/, '  the event before the cut';
    like $out, qr/c-ctl-after-cut/, '  and the one made while it was cut off';
    my $seen = () = $out =~ /c-ctl-before-cut/g;
    is $seen, 1, '  each once (resumed after the last seq it printed)';
    like $err, qr/resuming after seq \d+/, '  saying where it resumes';
};

subtest 'export' => sub {
    my $file = "$tmp/export.yaml";
    my ($code, $out, $err) = guard('export', 'export', '-f', $file);
    exit_is($code, 0, 'export -f export.yaml: exit 0');
    is mode_of($file), '0600', '  the file is mode 600';
    my $docs = yaml_load(slurp($file));
    ok $docs && @$docs, '  a YAML stream of ' . scalar(@{ $docs // [] }) . ' resources';
    my $r = $s->request('GET', "$ORG/export", { headers => { authorization => "Bearer $admin_token", accept => 'application/x-yaml' } });
    is $r->{status}, 200, '  (GET /export)';
    is_deeply $docs, yaml_load($r->{content}), '  the API\'s export';
    ok((grep { $_->{kind} eq 'Cluster' && $_->{metadata}{name} eq 'c-edge-1' } @{ $docs // [] }), '  c-edge-1 among them');
    ($code, $out, $err) = ctl('export');
    exit_is($code, 0, 'export (to stdout): exit 0');
    is_deeply yaml_load($out), $docs, '  the same stream';
    unlike $out, qr/PRIVATE KEY|purser_[A-Za-z0-9_-]{43}/, '  no key, no token';
};

subtest 'import' => sub {
    my $r = $s->request('GET', "$ORG/export?secrets=true", { headers => { authorization => "Bearer $admin_token", accept => 'application/x-yaml' } });
    my $file = write_file('full-export.yaml', $r->{content});
    $s->must('org', 'POST', '/organizations', { name => 'ctl-copy' });
    my ($code, $out, $err) = guard('import', '--org', 'ctl-copy', 'import', '-f', $file);
    exit_is($code, 0, '--org ctl-copy import -f full-export.yaml: exit 0');
    my $copy = api_data('/organizations/ctl-copy/clusters');
    ok((grep { $_->{metadata}{name} eq 'c-edge-1' } @{ $copy->{items} // [] }), '  the API has c-edge-1 in ctl-copy');
    is_deeply [ sort keys %{ api_data('/organizations/ctl-copy/policy_groups') // {} } ],
        [ sort keys %{ api_data("$ORG/policy_groups") // {} } ], '  and the policy groups';
    ($code, $out, $err) = ctl('--org', 'ctl-copy', 'import', '-f', $file);
    exit_is($code, 4, 'import into an organization that is not empty: exit 4');
    my $broken = write_file('broken-export.yaml', "- kind: [\n");
    $s->must('org', 'POST', '/organizations', { name => 'ctl-copy2' });
    ($code, $out, $err) = ctl('--org', 'ctl-copy2', 'import', '-f', $broken);
    exit_is($code, 7, 'import a file that is no export: exit 7');
};

subtest 'cookbook upload and download' => sub {
    my %files = ('metadata.json' => qq({"name":"hello","version":"1.0.0"}),
                 'recipes/default.rb' => "log 'hello'\n",
                 'files/default/blob.bin' => join('', map { chr($_ % 256) } 0 .. 4095));
    write_file("cookbooks/hello/$_", $files{$_}) for keys %files;
    my $id = '1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c';
    my ($code, $out, $err) = guard('cookbook', 'cookbook', 'upload', "$tmp/cookbooks/hello", '--identifier', $id);
    exit_is($code, 0, 'cookbook upload ./hello --identifier ID: exit 0');
    my $artifact = api_data("$ORG/cookbook_artifacts/hello/$id");
    ok $artifact, '  the API has the artifact hello/ID';
    my %sums = map { ($_->{path} // $_->{name}) => $_->{checksum} } @{ $artifact->{all_files} // [] };
    is_deeply \%sums, { map { $_ => md5_hex($files{$_}) } keys %files }, '  every file, by its checksum';
    ($code, $out, $err) = ctl('cookbook', 'upload', "$tmp/cookbooks/hello", '--identifier', $id);
    exit_is($code, 0, 'the same upload again: exit 0');
    ($code, $out, $err) = ctl('cookbook', 'download', 'hello', $id, "$tmp/downloaded");
    exit_is($code, 0, 'cookbook download hello ID DIR: exit 0');
    for my $f (sort keys %files) {
        is slurp("$tmp/downloaded/$f"), $files{$f}, "  $f, byte for byte";
    }
    ($code, $out, $err) = ctl('cookbook', 'download', 'hello', 'nope', "$tmp/downloaded2");
    exit_is($code, 3, 'download an identifier that does not exist: exit 3');
};

subtest 'health' => sub {
    my ($code, $out, $err) = guard('health', 'health');
    exit_is($code, 0, 'health: exit 0');
    like $out, qr/\bup\b/, '  the server is up';
    ($code, $out, $err) = ctl('health', '--deep');
    exit_is($code, 0, 'health --deep: exit 0');
    like $out, qr/database/, '  the database checked';
    ($code, $out, $err) = ctl({ PURSER_URL => "https://127.0.0.1:$closed_port" }, 'health');
    exit_is($code, 6, 'health of a closed port: exit 6');
};

subtest 'version' => sub {
    my ($code, $out, $err) = guard('version', 'version');
    exit_is($code, 0, 'version: exit 0');
    my ($mine) = (ctl('--version'))[1] =~ /purserctl (\S+)/;
    like $out, qr/purserctl \Q$mine\E/, "  purserctl's version ($mine)";
    like $out, qr/\Q$_\E/, "  the server's document API $_" for keys %{ api_data('/versions') // {} };
    my $both = ctl_json('version');
    is_deeply $both && $both->{server}, api_data('/versions'), '  -o json: the server\'s /versions';
};

subtest 'api' => sub {
    my ($code, $out, $err) = guard('api', 'api', 'GET', '/docs');
    exit_is($code, 0, 'api GET /docs: exit 0');
    is_deeply eval { $json->decode($out) }, $json->decode($s->get('/docs')->{content}), '  the API\'s /docs';
    ($code, $out, $err) = ctl('api', 'GET', '/metrics');
    exit_is($code, 0, 'api GET /metrics: exit 0');
    like $out, qr/^# (?:HELP|TYPE) purser_/m, '  the metrics';
    ($code, $out, $err) = ctl('api', 'GET', "$ORG/clusters/nope");
    exit_is($code, 3, 'api GET a cluster that does not exist: exit 3');
    like $out . $err, qr/Cluster 'nope' was not found/, '  with the API\'s answer';
    my $body = write_file('api-cluster.json', $json->encode({ metadata => { name => 'via-api' }, spec => {} }));
    ($code, $out, $err) = ctl('api', 'POST', "$ORG/clusters", '-f', $body);
    exit_is($code, 0, 'api POST /organizations/ORG/clusters -f FILE: exit 0');
    is api_status('GET', "$ORG/clusters/c-via-api"), 200, '  the API has it';
    ($code, $out, $err) = ctl('--context', 'chef', 'api', 'GET', "$ORG/clusters/c-via-api");
    exit_is($code, 0, 'api GET signed with the Chef key: exit 0');
    is eval { $json->decode($out)->{metadata}{name} }, 'c-via-api', '  the cluster';
};

# What a review of the client found, each held: an explicit --context beats the variables, a
# bootstrap goes to the install URL's own server and needs no context, a contexts file with a
# nameless entry, -o name of a create names what the server made, list options the API would
# ignore refused, destructive deletes said outright, https only, a bootstrap token never shown
# in a message, the completion's words.
subtest 'review fixes' => sub {
    my ($code, $out, $err) = ctl({ PURSER_URL => "https://127.0.0.1:$closed_port", PURSER_TOKEN => 'wrong' },
                                 '--context', 'local', 'get', 'clusters', '-o', 'name');
    exit_is($code, 0, '--context local beats PURSER_URL and PURSER_TOKEN');
    ($code, $out, $err) = ctl('create', 'cluster', 'ctl-named', '-o', 'name');
    is $out, "cluster/c-ctl-named\n", 'create -o name prints the name the server gave (c- added)';
    like $err, qr/install_url, shown this once:\n\Qhttps:\E/, '  and the one-time install URL on stderr';
    ($code, $out, $err) = ctl('delete', 'cluster', 'c-ctl-named', '-o', 'name');
    is $out, "cluster/c-ctl-named\n", 'delete -o name prints kind/name';
    ($code, $out, $err) = ctl('get', 'nodes', '-l', 'env=dev');
    exit_is($code, 2, 'get nodes -l: refused, nodes take no selector (not every node listed)');
    ($code, $out, $err) = ctl('get', 'nodes', '--policy', 'base');
    exit_is($code, 2, 'get nodes --policy without --policy-group: refused, not ignored');
    ($code, $out, $err) = ctl('get', 'revisions', '--page-size', '3');
    exit_is($code, 0, 'get revisions --page-size 3: the document API\'s pages');
    is_deeply [ map { /^(\d+)\s/ ? $1 : () } split /\n/, $out ], [ 1 .. 5 ], '  every page followed, each revision once';
    ($code, $out, $err) = ctl('delete', 'tags', '--all');
    exit_is($code, 2, 'delete tags --all without --revision: refused, not the newest by default');
    ($code, $out, $err) = ctl('delete', 'revisions', '--all');
    exit_is($code, 2, 'delete revisions --all without --yes: refused');
    like $err, qr/--yes/, '  saying what it takes';
    ($code, $out, $err) = ctl('login', '--url', 'http://127.0.0.1:1', '--token', 't', '--name', 'plain');
    exit_is($code, 2, 'login over http://: refused (a token goes only over TLS)');
    ($code, $out, $err) = ctl('token', 'create', '--expires-in', 'abc');
    exit_is($code, 2, 'token create --expires-in abc: refused before anything is sent');
    like $err, qr/--expires-in/, '  naming the option';
    ($code, $out, $err) = ctl('api', 'get', '/versions');
    exit_is($code, 0, 'api get /versions: the method is sent as GET');

    # bootstrap with no contexts file at all: the install URL names the server
    my $made = $s->must('cluster', 'POST', "$ORG/clusters", { metadata => { name => 'ctl-fresh' }, spec => {} });
    my $install = $made->{bootstrap_token}{install_url};
    my $fresh = "$tmp/fresh/config.yaml";
    ($code, $out, $err) = ctl({ PURSER_CTL_CONFIG => $fresh }, 'bootstrap', $install, '--ca', $ca, '--name', 'edge');
    exit_is($code, 0, 'bootstrap INSTALL_URL on a machine with no context: exit 0');
    ($code, $out, $err) = ctl({ PURSER_CTL_CONFIG => $fresh }, '--context', 'edge', 'get', 'cluster', 'c-ctl-fresh', '-o', 'name');
    is $out, "cluster/c-ctl-fresh\n", '  its context reads its cluster';
    my $again = $s->must('reset', 'POST', "$ORG/clusters/c-ctl-fresh/bootstrap-token")->{bootstrap_token}{token};
    ($code, $out, $err) = ctl({ PURSER_CTL_CONFIG => $fresh }, '--verbose', 'bootstrap',
                              "https://127.0.0.1:$closed_port/install/bootstrap.json?token=$again", '--ca', $ca);
    exit_is($code, 6, 'bootstrap against a closed port: exit 6');
    unlike $err, qr/\Q$again\E/, '  the bootstrap token is not in the message';
    like $err, qr/token=\.\.\./, '  shown as token=...';

    # a contexts file with an entry that has no name
    my $odd = "$tmp/odd/config.yaml";
    write_file($odd, YAML::XS::Dump({ 'current-context' => 'b', contexts => [ { url => $url }, { name => 'b', url => $url } ] }));
    ($code, $out, $err) = ctl({ PURSER_CTL_CONFIG => $odd }, 'config', 'delete-context', 'b');
    exit_is($code, 0, 'config delete-context beside a nameless entry: exit 0 (no crash)');

    # the completion: no word glued to --help
    ($code, $out, $err) = ctl('completion', 'bash');
    unlike $out, qr/\w--help/, 'the completion\'s words are separate (no "enable--help")';
    like $out, qr/token\) COMPREPLY=\(\$\(compgen -W '[^']*\bcreate list revoke disable enable --help'/,
        '  token completes its sub-verbs';
};

subtest 'clusters by their dynamic facts, every organization\'s' => sub {
    my @local = ('--context', 'local');
    my $q = 'dynamic_facts.kubernetes_version.gitVersion>=v1.30;dynamic_facts.node_count>=3';
    (my $escaped = $q) =~ s/([^A-Za-z0-9._~-])/sprintf('%%%02X', ord $1)/ge;
    my $got = ctl_json(@local, 'get', 'clusters', '--filter', $q);
    is_deeply [ map { $_->{metadata}{name} } @{ $got->{items} // [] } ], ['c-edge-1'],
        "get clusters --filter '$q': c-edge-1 (its facts say v1.30.4+k3s1, 3 nodes)";
    is_deeply $got && $got->{items}, api_data("$ORG/clusters?filter=$escaped")->{items}, '  as the API answers it';
    $got = ctl_json(@local, 'get', 'clusters', '--filter', 'dynamic_facts.kubernetes_version.gitVersion<1.30');
    is_deeply $got && $got->{items}, [], "  and --filter '...gitVersion<1.30': none";
    my ($code, $out, $err) = ctl(@local, '--verbose', 'get', 'clusters', '--all-organizations', '-o', 'json');
    exit_is($code, 0, 'get clusters --all-organizations -o json: exit 0');
    like $err, qr{GET \Q$url\E/clusters -> 200}, '  GET /clusters';
    my $all = eval { $json->decode($out) };
    is_deeply $all && $all->{items}, api_data('/clusters?page_size=1000')->{items}, '  the API\'s every organization\'s list';
    ok((grep { ($_->{metadata}{organization} // '') eq 'ctl-other' } @{ $all->{items} // [] }), '  ctl-other\'s clusters among them');
    my $only = ctl_json(@local, 'get', 'clusters', '--all-organizations', '--organization', 'ctl-other', '--page-size', '1');
    is_deeply [ map { "$_->{metadata}{organization}/$_->{metadata}{name}" } @{ $only->{items} // [] } ], ['ctl-other/c-elsewhere'],
        'get clusters --all-organizations --organization ctl-other: that organization\'s';
    my $t = table_of(ctl_ok(@local, 'get', 'clusters', '--all-organizations', '-l', 'env=dev'));
    my ($names, $orgs) = ([ column($t, 'NAME') ], [ column($t, 'ORGANIZATION') ]);
    is_deeply [ map { "$orgs->[$_]/$names->[$_]" } 0 .. $#$names ],
        [ map { "$_->{metadata}{organization}/$_->{metadata}{name}" } @{ api_data('/clusters?labels=env%3Ddev')->{items} } ],
        'get clusters --all-organizations -l env=dev: a row per cluster, naming its organization';
    ok((grep { $_ eq "$org/c-edge-1" } map { "$orgs->[$_]/$names->[$_]" } 0 .. $#$names), "  $org/c-edge-1 among them");
    ($code, $out, $err) = ctl(@local, 'get', 'clusters', '--organization', 'ctl-other');
    exit_is($code, 2, '--organization without --all-organizations: exit 2');
    ($code, $out, $err) = ctl(@local, 'get', 'nodes', '--all-organizations');
    exit_is($code, 2, 'get nodes --all-organizations (nodes have no such list): exit 2');
    ($code, $out, $err) = ctl({ PURSER_TOKEN => $nobody_token }, 'get', 'clusters', '--all-organizations');
    exit_is($code, 5, 'get clusters --all-organizations as a user who is no server admin: exit 5 (403)');
    like $err, qr/list_all_clusters/, '  naming the action';
};

# Last: a real collection removes what no revision uses, the seed artifact among them.
subtest 'policy revisions, collect' => sub {
    $s->must('revision', 'POST', "$ORG/policies/base/revisions", { %$lock_v1, revision_id => "ctl-gc-$_" }) for 1, 2;
    my $list = ctl_json('get', 'policy-revisions', '--policy', 'base');
    is_deeply $list, api_data("$ORG/policies/base/revisions"), 'get policy-revisions --policy base: the API\'s list';
    ok $list && $list->{'ctl-gc-1'}, '  with the revision just uploaded';
    my $t = table_of(ctl_ok('get', 'policy-revisions', '--policy', 'base'));
    ok((grep { $_ eq 'ctl-gc-2' } column($t, 'REVISION')), '  a table row per revision');
    is_deeply [ sort(column($t, 'GROUPS')) ], [ sort map { join(',', @{ $_->{policy_group_list} }) || '-' } values %$list ],
        '  with the groups pointing at each' or diag join "\n", @{ $t->{lines} };
    my ($code, $out, $err) = ctl('get', 'policy-revisions');
    exit_is($code, 2, 'get policy-revisions without --policy: exit 2');
    ($code, $out, $err) = ctl('--verbose', 'collect', '--keep', '1', '--policy', 'base', '--dry-run', '-o', 'json');
    exit_is($code, 0, 'collect --keep 1 --policy base --dry-run -o json: exit 0');
    like $err, qr{POST \S+/organizations/\Q$org\E/collect_policies -> 200}, '  POST .../collect_policies';
    my $dry = eval { $json->decode($out) };
    my ($r, $api) = api('POST', "$ORG/collect_policies", { keep => 1, policies => ['base'], dry_run => JSON::PP::true() });
    is_deeply $dry, $api, '  the API\'s dry run';
    ok((grep { $_->{revision_id} eq 'ctl-gc-1' } @{ $dry->{revisions} // [] }), '  ctl-gc-1 would go');
    ok api_data("$ORG/policies/base/revisions/ctl-gc-1"), '  and is still there';
    ($code, $out, $err) = ctl('collect', '--keep', '1', '--policy', 'base');
    exit_is($code, 0, 'collect --keep 1 --policy base: exit 0');
    is_deeply [ grep { !/\d+ revision\(s\)/ } split /\n/, $out ],
        [ (map { "removed revision $_->{policy}/$_->{revision_id}" } @{ $dry->{revisions} }),
          (map { "removed cookbook artifact $_->{name}/$_->{identifier}" } @{ $dry->{cookbook_artifacts} }),
          (map { "removed file $_" } @{ $dry->{files} }) ], '  a line for each thing the dry run listed';
    like $out, qr/^\d+ revision\(s\), \d+ cookbook artifact\(s\), \d+ file\(s\) removed$/m, '  and the counts';
    is api_status('GET', "$ORG/policies/base/revisions/ctl-gc-1"), 404, '  ctl-gc-1 is gone';
    ok api_data("$ORG/policies/base/revisions/ctl-gc-2"), '  the newest, ctl-gc-2, stays';
    ($code, $out, $err) = ctl('collect', '--dry-run');
    exit_is($code, 2, 'collect without --keep: exit 2');
    ($code, $out, $err) = ctl('collect', '--keep', '1', '--policy', 'ctl-nosuch');
    exit_is($code, 3, 'collect --policy of no policy: exit 3 (404)');
};

PurserStack::finish();

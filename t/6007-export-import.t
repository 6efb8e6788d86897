#!/usr/bin/perl
# 6007: an organization's export and import (issue 13, items 4 and 5). A populated
# organization (members with keys, a client, policies with revisions and groups, nodes, a
# cookbook artifact with files, documents with layering and an encrypted secret in two
# buckets, a tag, a validation, clusters with facts) is exported, imported into a new
# organization and exported again: the two streams are equal apart from the organization's
# name. No token or private key is ever in a stream; encrypted data only with secrets=true
# and read_encrypted_document. An export without secrets imports too, the encrypted documents
# it names as redacted left out and listed, and renders once the operator supplies them. An import goes only into an empty organization (409), is
# checked whole first and written all or nothing, and its errors name the document and the
# field. RBAC: export for admins, import for server admins only; `purser export` and
# `purser import` do the same from the host, the file written with mode 600.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use Digest::MD5 qw(md5_hex);
use PurserStack;
use File::Temp qw(tempdir);
use YAML::XS ();

my $s = PurserStack->new;
sub call { $s->call(@_) }
sub ok_call { $s->must(@_) }
sub yaml_put { my ($path, $text, $method) = @_; $s->yaml_call($method // 'PUT', $path, $text) }
sub export_of {
    my ($org, $query, %h) = @_;
    my $r = $s->request('GET', "/organizations/$org/export" . ($query ? "?$query" : ''), { headers => {
        authorization => $h{token} ? "Bearer $h{token}" : 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') } });
    return $r;
}
sub import_into {
    my ($org, $text, %h) = @_;
    my $r = $s->request('POST', "/organizations/$org/import", { headers => {
        authorization => $h{token} ? "Bearer $h{token}" : 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN'),
        'content-type' => 'application/x-yaml', accept => 'application/json' }, content => $text });
    return ($r, eval { decode_json($r->{content}) });
}
sub sql1 { my $v = $s->sql($_[0]); chomp $v; $v }
sub table_counts {
    my ($org) = @_;
    my $id = sql1("SELECT id FROM organizations WHERE name = '$org'");
    return join ',', map { sql1("SELECT COUNT(*) FROM $_ WHERE org_id = $id") }
        qw(policies policy_groups nodes cookbook_artifacts file_contents doc_revisions doc_tags resources events);
}

# ---- a populated organization ----
my $src = 'exsrc';
ok_call('org', 'POST', '/organizations', { name => $src, full_name => 'Export Source' });
my $base = "/organizations/$src";
ok_call('user', 'POST', '/users', { username => 'exuser', display_name => 'Ex User', email => 'ex@example.com', sub_kind => 'contractor', expires => '2099-01-02T03:04:05Z' });
ok_call('key', 'POST', '/users/exuser/keys', { name => 'laptop', create_key => JSON::PP::true(), expiration_date => 'infinity' });
ok_call('member', 'POST', "$base/users", { username => 'exuser', roles => ['operator'] });
ok_call('member', 'POST', "$base/users", { username => 'admin', roles => ['admin'] });
my $client = ok_call('client', 'POST', "$base/clients", { name => 'exclient' });
my $client_private = $client->{chef_key}{private_key} // $client->{private_key} // '';
ok_call('client', 'POST', "$base/clients", { name => 'exbot', sub_kind => 'ci-runner', expires => '2098-05-06T07:08:09Z' });
# a client made by a member limited to staging holds its node role on staging only (docs/operator/identity.md,
# "Grants by policy group"); its roles and that limit go through the export and the import
ok_call('user', 'POST', '/users', { username => 'exlim' });
ok_call('member', 'POST', "$base/users", { username => 'exlim', roles => ['admin'], policy_groups => { admin => ['staging'] } });
my $exlim_token = ok_call('token', 'POST', '/users/exlim/tokens', { description => 't' })->{token};
my ($lr, $lj) = $s->api('POST', "$base/clients", { name => 'exstaging' }, $exlim_token);
is $lr->{status}, 201, 'exlim, an admin limited to staging, makes the client exstaging';
my $keydir = tempdir(CLEANUP => 1);
my $exstaging_key = "$keydir/exstaging.pem";
{ open my $kf, '>', $exstaging_key or die; print $kf $lj->{private_key}; close $kf }
sub exstaging_reads {
    my ($org, $group) = @_;
    return $s->chef(user => 'exstaging', key => $exstaging_key, method => 'GET',
                    path => "/organizations/$org/policy_groups/$group/policies/web")->{status};
}
sub lock_for {
    my ($name, $rev) = @_;
    return { revision_id => $rev, name => $name, run_list => ['recipe[base::default]'],
             cookbook_locks => { base => { version => '1.0.0', identifier => "id-$rev" } },
             default_attributes => { tier => $rev }, override_attributes => {} };
}
ok_call('lock', 'PUT', "$base/policy_groups/staging/policies/web", lock_for('web', 'w1'));
ok_call('lock', 'PUT', "$base/policy_groups/staging/policies/web", lock_for('web', 'w2'));
ok_call('lock', 'PUT', "$base/policy_groups/prod/policies/web", lock_for('web', 'w1'));
ok_call('lock', 'PUT', "$base/policy_groups/prod/policies/db", lock_for('db', 'd1'));
is exstaging_reads($src, 'staging') . ' ' . exstaging_reads($src, 'prod'), '200 403', 'exstaging reads staging\'s lock and not prod\'s';
ok_call('node', 'POST', "$base/nodes", { name => 'web1', policy_name => 'web', policy_group => 'prod', normal => { role => 'web' } });
{
    my %files = ('recipes/default.rb' => "package 'x'\n", 'files/blob.bin' => join('', map { chr($_ % 256) } 0 .. 1023));
    my %sum = map { $_ => md5_hex($files{$_}) } keys %files;
    my $sb = ok_call('sandbox', 'POST', "$base/sandboxes", { checksums => { map { $_ => undef } values %sum } });
    for my $f (sort keys %files) {
        (my $path = $sb->{checksums}{ $sum{$f} }{url}) =~ s{^https://[^/]+}{};
        my $r = $s->request('PUT', $path, { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN'),
            'content-type' => 'application/octet-stream' }, content => $files{$f} });
        die "upload: $r->{status}" unless $r->{status} == 200;
    }
    ok_call('commit', 'PUT', "$base/sandboxes/$sb->{sandbox_id}", { is_completed => JSON::PP::true() });
    ok_call('artifact', 'PUT', "$base/cookbook_artifacts/base/abc123", { name => 'base', identifier => 'abc123', version => '1.0.0',
        chef_type => 'cookbook_version', metadata => { name => 'base', version => '1.0.0', dependencies => {} },
        all_files => [ map { { name => $_, path => $_, checksum => $sum{$_}, specificity => 'default' } } sort keys %files ] });
}
my $docs = "$base/api/v1.0";
yaml_put("$docs/buckets/site/documents", <<'YAML');
---
schema: deckhand/LayeringPolicy/v1
metadata: {schema: metadata/Control/v1, name: layering-policy}
data: {layerOrder: [global, site]}
---
schema: example/Kind/v1
metadata:
  schema: metadata/Document/v1
  name: parent
  labels: {app: web}
  layeringDefinition: {abstract: false, layer: global}
data: {a: 1, b: {c: 2}}
---
schema: example/Kind/v1
metadata:
  schema: metadata/Document/v1
  name: child
  layeringDefinition:
    abstract: false
    layer: site
    parentSelector: {app: web}
    actions: [{method: merge, path: .}]
  substitutions:
    - src: {schema: deckhand/Passphrase/v1, name: db-pass, path: .}
      dest: {path: .password}
data: {b: {d: 3}}
YAML
yaml_put("$docs/buckets/secrets/documents", <<'YAML');
---
schema: deckhand/Passphrase/v1
metadata: {schema: metadata/Document/v1, name: db-pass, storagePolicy: encrypted, layeringDefinition: {abstract: false, layer: site}}
data: s3cr3t-passphrase
YAML
my $rev = sql1("SELECT MAX(id) FROM doc_revisions WHERE org_id = (SELECT id FROM organizations WHERE name = '$src')");
yaml_put("$docs/revisions/$rev/tags/golden", "note: good\n", 'POST');
yaml_put("$docs/revisions/$rev/validations/promenade-site-validation",
    "status: success\nvalidator: {name: promenade, version: 1.1.2}\n", 'POST');
ok_call('cluster', 'POST', "$base/clusters", { metadata => { name => 'east', labels => { env => 'prod' }, annotations => { owner => 'ops' } }, spec => { display_name => 'East', facts => { region => 'us-east' } } });
my $west = ok_call('cluster', 'POST', "$base/clusters", { metadata => { name => 'west' } });
{ # its bootstrap token redeemed: the client c-west, role cluster
    my ($m) = $s->call('GET', "/install/bootstrap.json?token=$west->{bootstrap_token}{token}", undef, authorization => '');
    die "redeem: $m->{status}" unless $m->{status} == 200;
}
ok_call('facts', 'PUT', "$base/clusters/c-east/facts", { kernel => '6.1', nodes => 3 });

# ---- export ----
my $r = export_of($src);
is $r->{status}, 200, 'GET export';
like $r->{headers}{'content-type'}, qr{^application/(x-)?yaml}, '  a YAML stream';
my $plain = $r->{content};
my @docs = YAML::XS::Load($plain);
my @kinds = map { $_->{kind} } @docs;
my %order = (Organization => 0, Member => 1, Client => 2, PolicyRevision => 3, PolicyGroup => 4, Node => 5,
             CookbookArtifact => 6, DocumentBucket => 7, RevisionTag => 8, Validation => 9, Cluster => 10);
is_deeply \@kinds, [ sort { $order{$a} <=> $order{$b} } @kinds ], '  in dependency order';
is $docs[0]{metadata}{name}, $src, '  the organization first';
my %count;
$count{$_}++ for @kinds;
is_deeply \%count, { Organization => 1, Member => 3, Client => 4, PolicyRevision => 3, PolicyGroup => 2,
                     Node => 1, CookbookArtifact => 1, DocumentBucket => 2, RevisionTag => 1, Validation => 1,
                     Cluster => 2 }, '  every resource once (the validator client left out)';
ok !grep({ ($_->{version} // '') ne 'v1' || !defined $_->{metadata}{name} } @docs), '  each in the envelope';
my ($member) = grep { $_->{kind} eq 'Member' && $_->{metadata}{name} eq 'exuser' } @docs;
is_deeply $member->{spec}{roles}, ['operator'], '  a member with her roles';
like $member->{spec}{user}{keys}[0]{public_key}, qr/BEGIN PUBLIC KEY/, '  and her public key';
is_deeply [ map { $_->{name} } @{ $member->{spec}{user}{keys} } ], [ 'default', 'laptop' ], '  every one of her keys, by name';
my ($exported_client) = grep { $_->{kind} eq 'Client' && $_->{metadata}{name} eq 'exclient' } @docs;
my ($bot) = grep { $_->{kind} eq 'Client' && $_->{metadata}{name} eq 'exbot' } @docs;
is_deeply [ @{ $bot->{spec} }{qw(sub_kind expires)} ], [ 'ci-runner', '2098-05-06T07:08:09Z' ], '  a client with its sub_kind and expiry';
is_deeply [ @{ $member->{spec}{user} }{qw(sub_kind expires)} ], [ 'contractor', '2099-01-02T03:04:05Z' ], '  a member\'s user with hers';
ok !exists $exported_client->{spec}{sub_kind} && !exists $exported_client->{spec}{expires}, '  neither when not set';
my ($limited) = grep { $_->{kind} eq 'Client' && $_->{metadata}{name} eq 'exstaging' } @docs;
is_deeply $limited->{spec}{policy_groups}, { node => ['staging'] }, '  a client with its limit';
ok !exists $limited->{spec}{roles}, '  (its role the one its creation gives, node: not written)';
ok !exists $exported_client->{spec}{policy_groups}, '  an unlimited one without';
my ($credential) = grep { $_->{kind} eq 'Client' && $_->{metadata}{name} eq 'c-west' } @docs;
is_deeply $credential->{spec}{roles}, ['cluster'], '  a role other than its creation gives (a cluster\'s credential) written';
is_deeply [ map { $_->{name} } @{ $exported_client->{spec}{keys} } ], ['default'], '  a client with its own key, not a member\'s';
my ($artifact) = grep { $_->{kind} eq 'CookbookArtifact' } @docs;
is scalar(keys %{ $artifact->{spec}{files} }), 2, '  an artifact with its files';
my ($cluster) = grep { $_->{kind} eq 'Cluster' && $_->{metadata}{name} eq 'c-east' } @docs;
is_deeply $cluster->{status}{dynamic_facts}, { kernel => '6.1', nodes => 3 }, '  a cluster with its facts';
unlike $plain, qr/PRIVATE KEY/, '  no private key';
unlike $plain, qr/purser_[A-Za-z0-9_-]{43}/, '  no token';
unlike $plain, qr/s3cr3t-passphrase/, '  no encrypted data without secrets=true';
my ($secrets_bucket) = grep { $_->{kind} eq 'DocumentBucket' && $_->{metadata}{name} eq 'secrets' } @docs;
is_deeply $secrets_bucket->{spec}{redacted}, ['deckhand/Passphrase/v1/db-pass'], '  which it names as redacted';

# ---- an export without secrets imports too (issue 50): its encrypted documents are left out,
# named in the answer, for the operator to supply ----
ok_call('org', 'POST', '/organizations', { name => 'explain' });
my ($ir, $id) = import_into('explain', $plain);
is $ir->{status}, 201, 'importing an export without secrets: 201' or diag $ir->{content};
is_deeply $id->{left_out}, [ { bucket => 'secrets', schema => 'deckhand/Passphrase/v1', name => 'db-pass' } ],
    '  naming the encrypted document it left out';
{
    (my $expected_plain = $plain) =~ s/\b$src\b/explain/g;
    my @want = grep { !($_->{kind} eq 'DocumentBucket' && $_->{metadata}{name} eq 'secrets') } YAML::XS::Load($expected_plain);
    my @got = YAML::XS::Load(export_of('explain')->{content});
    is_deeply \@got, \@want, '  export, import, export without secrets: the same apart from what was left out';
    yaml_put('/organizations/explain/api/v1.0/buckets/secrets/documents', <<'YAML');
---
schema: deckhand/Passphrase/v1
metadata: {schema: metadata/Document/v1, name: db-pass, storagePolicy: encrypted, layeringDefinition: {abstract: false, layer: site}}
data: s3cr3t-passphrase
YAML
    my $latest = sql1("SELECT MAX(id) FROM doc_revisions WHERE org_id = (SELECT id FROM organizations WHERE name = 'explain')");
    my $out = $s->request('GET', "/organizations/explain/api/v1.0/revisions/$latest/rendered-documents?metadata.name=child",
        { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') } });
    like $out->{content}, qr/password: s3cr3t-passphrase/, '  once the operator supplies it, the documents render with it';
}
{
    my @bad = YAML::XS::Load($plain);
    my ($b) = grep { $_->{kind} eq 'DocumentBucket' && $_->{metadata}{name} eq 'secrets' } @bad;
    $b->{spec}{redacted} = ['deckhand/Passphrase/v1/none-such'];
    ok_call('org', 'POST', '/organizations', { name => 'exnone' });
    ($ir, $id) = import_into('exnone', YAML::XS::Dump(@bad));
    is $ir->{status}, 400, 'spec.redacted naming a document the bucket does not hold: 400';
    like PurserStack::error_message($id), qr/^document \d+ \(DocumentBucket secrets\): spec\.redacted/, '  naming the document and field';
}

# ---- import refusals ----
ok_call('org', 'POST', '/organizations', { name => 'exdst' });
my $before = table_counts('exdst');
$r = export_of($src, 'secrets=true');
is $r->{status}, 200, 'export with secrets=true';
my $full = $r->{content};
like $full, qr/s3cr3t-passphrase/, '  has the encrypted data';
my @bad = YAML::XS::Load($full);
my ($node_index) = grep { $bad[$_]{kind} eq 'Node' } 0 .. $#bad;
$bad[$node_index]{spec}{name} = 'not a node name!';
($ir, $id) = import_into('exdst', YAML::XS::Dump(@bad));
is $ir->{status}, 400, 'a stream with a bad node: 400';
like PurserStack::error_message($id), qr/^document @{[ $node_index + 1 ]} \(Node web1\): /, '  naming the document';
is table_counts('exdst'), $before, '  and nothing of the stream was written (all or nothing)';
@bad = YAML::XS::Load($full);
my ($client_index) = grep { $bad[$_]{kind} eq 'Client' && $bad[$_]{metadata}{name} eq 'exstaging' } 0 .. $#bad;
$bad[$client_index]{spec}{roles} = ['node', 'no-such-role'];
($ir, $id) = import_into('exdst', YAML::XS::Dump(@bad));
is $ir->{status}, 400, 'a client with an unknown role: 400';
like PurserStack::error_message($id), qr/^document @{[ $client_index + 1 ]} \(Client exstaging\): Field 'roles\[1\]': unknown role no-such-role/, '  naming the document and the field';
delete $bad[$client_index]{spec}{roles};
$bad[$client_index]{spec}{policy_groups} = { validator => ['dev'] };
($ir, $id) = import_into('exdst', YAML::XS::Dump(@bad));
is $ir->{status}, 400, 'a client limited in a role it does not hold: 400';
like PurserStack::error_message($id), qr/\(Client exstaging\): Field 'policy_groups\.validator' invalid/, '  naming the field';
is table_counts('exdst') . ' ' . sql1("SELECT COUNT(*) FROM principals WHERE kind = 'client' AND org_id = (SELECT id FROM organizations WHERE name = 'exdst')"),
    "$before 1", '  and nothing was written (no client but its validator)';
my @dup = (YAML::XS::Load($full), (grep { $_->{kind} eq 'Cluster' } YAML::XS::Load($full))[0]);
($ir, $id) = import_into('exdst', YAML::XS::Dump(@dup));
is $ir->{status}, 400, 'a duplicate: 400';
like PurserStack::error_message($id), qr/a second document of this kind and name/, '  saying so';
my @dangling = grep { !($_->{kind} eq 'PolicyRevision' && $_->{metadata}{name} eq 'db/d1') } YAML::XS::Load($full);
($ir, $id) = import_into('exdst', YAML::XS::Dump(@dangling));
is $ir->{status}, 400, 'a group pointing at a revision not in the stream: 400';
like PurserStack::error_message($id), qr/\(PolicyGroup prod\): spec\.policies/, '  naming it';
is table_counts('exdst'), $before, '  checked before anything is written';
# the stream's own checks (lib/transfer: its order from the registry's rows) and the kinds'
# (their transfer hooks, in their own lib files), each naming the document
{
    my @docs = YAML::XS::Load($full);
    my ($org_doc) = grep { $_->{kind} eq 'Organization' } @docs;
    my ($node) = grep { $_->{kind} eq 'Node' } @docs;
    my ($member) = grep { $_->{kind} eq 'Member' } @docs;
    my ($artifact) = grep { $_->{kind} eq 'CookbookArtifact' } @docs;
    my ($tag) = grep { $_->{kind} eq 'RevisionTag' } @docs;
    my %files = %{ $artifact->{spec}{files} };
    delete $artifact->{spec}{files}{ (sort keys %files)[0] };
    for my $case (
        [[$node, $org_doc], qr/^document 1 \(Node web1\): kind: the Organization comes first, once$/, 'the Organization not first'],
        [[$org_doc, $node, $member], qr/^document 3 \(Member \w+\): kind: out of the export's order \(what it refers to comes first\)$/, 'a Member after a Node'],
        [[$org_doc, { %$node, kind => 'Gadget' }], qr/^document 2 \(Gadget web1\): kind: not one an export makes$/, 'an unknown kind'],
        [[$org_doc, $artifact], qr/^document 2 \(CookbookArtifact [^)]+\): spec\.files: a file of the manifest is missing$/, 'an artifact without a file of its manifest'],
        [[$org_doc, $tag], qr/^document 2 \(RevisionTag [^)]+\): no DocumentBucket before it: there is no revision to tag$/, 'a tag with no bucket before it'],
    ) {
        my ($stream, $message, $what) = @$case;
        ($ir, $id) = import_into('exdst', YAML::XS::Dump(@$stream));
        is $ir->{status}, 400, "$what: 400";
        like PurserStack::error_message($id), $message, '  its message' or diag $ir->{content};
    }
    is table_counts('exdst'), $before, '  nothing written';
}
# (review6) the order inside one row's hooks (the revision row writes DocumentBucket, RevisionTag,
# then Validation) and the envelope's own checks, each naming the document
{
    my @docs = YAML::XS::Load($full);
    my ($org_doc) = grep { $_->{kind} eq 'Organization' } @docs;
    my ($bucket) = grep { $_->{kind} eq 'DocumentBucket' } @docs;
    my ($tag) = grep { $_->{kind} eq 'RevisionTag' } @docs;
    my ($validation) = grep { $_->{kind} eq 'Validation' } @docs;
    my ($node) = grep { $_->{kind} eq 'Node' } @docs;
    for my $case (
        [[$org_doc, $tag, $bucket], qr/^document 3 \(DocumentBucket [^)]+\): kind: out of the export's order/, 'a bucket after a tag'],
        [[$org_doc, $bucket, $validation, $tag], qr/^document 4 \(RevisionTag [^)]+\): kind: out of the export's order/, 'a tag after a validation'],
        [[$org_doc, { %$node, version => 'v2' }], qr/^document 2 \(Node web1\): version: must be v1$/, 'a version other than v1'],
        [[$org_doc, { %$node, spec => [] }], qr/^document 2 \(Node web1\): spec: must be a mapping$/, 'a spec that is not a mapping'],
        [[$org_doc, { %$node, metadata => {} }], qr/^document 2 \(Node \?\): metadata\.name: missing$/, 'no metadata.name'],
        [[$org_doc, $org_doc], qr/^document 2 \(Organization [^)]+\): kind: the Organization comes first, once$/, 'a second Organization'],
    ) {
        my ($stream, $message, $what) = @$case;
        ($ir, $id) = import_into('exdst', YAML::XS::Dump(@$stream));
        is $ir->{status}, 400, "$what: 400";
        like PurserStack::error_message($id), $message, '  its message' or diag $ir->{content};
    }
    is table_counts('exdst'), $before, '  nothing written';
}
($ir, $id) = import_into($src, $full);
is $ir->{status}, 409, 'into an organization that is not empty: 409';

# ---- RBAC ----
{
    ok_call('user', 'POST', '/users', { username => 'exop' });
    ok_call('member', 'POST', "$base/users", { username => 'exop', roles => ['operator'] });
    my $op = ok_call('token', 'POST', '/users/exop/tokens', { description => 't' })->{token};
    ok_call('user', 'POST', '/users', { username => 'exadm' });
    ok_call('member', 'POST', "$base/users", { username => 'exadm', roles => ['admin'] });
    ok_call('member', 'POST', '/organizations/exdst/users', { username => 'exadm', roles => ['admin'] });
    my $adm = ok_call('token', 'POST', '/users/exadm/tokens', { description => 't' })->{token};
    is export_of($src, '', token => $op)->{status}, 403, 'an operator may not export';
    is export_of($src, '', token => $adm)->{status}, 200, 'an admin may';
    my ($x) = import_into('exdst', $full, token => $adm);
    is $x->{status}, 403, 'but not import (server admins only: it creates users)';
    my ($y, $yd) = call('GET', "/organizations/$src/export?secrets=yes");
    is $y->{status}, 400, 'secrets must be true or false';
    ok_call('member', 'DELETE', '/organizations/exdst/users/exadm');
}

# ---- the round trip ----
($ir, $id) = import_into('exdst', $full);
is $ir->{status}, 201, 'importing the full export into an empty organization: 201'
    or diag $ir->{content};
is $id->{imported}{PolicyRevision}, 3, '  counting what it wrote';
is sql1("SELECT CONCAT(sub_kind, ' ', expires_at) FROM principals WHERE name = 'exbot' AND org_id = (SELECT id FROM organizations WHERE name = 'exdst')"),
    'ci-runner 2098-05-06 07:08:09.000000', '  the client made with its sub_kind and expiry';
$r = export_of('exdst', 'secrets=true');
(my $expected = $full) =~ s/\b$src\b/exdst/g;
my $again = $r->{content};
is $again, $expected, 'export, import, export: the streams are equal apart from the organization\'s name'
    or do { open my $fa, '>', '/tmp/6007-a.yaml'; print $fa $expected; open my $fb, '>', '/tmp/6007-b.yaml'; print $fb $again; diag 'see /tmp/6007-a.yaml and -b' };
{
    my (undef, $page) = call('GET', '/organizations/exdst/clients?page_size=100');
    my %st = map { $_->{metadata}{name} => $_->{status} } @{ $page->{items} };
    is_deeply [ @st{qw(c-west exstaging exclient)} ],
        [ { roles => ['cluster'], policy_groups => {} }, { roles => ['node'], policy_groups => { node => ['staging'] } },
          { roles => ['node'], policy_groups => {} } ], 'the imported clients hold the roles and limits they held';
}
is exstaging_reads('exdst', 'staging'), 200, "the imported limited client, signed with its key, reads staging's lock";
is exstaging_reads('exdst', 'prod'), 403, '  and not prod\'s (its limit came along)';
my (undef, $fetched) = call('GET', '/organizations/exdst/policy_groups/prod/policies/web');
is $fetched->{revision_id}, 'w1', 'the imported group serves its lock';
my $rendered = $s->request('GET', '/organizations/exdst/api/v1.0/revisions/' . sql1("SELECT MAX(id) FROM doc_revisions WHERE org_id = (SELECT id FROM organizations WHERE name = 'exdst')") . '/rendered-documents?metadata.name=child',
    { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') } });
like $rendered->{content}, qr/password: s3cr3t-passphrase/, 'its documents render, layering and the secret substituted';
my ($er, $ed) = call('GET', '/organizations/exdst/events?page_size=1000');
my %ek;
$ek{ $_->{kind} }++ for @{ $ed->{events} };
ok $ek{policy_revision} && $ek{node} && $ek{cluster} && $ek{document_revision}, 'an import appends its events like other writes';

# ---- the command ----
my $purser = ($ENV{PURSER_BUILD} // PurserStack::root() . '/build') . '/purser';
my $dir = tempdir(CLEANUP => 1);
my $cfg = $s->dir . '/purser.yaml';
my $out = `'$purser' -c '$cfg' export $src --secrets -o '$dir/src.yaml' 2>&1`;
is $?, 0, 'purser export ORG -o FILE' or diag $out;
is((stat "$dir/src.yaml")[2] & 0777, 0600, '  writes the file with mode 600');
open my $fh, '<', "$dir/src.yaml" or die;
my $cli = do { local $/; <$fh> };
is $cli, export_of($src, 'secrets=true')->{content}, '  the same stream as the API';
ok_call('org', 'POST', '/organizations', { name => 'excli' });
$out = `'$purser' -c '$cfg' import excli '$dir/src.yaml' 2>&1`;
is $?, 0, 'purser import ORG FILE' or diag $out;
like $out, qr/imported \d+ documents/, '  saying what it wrote';
$out = `'$purser' -c '$cfg' import excli '$dir/src.yaml' 2>&1`;
isnt $?, 0, '  a second time: refused';
like $out, qr/not empty/, '  the organization is not empty';

$s->stop;
done_testing;

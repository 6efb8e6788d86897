# PurserFill: an organization with every kind of data (t/8004 backups, t/8005 upgrades), as
# t/6007 fills one: a member with keys, a client, policy revisions pointed at by groups, a
# node, a cookbook artifact with files, layered documents with an encrypted secret in a second
# bucket, a tag, a validation, clusters with labels and facts; then its export, with secrets,
# through `purser export` on the host.
package PurserFill;
use strict;
use warnings;
use Digest::MD5 qw(md5_hex);
use JSON::PP;

# fill(STACK, ORG): makes ORG and fills it.
sub fill {
    my ($s, $org) = @_;
    my $base = "/organizations/$org";
    $s->must('org', 'POST', '/organizations', { name => $org, full_name => "Filled $org" });
    $s->must('user', 'POST', '/users', { username => "$org-user", display_name => 'A User', email => "$org\@example.com" });
    $s->must('key', 'POST', "/users/$org-user/keys", { name => 'laptop', create_key => JSON::PP::true(), expiration_date => 'infinity' });
    $s->must('member', 'POST', "$base/users", { username => "$org-user", roles => ['operator'] });
    $s->must('member', 'POST', "$base/users", { username => 'admin', roles => ['admin'] });
    $s->must('client', 'POST', "$base/clients", { name => "$org-client" });
    my $lock = sub {
        my ($name, $rev) = @_;
        return { revision_id => $rev, name => $name, run_list => ['recipe[base::default]'],
                 cookbook_locks => { base => { version => '1.0.0', identifier => "id-$rev" } },
                 default_attributes => { tier => $rev }, override_attributes => {} };
    };
    $s->must('lock', 'PUT', "$base/policy_groups/staging/policies/web", $lock->('web', 'w1'));
    $s->must('lock', 'PUT', "$base/policy_groups/staging/policies/web", $lock->('web', 'w2'));
    $s->must('lock', 'PUT', "$base/policy_groups/prod/policies/web", $lock->('web', 'w1'));
    $s->must('lock', 'PUT', "$base/policy_groups/prod/policies/db", $lock->('db', 'd1'));
    $s->must('node', 'POST', "$base/nodes", { name => 'web1', policy_name => 'web', policy_group => 'prod', normal => { role => 'web' } });
    my %files = ('recipes/default.rb' => "package 'x'\n", 'files/blob.bin' => join('', map { chr($_ % 256) } 0 .. 1023));
    my %sum = map { $_ => md5_hex($files{$_}) } keys %files;
    my $sb = $s->must('sandbox', 'POST', "$base/sandboxes", { checksums => { map { $_ => undef } values %sum } });
    for my $f (sort keys %files) {
        (my $path = $sb->{checksums}{ $sum{$f} }{url}) =~ s{^https://[^/]+}{};
        my $r = $s->request('PUT', $path, { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN'),
            'content-type' => 'application/octet-stream' }, content => $files{$f} });
        die "upload: $r->{status}" unless $r->{status} == 200;
    }
    $s->must('commit', 'PUT', "$base/sandboxes/$sb->{sandbox_id}", { is_completed => JSON::PP::true() });
    $s->must('artifact', 'PUT', "$base/cookbook_artifacts/base/abc123", { name => 'base', identifier => 'abc123', version => '1.0.0',
        chef_type => 'cookbook_version', metadata => { name => 'base', version => '1.0.0', dependencies => {} },
        all_files => [ map { { name => $_, path => $_, checksum => $sum{$_}, specificity => 'default' } } sort keys %files ] });
    my $docs = "$base/api/v1.0";
    $s->yaml_call('PUT', "$docs/buckets/site/documents", <<'YAML');
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
    $s->yaml_call('PUT', "$docs/buckets/secrets/documents", <<"YAML");
---
schema: deckhand/Passphrase/v1
metadata: {schema: metadata/Document/v1, name: db-pass, storagePolicy: encrypted, layeringDefinition: {abstract: false, layer: site}}
data: s3cr3t-passphrase-$org
YAML
    # a second revision of the site: history in more than one revision
    $s->yaml_call('PUT', "$docs/buckets/site/documents", <<'YAML');
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
data: {a: 2, b: {c: 2}}
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
    my $rev = $s->sql("SELECT MAX(id) FROM doc_revisions WHERE org_id = (SELECT id FROM organizations WHERE name = '$org')");
    chomp $rev;
    $s->yaml_call('POST', "$docs/revisions/$rev/tags/golden", "note: good\n");
    $s->yaml_call('POST', "$docs/revisions/$rev/validations/promenade-site-validation",
        "status: success\nvalidator: {name: promenade, version: 1.1.2}\n");
    $s->must('cluster', 'POST', "$base/clusters", { metadata => { name => 'east', labels => { env => 'prod' }, annotations => { owner => 'ops' } },
        spec => { display_name => 'East', facts => { region => 'us-east' } } });
    $s->must('cluster', 'POST', "$base/clusters", { metadata => { name => 'west' } });
    $s->must('facts', 'PUT', "$base/clusters/c-east/facts", { kernel => '6.1', nodes => 3 });
    return 1;
}

# export(PURSER, CONFIG, ORG): `purser export ORG --secrets` (the whole organization, encrypted
# data opened with the keyring), as text; dies when it fails.
sub export {
    my ($purser, $config, $org) = @_;
    my $out = `'$purser' -c '$config' export '$org' --secrets 2>/dev/null`;
    die "purser export $org failed\n" if $?;
    return $out;
}

1;

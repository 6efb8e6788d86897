# 3003: the Policyfile API and nodes through nginx, signed as Chef tooling signs: upload,
# groups, shapes, immutability, cascades, validation messages, and chef-client's sequence.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $s = PurserStack->new(max_body => 16 * 1048576);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org";
my $json = JSON::PP->new->canonical;

sub lock_for {
    my (%o) = @_;
    return {
        revision_id => $o{revision} // 'a1b2c3',
        name => $o{name} // 'web',
        run_list => $o{run_list} // ['recipe[nginx::default]'],
        cookbook_locks => { nginx => { version => $o{version} // '2.7.6', identifier => 'c7d8e0aa',
                                       dotted_decimal_identifier => '56.2077.0', source_options => { path => 'cookbooks/nginx' } } },
        default_attributes => { port => $o{port} // 80 },
        override_attributes => {},
        solution_dependencies => { Policyfile => [['nginx', '>= 0.0.0']], dependencies => {} },
        $o{group} ? (policy_group => $o{group}) : (),
    };
}
sub chef { my (%a) = @_; $a{body} = $json->encode($a{body}) if ref $a{body}; $s->chef(version => '1.3', %a) }

# --- upload and read back ----------------------------------------------------------------------
my $r = chef(method => 'POST', path => "$base/policies/web/revisions", body => lock_for());
is $r->{status}, 201, 'POST a revision is 201';
is_deeply $r->{json}, lock_for(), 'and answers the lock';
$r = chef(method => 'POST', path => "$base/policies/web/revisions", body => lock_for());
is $r->{status}, 409, 'POSTing the same revision_id again is 409';
is $r->{json}{error}[0], "Policy 'web' with revision_id 'a1b2c3' already exists.", 'with its message';

$r = chef(method => 'PUT', path => "$base/policy_groups/staging/policies/web", body => lock_for(group => 'staging'));
is $r->{status}, 201, 'PUT a lock to a new group pointer is 201';
ok !exists $r->{json}{policy_group}, 'the answer leaves out policy_group, as Chef does';
$r = chef(method => 'PUT', path => "$base/policy_groups/staging/policies/web", body => lock_for());
is $r->{status}, 200, 'the same PUT again is 200';
$r = chef(method => 'PUT', path => "$base/policy_groups/staging/policies/web", body => lock_for(port => 8080));
is $r->{status}, 409, 'the same revision_id with different content is 409 (Chef would keep the old silently)';

$r = chef(path => "$base/policy_groups/staging/policies/web");
is $r->{status}, 200, "GET the group's policy";
is_deeply $r->{json}, lock_for(), 'is the lock as uploaded';

# The hot path: an ETag, 304 when the client has it, and the pointer always read afresh.
my $auth = { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') };
my $res = $s->request('GET', "$base/policy_groups/staging/policies/web", { headers => $auth });
like $res->{headers}{etag} // '', qr/^"[0-9a-f]{64}"$/, 'the group policy carries an ETag';
my $etag = $res->{headers}{etag};
$res = $s->request('GET', "$base/policy_groups/staging/policies/web", { headers => { %$auth, 'if-none-match' => $etag } });
is $res->{status}, 304, 'If-None-Match with it: 304';
is $res->{content} // '', '', 'with no body';
$res = $s->request('GET', "$base/policy_groups/staging/policies/web", { headers => { %$auth, 'if-none-match' => '"0000"' } });
is $res->{status}, 200, 'another tag: 200';
is $res->{headers}{etag}, $etag, 'the same ETag';
chef(method => 'PUT', path => "$base/policy_groups/staging/policies/web", body => lock_for(revision => 'tmp1', port => 81));
$res = $s->request('GET', "$base/policy_groups/staging/policies/web", { headers => { %$auth, 'if-none-match' => $etag } });
is $res->{status}, 200, 'after the group moves, the old tag no longer matches (the pointer is never cached)';
is decode_json($res->{content})->{revision_id}, 'tmp1', 'and the new lock comes back';
chef(method => 'PUT', path => "$base/policy_groups/staging/policies/web/revision/a1b2c3");
$res = $s->request('GET', "$base/policy_groups/staging/policies/web", { headers => $auth });
is decode_json($res->{content})->{revision_id}, 'a1b2c3', 'moved back, the cached revision serves again';
chef(method => 'DELETE', path => "$base/policies/web/revisions/tmp1");

$r = chef(method => 'PUT', path => "$base/policy_groups/production/policies/web", body => lock_for(revision => 'd4e5f6', port => 443));
is $r->{status}, 201, 'a second revision, to production';

$r = chef(path => "$base/policies");
is_deeply [ sort keys %{ $r->{json}{web}{revisions} } ], ['a1b2c3', 'd4e5f6'], 'GET policies lists both revisions';
like $r->{json}{web}{uri}, qr{/organizations/$org/policies/web$}, 'with the uri';
is $r->{json}{web}{revisions}{a1b2c3}{created_by}, 'admin', 'and who uploaded each';
like $r->{json}{web}{revisions}{a1b2c3}{created_at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'and when';
$r = chef(path => "$base/policies/web/revisions/a1b2c3");
is_deeply $r->{json}{policy_group_list}, ['staging'], 'a revision knows the groups that point at it';
$r = chef(path => "$base/policy_groups");
is_deeply { map { $_ => $r->{json}{$_}{policies} } keys %{ $r->{json} } },
    { staging => { web => { revision_id => 'a1b2c3' } }, production => { web => { revision_id => 'd4e5f6' } } },
    'GET policy_groups maps groups to their pointers';
chef(method => 'PUT', path => "$base/policy_groups/idle/policies/web", body => lock_for(revision => 'a1b2c3'));
$r = chef(method => 'DELETE', path => "$base/policy_groups/idle/policies/web");
is $r->{status}, 200, 'the only pointer of group idle is removed';
$r = chef(path => "$base/policy_groups");
ok exists $r->{json}{idle} && exists $r->{json}{idle}{uri}, 'a group with no pointers is still listed';
ok !exists $r->{json}{idle}{policies}, 'without a "policies" key, as Chef lists it';
chef(method => 'DELETE', path => "$base/policy_groups/idle");

# --- validation through HTTP -------------------------------------------------------------------
my %bad = (
    "Field 'revision_id' invalid" => lock_for(revision => 'a/b'),
    "Field 'name' invalid : web does not match db" => lock_for(name => 'db'),
    "Field 'run_list' is not a valid run list" => lock_for(run_list => ['role[base]']),
    "Field 'version' is not a valid version" => lock_for(version => '1.2.3.4'),
);
my $count = $s->sql('SELECT COUNT(*) FROM policy_revisions');
for my $message (sort keys %bad) {
    $r = chef(method => 'PUT', path => "$base/policy_groups/staging/policies/web", body => $bad{$message});
    is $r->{status}, 400, "bad lock: 400";
    is $r->{json}{error}[0], $message, "  $message";
}
$r = $s->chef(version => '1.3', method => 'POST', path => "$base/policies/web/revisions", body => '{"revision_id": "x" ' . (' ' x 2000000) . '}');
is $r->{status}, 413, 'a lock over 2,000,000 bytes is 413';
is $r->{json}{error}[0], 'JSON must be no more than 2000000 bytes.', '  by the lock limit, not the server-wide one';
is $s->sql('SELECT COUNT(*) FROM policy_revisions'), $count, 'no bad lock was stored';

# --- chef-client's sequence, as a node client ---------------------------------------------------
$r = chef(method => 'POST', path => "$base/clients", body => { name => 'web1' });
my $keyfile = $s->dir . '/web1.pem';
{ open my $fh, '>', $keyfile or die; print $fh $r->{json}{chef_key}{private_key}; }
my %node = (user => 'web1', key => $keyfile);
$r = chef(%node, path => "$base/nodes/web1");
is $r->{status}, 404, 'chef-client: GET its node, 404';
$r = chef(%node, method => 'POST', path => "$base/nodes", body => { name => 'web1', policy_name => 'web', policy_group => 'staging' });
is $r->{status}, 201, 'then creates it';
$r = chef(%node, path => "$base/policy_groups/staging/policies/web");
is $r->{status}, 200, "fetches its group's policy";
is $r->{json}{revision_id}, 'a1b2c3', 'the revision staging points at';
$r = chef(%node, method => 'PUT', path => "$base/nodes/web1",
          body => { name => 'web1', policy_name => 'web', policy_group => 'staging', automatic => { platform => 'debian' } });
is $r->{status}, 200, 'and saves its node at the end of the run';
$r = chef(path => "$base/nodes/web1");
is $r->{json}{automatic}{platform}, 'debian', 'the node keeps what was saved';
is $r->{json}{chef_environment}, '_default', "with Chef's defaults filled";
$r = chef(method => 'PUT', path => "$base/nodes/web1", body => { name => 'web1', policy_group => 'bad group' });
is $r->{status}, 400, 'policy_group is validated like a policy name';
is $r->{json}{error}[0], "Field 'policy_group' invalid", '  naming it';
$r = chef(method => 'PUT', path => "$base/nodes/web1", body => { name => 'web2' });
is $r->{status}, 400, 'a node cannot be renamed by PUT';
$r = chef(%node, method => 'PUT', path => "$base/policy_groups/staging/policies/web", body => lock_for(revision => 'evil'));
is $r->{status}, 403, 'a node may not change what its group points at';

# --- cascades ----------------------------------------------------------------------------------
$r = chef(method => 'DELETE', path => "$base/policies/web/revisions/a1b2c3");
is $r->{status}, 200, 'deleting a revision';
$r = chef(path => "$base/policy_groups/staging/policies/web");
is $r->{status}, 404, 'removes it from every group';
$r = chef(method => 'DELETE', path => "$base/policy_groups/production");
is $r->{status}, 200, 'deleting a group';
$r = chef(path => "$base/policies/web/revisions/d4e5f6");
is $r->{status}, 200, 'keeps the revisions';
$r = chef(method => 'DELETE', path => "$base/policies/web");
is $r->{status}, 200, 'deleting the policy';
is $s->sql('SELECT COUNT(*) FROM policy_revisions'), "0\n", 'deletes its revisions';
$r = chef(path => "$base/policies/web");
is $r->{status}, 404, 'and it is gone';
is $r->{json}{error}[0], 'Cannot load policy web', "Chef's message";

PurserStack::finish();

#!/usr/bin/perl
# 6008: a tenant with contents is not deleted by accident (issue 32, item 3). DELETE of an
# organization that holds clusters, nodes, policies, document revisions or clients (besides
# its own validator; members are not contents) is 409 in Chef's error form, listing what it
# holds with counts (also as `contents`), and changes nothing. ?force=true deletes it all, for
# a server admin only (a role granting delete_organization does not grant the force: 403
# saying so), and the deletion is logged at warning with the organization, the principal and
# the counts, as the organization's own events go with it. force= other than true or false is
# 400; an organization with only its validator and members deletes as before. Uploaded files
# and open sandboxes count too, and an import into the organization asks the same list.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $s = PurserStack->new(workers => 2);
sub call { $s->call(@_) }
sub ok_call { $s->must(@_) }
sub status { ($s->call(@_))[0]{status} }
sub msg { PurserStack::error_message(@_) }
sub sql1 { my $v = $s->sql($_[0]); chomp $v; $v }
# The rows of the organization's id where its contents, members and history live (a policy
# revision through its policy).
sub counts_of {
    my ($id) = @_;
    my @tables = qw(principals memberships policies nodes doc_revisions resources events);
    return join ',', (map { "$_=" . sql1("SELECT COUNT(*) FROM $_ WHERE org_id = $id") } @tables),
        'policy_revisions=' . sql1('SELECT COUNT(*) FROM policy_revisions r JOIN policies p'
                                   . " ON p.id = r.policy_id WHERE p.org_id = $id");
}
sub log_entries {
    my ($message) = @_;
    return grep { ($_->{msg} // '') eq $message }
        map { eval { decode_json($_) } // () } $s->log_lines('purser-fcgi.log');
}

# ---- an organization with contents, and a member with the admin role ----
ok_call('org', 'POST', '/organizations', { name => 'acme' });
my $base = '/organizations/acme';
ok_call('user', 'POST', '/users', { username => 'bob' });
ok_call('member', 'POST', "$base/users", { username => 'bob', roles => ['admin'] });
my $bob = ok_call('token', 'POST', '/users/bob/tokens', {})->{token};
ok_call('cluster', 'POST', "$base/clusters", { metadata => { name => 'east' } });
ok_call('node', 'POST', "$base/nodes", { name => 'web1' });
ok_call('node', 'POST', "$base/nodes", { name => 'web2' });
ok_call('policy', 'POST', "$base/policies/web/revisions", {
    revision_id => 'a1b2c3', name => 'web', run_list => ['recipe[base::default]'],
    cookbook_locks => { base => { version => '1.0.0', identifier => 'c7d8e0aa' } },
    default_attributes => {}, override_attributes => {} });
$s->yaml_call('PUT', "$base/api/v1.0/buckets/site/documents", <<'YAML');
---
schema: example/Kind/v1
metadata:
  schema: metadata/Document/v1
  name: one
  layeringDefinition: {abstract: false, layer: site}
data: {a: 1}
YAML
ok_call('client', 'POST', "$base/clients", { name => 'worker1' });
my $id = sql1("SELECT id FROM organizations WHERE name = 'acme'");
my $before = counts_of($id);
my $expected = { clusters => 1, nodes => 2, policies => 1, document_revisions => 1, clients => 1 };

# ---- not empty: 409, listing what it holds, and nothing changes ----
my ($r, $d) = call('DELETE', $base);
is $r->{status}, 409, 'DELETE of an organization with contents: 409';
is msg($d), "organization 'acme' is not empty: 1 cluster, 2 nodes, 1 policy, 1 document "
    . "revision, 1 client; export it first (purser export acme, or GET /organizations/acme/export) "
    . "and delete it with ?force=true (a server admin)",
    '  listing each kind with its count, and the way on';
is ref $d->{error}, 'ARRAY', "  in Chef's error form";
is_deeply $d->{contents}, $expected,
    '  the counts as contents (the validator and the member are not counted)';
($r, $d) = call('DELETE', "$base?force=false");
is $r->{status}, 409, 'force=false: the same 409';
is_deeply $d->{contents}, $expected, '  with the same counts';
is counts_of($id), $before, '  the store is unchanged (no row, no event)';
is status('GET', $base), 200, '  the organization is there';
is status('GET', "$base/clusters/c-east"), 200, '  its cluster';
is status('GET', "$base/nodes/web1"), 200, '  its nodes';
is status('GET', "$base/nodes/web2"), 200, '  both';
is status('GET', "$base/policies/web/revisions/a1b2c3"), 200, '  its policy revision';
($r, $d) = call('GET', "$base/api/v1.0/revisions/1/documents");
is $r->{status}, 200, '  its document revision';
is scalar(@{ $d // [] }), 1, '  with its document';
is status('GET', "$base/clients/worker1"), 200, '  its client';
is status('GET', "$base/clients/acme-validator"), 200, '  and its validator';

# ---- force: 400 for a value that is not true or false; 403 for who is not a server admin ----
($r, $d) = call('DELETE', "$base?force=maybe");
is $r->{status}, 400, 'force=maybe: 400';
like msg($d), qr/^force: true or false, not 'maybe'/, '  naming force';
($r, $d) = call('DELETE', "$base?force=true", undef, authorization => "Bearer $bob");
is $r->{status}, 403, 'a member with the admin role and force=true: 403';
like msg($d), qr/delete_organization/,
    '  no role holds delete_organization (policies/default.yaml)';

# A role that grants delete_organization still does not grant the force.
my $default = do {
    open my $fh, '<', PurserStack::root() . '/policies/default.yaml' or die;
    local $/;
    <$fh>;
};
(my $granting = $default) =~ s/(  admin:\n(?:.*\n)*?    actions:\n)/$1      - delete_organization\n/
    or die 'no admin role';
my $policy = $s->dir . '/policy.yaml';
{ open my $fh, '>', $policy or die; print $fh $granting; }
$s->use_policy_file($policy);
my @old = $s->worker_pids;
kill 'HUP', $s->master_pid;
ok PurserStack::wait_for(5, sub {
        my %old = map { $_ => 1 } @old;
        my @now = $s->worker_pids;
        @now == 2 && !grep { $old{$_} } @now;
    }),
    'reloaded with a policy whose admin role holds delete_organization';
($r, $d) = call('DELETE', "$base?force=true", undef, authorization => "Bearer $bob");
is $r->{status}, 403, '  that member with force=true: still 403';
is msg($d), 'force=true deletes everything the organization holds: only a server admin may',
    '  saying why';
($r, $d) = call('DELETE', $base, undef, authorization => "Bearer $bob");
is $r->{status}, 409, '  without force: 409, as for anyone';
is counts_of($id), $before, '  the store is still unchanged';

# ---- a server admin with force=true: all of it goes, and the log keeps it ----
($r, $d) = call('DELETE', "$base?force=true");
is $r->{status}, 200, 'a server admin with force=true: 200';
is $d->{name}, 'acme', "  answering the organization, as Chef's DELETE does";
is status('GET', $base), 404, '  it is gone';
is counts_of($id),
    'principals=0,memberships=0,policies=0,nodes=0,doc_revisions=0,resources=0,events=0,'
    . 'policy_revisions=0',
    '  with everything it held, its history too';
my @logged = grep { ($_->{organization} // '') eq 'acme' }
    log_entries('organization deleted with its contents');
is scalar(@logged), 1, '  one log line records it';
is $logged[0]{level}, 'warning', '  at warning';
is $logged[0]{principal}, 'admin', '  naming who';
is_deeply $logged[0]{contents}, $expected, '  and what it held';

# ---- an empty organization (its validator and a member) deletes without force ----
ok_call('org', 'POST', '/organizations', { name => 'empty1' });
ok_call('member', 'POST', '/organizations/empty1/users', { username => 'bob', roles => ['admin'] });
($r, $d) = call('DELETE', '/organizations/empty1', undef, authorization => "Bearer $bob");
is $r->{status}, 200, 'an organization with only its validator and members: 200 without force';
is $d->{name}, 'empty1', '  answering it';
is status('GET', '/organizations/empty1'), 404, '  it is gone';
@logged = grep { ($_->{organization} // '') eq 'empty1' } log_entries('organization deleted');
is scalar(@logged), 1, '  logged';
is $logged[0]{level}, 'info', '  at info: it held nothing';
is $logged[0]{principal}, 'bob', '  by bob, whose role holds delete_organization now';
is status('DELETE', '/organizations/empty1'), 404, 'deleting it again: 404';

# ---- uploaded files and open sandboxes are contents too, for a delete and for an import: one
# list of what makes an organization non-empty (issue 50) ----
{
    require Digest::MD5;
    ok_call('org', 'POST', '/organizations', { name => 'uploads' });
    ok_call('org', 'POST', '/organizations', { name => 'nothing' });
    my $content = "uploaded\n";
    my $md5 = Digest::MD5::md5_hex($content);
    my $box = ok_call('sandbox', 'POST', '/organizations/uploads/sandboxes', { checksums => { $md5 => undef } });
    my ($path) = $box->{checksums}{$md5}{url} =~ m{^https?://[^/]+(/.*)$};
    my $put = $s->request('PUT', $path, { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN'),
        'content-type' => 'application/x-binary' }, content => $content });
    is $put->{status}, 200, 'an organization with only an uploaded file in an open sandbox';
    ($r, $d) = call('DELETE', '/organizations/uploads');
    is $r->{status}, 409, '  DELETE: 409';
    is_deeply $d->{contents}, { files => 1, sandboxes => 1 }, '  counting the file and the sandbox';
    like msg($d), qr/not empty: 1 uploaded file, 1 sandbox;/, '  in words';
    my $export = $s->request('GET', '/organizations/nothing/export', { headers => {
        authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') } });
    is $export->{status}, 200, "an empty organization's export";
    ($r, $d) = call('POST', '/organizations/uploads/import', $export->{content},
                    'content-type' => 'application/x-yaml');
    is $r->{status}, 409, '  imported into it: 409, by the same list';
    like msg($d), qr/'uploads' is not empty \(1 uploaded file, 1 sandbox\)/, '  naming what it holds';
    is status('GET', "/organizations/uploads/file_store/$md5"), 200, '  the file is still there';
}

PurserStack::finish();

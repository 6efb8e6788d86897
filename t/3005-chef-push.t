# 3005: the `chef push` sequence and chef-client's downloads, signed as Chef tooling signs:
# GET cookbook_artifacts, POST sandboxes, PUT the files, commit the sandbox, PUT the artifact,
# PUT the lock to the group; then a node fetches its policy, its artifacts and their files.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use Digest::MD5 qw(md5_hex);
use PurserStack;

my $s = PurserStack->new;
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org";
my $json = JSON::PP->new->canonical;
sub chef { my (%a) = @_; $a{body} = $json->encode($a{body}) if ref $a{body}; $s->chef(version => '1.3', %a) }
sub path_of { my ($url) = @_; $url =~ s{^https://[^/]+}{}; $url }

my %files = ('recipes/default.rb' => "package 'nginx'\nservice 'nginx' do\n  action :start\nend\n",
             'metadata.json' => '{"name":"nginx","version":"2.7.6"}',
             'files/default/blob.bin' => join('', map { chr($_ % 256) } 0 .. 4095));
my %sum = map { $_ => md5_hex($files{$_}) } keys %files;
my $identifier = 'c7d8e0aa5b7e1d';

my $r = chef(path => "$base/cookbook_artifacts");
is $r->{status}, 200, 'GET cookbook_artifacts';
is_deeply $r->{json}, {}, 'none yet';

$r = chef(method => 'POST', path => "$base/sandboxes", body => { checksums => { map { $_ => undef } values %sum } });
is $r->{status}, 201, 'POST sandboxes';
my $sandbox = $r->{json};
like $sandbox->{sandbox_id}, qr/^[0-9a-f]{32}$/, 'a sandbox id';
is scalar(grep { $_->{needs_upload} } values %{ $sandbox->{checksums} }), 3, 'every file needs an upload';

$r = chef(method => 'PUT', path => "$base/sandboxes/$sandbox->{sandbox_id}", body => { is_completed => JSON::PP::true() });
is $r->{status}, 400, 'committing before the uploads is refused';
like $r->{json}{error}[0], qr/was not uploaded/, 'saying why';

my ($first) = sort keys %files;
$r = chef(method => 'PUT', path => path_of($sandbox->{checksums}{ $sum{$first} }{url}), body => "tampered");
is $r->{status}, 400, 'an upload whose content does not match its checksum is refused';
for my $name (sort keys %files) {
    $r = chef(method => 'PUT', path => path_of($sandbox->{checksums}{ $sum{$name} }{url}), body => $files{$name});
    is $r->{status}, 200, "upload $name";
}
$r = chef(method => 'PUT', path => "$base/sandboxes/$sandbox->{sandbox_id}", body => { is_completed => JSON::PP::true() });
is $r->{status}, 200, 'commit the sandbox';
is $r->{json}{is_completed}, JSON::PP::true(), 'completed';

my $artifact = { name => 'nginx', identifier => $identifier, version => '2.7.6', chef_type => 'cookbook_version',
                 metadata => { name => 'nginx', version => '2.7.6', dependencies => {} },
                 all_files => [ map { { name => $_, path => $_, checksum => $sum{$_}, specificity => 'default' } } sort keys %files ] };
$r = chef(method => 'PUT', path => "$base/cookbook_artifacts/nginx/$identifier", body => $artifact);
is $r->{status}, 201, 'PUT the artifact: 201';
$r = chef(method => 'PUT', path => "$base/cookbook_artifacts/nginx/$identifier", body => $artifact);
is $r->{status}, 200, 'the identical artifact again: 200';
$r = chef(method => 'PUT', path => "$base/cookbook_artifacts/nginx/$identifier", body => { %$artifact, version => '2.7.7' });
is $r->{status}, 409, 'other content under the same identifier: 409';
$r = chef(method => 'PUT', path => "$base/cookbook_artifacts/nginx/other1",
          body => { %$artifact, identifier => 'other1', all_files => [{ name => 'x', path => 'x', checksum => 'f' x 32, specificity => 'default' }] });
is $r->{status}, 400, 'a manifest naming a file never uploaded is refused';
like $r->{json}{error}[0], qr/hasn't yet been uploaded/, 'saying so';

my $lock = { revision_id => 'push1', name => 'web', run_list => ['recipe[nginx::default]'],
             cookbook_locks => { nginx => { version => '2.7.6', identifier => $identifier } } };
$r = chef(method => 'PUT', path => "$base/policy_groups/prod/policies/web", body => $lock);
is $r->{status}, 201, 'PUT the lock to the group: chef push is done';

$r = chef(method => 'POST', path => "$base/sandboxes", body => { checksums => { $sum{$first} => undef } });
is $r->{json}{checksums}{ $sum{$first} }{needs_upload}, JSON::PP::false(), 'a second push needs no upload of stored content';

# --- chef-client ------------------------------------------------------------------------------
$r = chef(method => 'POST', path => "$base/clients", body => { name => 'node1' });
my $keyfile = $s->dir . '/node1.pem';
{ open my $fh, '>', $keyfile or die; print $fh $r->{json}{chef_key}{private_key}; }
my %as_node = (user => 'node1', key => $keyfile);
$r = chef(%as_node, path => "$base/nodes/node1");
is $r->{status}, 404, 'chef-client: GET nodes/node1 is 404 on the first run';
$r = chef(%as_node, method => 'POST', path => "$base/nodes", body => { name => 'node1', policy_name => 'web', policy_group => 'prod' });
is $r->{status}, 201, 'so it creates its node';
$r = chef(%as_node, path => "$base/policy_groups/prod/policies/web");
is $r->{status}, 200, 'the node fetches its policy';
for my $cookbook (sort keys %{ $r->{json}{cookbook_locks} }) {
    my $id = $r->{json}{cookbook_locks}{$cookbook}{identifier};
    my $a = chef(%as_node, path => "$base/cookbook_artifacts/$cookbook/$id");
    is $a->{status}, 200, "then the artifact $cookbook";
    is scalar(@{ $a->{json}{all_files} }), 3, 'with its files';
    for my $file (@{ $a->{json}{all_files} }) {
        my $d = chef(%as_node, path => path_of($file->{url}));
        is $d->{status}, 200, "downloads $file->{path}";
        is $d->{body}, $files{ $file->{path} }, "  byte for byte";
    }
}
$r = chef(%as_node, method => 'PUT', path => "$base/nodes/node1",
          body => { name => 'node1', policy_name => 'web', policy_group => 'prod', automatic => { ohai_time => 1 } });
is $r->{status}, 200, 'and saves its node at the end of the run';
$r = chef(path => "$base/cookbook_artifacts");
is_deeply [ map { $_->{identifier} } @{ $r->{json}{nginx}{versions} } ], [$identifier], 'the listing shows the artifact';
$r = chef(%as_node, method => 'PUT', path => "$base/cookbook_artifacts/nginx/x2", body => { %$artifact, identifier => 'x2' });
is $r->{status}, 403, 'a node may not upload artifacts';
$r = chef(method => 'DELETE', path => "$base/cookbook_artifacts/nginx/$identifier");
is $r->{status}, 200, 'delete the artifact';
$r = chef(path => "$base/cookbook_artifacts/nginx");
is $r->{status}, 404, 'then it is gone';

PurserStack::finish();

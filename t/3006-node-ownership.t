# 3006: who may change a node, as the Chef Infra Server's node ACL decides: a client with the
# `node` role changes and deletes only the nodes it created; the validator only registers
# clients; operators and admins change every node. Every client here registers the way
# chef-client does (through the validator) and signs its requests with mixlib-authentication.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $s = PurserStack->new;
my $json = JSON::PP->new->canonical;
my $base = '/organizations/fleet';

sub write_key { my ($name, $pem) = @_; my $f = $s->dir . "/$name.pem"; open my $fh, '>', $f or die; print $fh $pem // ''; $f }
sub as {
    my ($who, %a) = @_;
    $a{body} = $json->encode($a{body}) if ref $a{body};
    return $s->chef(version => '1.3', user => $who->{user}, key => $who->{key}, %a);
}
sub node_body { my ($name, $group, %extra) = @_; { name => $name, policy_name => 'web', policy_group => $group, %extra } }
sub group_of {
    my ($name) = @_;
    my $g = $s->sql("SELECT n.policy_group FROM nodes n JOIN organizations o ON o.id = n.org_id WHERE o.name = 'fleet' AND n.name = '$name'");
    chomp $g;
    return $g;
}
sub creator_of {
    my ($name) = @_;
    my $c = $s->sql("SELECT COALESCE(p.name, 'NULL') FROM nodes n JOIN organizations o ON o.id = n.org_id"
                    . " LEFT JOIN principals p ON p.id = n.creator_id WHERE o.name = 'fleet' AND n.name = '$name'");
    chomp $c;
    return $c;
}

my ($res, $j) = $s->api('POST', '/organizations', { name => 'fleet', full_name => 'The fleet' });
is $res->{status}, 201, 'an organization for the fleet';
my $validator = { user => 'fleet-validator', key => write_key('validator', $j->{private_key}) };

# chef-client's first run: the validator registers the machine's client.
my %client;
for my $name (qw(web1 web2)) {
    my $r = as($validator, method => 'POST', path => "$base/clients", body => { name => $name });
    is $r->{status}, 201, "the validator registers client $name";
    $client{$name} = { user => $name, key => write_key($name, $r->{json}{chef_key}{private_key}) };
    $r = as($client{$name}, method => 'POST', path => "$base/nodes", body => node_body($name, 'staging'));
    is $r->{status}, 201, "$name creates its node";
    is creator_of($name), $name, "  and is recorded as its creator";
}

# --- a client and its own node ------------------------------------------------------------------
my $r = as($client{web1}, method => 'PUT', path => "$base/nodes/web1", body => node_body('web1', 'staging', automatic => { ohai_time => 1 }));
is $r->{status}, 200, 'a client saves its own node';
is $r->{json}{automatic}{ohai_time}, 1, '  and gets it back';
$r = as($client{web1}, method => 'PUT', path => "$base/nodes/web1", body => node_body('web1', 'production'));
is $r->{status}, 200, 'and may move it to another policy group';
is group_of('web1'), 'production', '  which is stored';

# --- a client and another's node ----------------------------------------------------------------
$r = as($client{web1}, method => 'PUT', path => "$base/nodes/web2", body => node_body('web2', 'production'));
is $r->{status}, 403, "a client may not change another client's node";
is_deeply $r->{json}, { error => ['missing update permission'] }, "  Chef's answer";
is group_of('web2'), 'staging', '  and the node stays in its group';
$r = as($client{web1}, method => 'DELETE', path => "$base/nodes/web2");
is $r->{status}, 403, "nor delete it";
is_deeply $r->{json}, { error => ['missing delete permission'] }, "  Chef's answer";
is group_of('web2'), 'staging', '  and the node is still there';
$r = as($client{web1}, path => "$base/nodes/web2");
is $r->{status}, 200, 'it may still read it';
$r = as($client{web1}, method => 'PUT', path => "$base/nodes/web9", body => node_body('web9', 'staging'));
is $r->{status}, 404, 'a node that does not exist is 404, not 403';
$r = as($client{web1}, method => 'PUT', path => "$base/nodes/web2", body => 'not json');
is $r->{status}, 400, 'a bad body is 400 before anything else';

# --- the validator only registers -----------------------------------------------------------------
$r = as($validator, method => 'PUT', path => "$base/nodes/web1", body => node_body('web1', 'staging'));
is $r->{status}, 403, 'the validator may not change a node';
like $r->{json}{error}[0], qr/'write_node'/, '  it lacks write_node';
$r = as($validator, method => 'DELETE', path => "$base/nodes/web1");
is $r->{status}, 403, 'nor delete one';
$r = as($validator, method => 'POST', path => "$base/nodes", body => node_body('web3', 'staging'));
is $r->{status}, 403, 'nor create one (it only registers clients)';
like $r->{json}{error}[0], qr/'create_node'/, '  it lacks create_node';
is group_of('web1'), 'production', 'web1 is untouched by all that';
is $s->sql("SELECT COUNT(*) FROM nodes n JOIN organizations o ON o.id = n.org_id WHERE o.name = 'fleet'"), "2\n", 'and no node was added';

# --- operators and admins change every node ---------------------------------------------------------
my %token;
for my $role (qw(operator admin)) {
    my $name = "fleet-$role";
    ($res) = $s->api('POST', '/users', { username => $name });
    is $res->{status}, 201, "user $name";
    ($res) = $s->api('POST', "$base/users", { username => $name, roles => [$role] });
    is $res->{status}, 201, "  with role $role";
    (undef, $j) = $s->api('POST', "/users/$name/tokens", {});
    $token{$role} = $j->{token};
}
($res, $j) = $s->api('PUT', "$base/nodes/web2", node_body('web2', 'canary'), $token{operator});
is $res->{status}, 200, "an operator changes a client's node";
is group_of('web2'), 'canary', '  stored';
($res, $j) = $s->api('PUT', "$base/nodes/web2", node_body('web2', 'staging'), $token{admin});
is $res->{status}, 200, "an organization admin too";
is group_of('web2'), 'staging', '  stored';
$r = as({ user => 'admin', key => $s->env('PURSER_ADMIN_KEY') }, method => 'PUT', path => "$base/nodes/web1", body => node_body('web1', 'staging'));
is $r->{status}, 200, 'and the server admin, signing as Chef tooling does';
is group_of('web1'), 'staging', '  stored';
is creator_of('web1'), 'web1', 'changing a node does not change its creator';
$r = as($client{web1}, method => 'PUT', path => "$base/nodes/web1", body => node_body('web1', 'staging'));
is $r->{status}, 200, 'so its client still saves it';

# A node an operator creates (knife node create) is not any client's.
($res) = $s->api('POST', "$base/nodes", node_body('db1', 'staging'), $token{operator});
is $res->{status}, 201, 'an operator creates a node';
is creator_of('db1'), 'fleet-operator', '  and is its creator';
$r = as($client{web1}, method => 'PUT', path => "$base/nodes/db1", body => node_body('db1', 'production'));
is $r->{status}, 403, 'a client may not change it';
($res) = $s->api('DELETE', "$base/nodes/db1", undef, $token{admin});
is $res->{status}, 200, 'an admin deletes it';

# --- deleting and re-registering ---------------------------------------------------------------------
$r = as($client{web1}, method => 'DELETE', path => "$base/nodes/web1");
is $r->{status}, 200, 'a client deletes its own node';
is $r->{json}{name}, 'web1', '  and gets it back, as Chef answers';
$r = as($client{web1}, method => 'POST', path => "$base/nodes", body => node_body('web1', 'staging'));
is $r->{status}, 201, 'and creates it again';

# A deleted client's nodes are nobody's: a new client of the same name (another machine, or
# the same one rebuilt) does not inherit them; an operator or admin hands them over.
($res) = $s->api('DELETE', "$base/clients/web2");
is $res->{status}, 200, 'client web2 is deleted';
is creator_of('web2'), 'NULL', '  and its node has no creator left';
$r = as($validator, method => 'POST', path => "$base/clients", body => { name => 'web2' });
is $r->{status}, 201, 'a new client web2 registers';
my $new_web2 = { user => 'web2', key => write_key('web2-new', $r->{json}{chef_key}{private_key}) };
$r = as($new_web2, method => 'PUT', path => "$base/nodes/web2", body => node_body('web2', 'production'));
is $r->{status}, 403, 'it may not change the old node';
is group_of('web2'), 'staging', '  which stays where it was';

# --- the migration credits nodes stored before it to the client of the same name ----------------------
# (The migration's own SQL is run here, so that later migrations do not change what is tested.)
my ($file) = grep { /_node_creators\.sql$/ } glob(PurserStack::root() . '/sql/*.sql');
ok $file, 'the node creators migration exists';
my $migration = do { open my $fh, '<', $file or die "$file: $!"; local $/; <$fh> };
$s->sql('ALTER TABLE nodes DROP FOREIGN KEY nodes_creator');
$s->sql('ALTER TABLE nodes DROP COLUMN creator_id');
is $s->sql("SELECT COUNT(*) FROM information_schema.columns WHERE table_name = 'nodes' AND column_name = 'creator_id'"), "0\n", 'nodes as they were before it';
$s->sql($migration);
is $s->sql("SELECT COUNT(*) FROM information_schema.columns WHERE table_name = 'nodes' AND column_name = 'creator_id'"), "1\n", 'the migration adds the column';
is creator_of('web1'), 'web1', 'web1 is credited to client web1';
is creator_of('web2'), 'web2', 'web2 to the client now named web2';
$r = as($client{web1}, method => 'PUT', path => "$base/nodes/web1", body => node_body('web1', 'canary'));
is $r->{status}, 200, 'so web1 keeps saving its node after the upgrade';

PurserStack::finish();

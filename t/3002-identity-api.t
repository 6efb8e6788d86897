# 3002: the identity endpoints in Chef's shapes: organizations (with their validator),
# users, clients, keys, members; errors name the field and leave the store unchanged.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

my $s = PurserStack->new;
my $url = $s->url;

sub write_key { my ($name, $pem) = @_; my $f = $s->dir . "/$name.pem"; open my $fh, '>', $f or die; print $fh $pem; $f }
sub count { my ($table) = @_; my $n = $s->sql("SELECT COUNT(*) FROM $table"); chomp $n; $n }

# --- organizations -------------------------------------------------------------------------
my ($r, $j) = $s->api('POST', '/organizations', { name => 'acme', full_name => 'Acme Inc.' });
is $r->{status}, 201, 'POST /organizations is 201';
is $j->{uri}, "$url/organizations/acme", 'with the uri';
is $j->{clientname}, 'acme-validator', 'and the validator client';
like $j->{private_key}, qr/^-----BEGIN RSA PRIVATE KEY-----/, "whose private key is in the answer";
my $validator_key = write_key('acme-validator', $j->{private_key});

($r, $j) = $s->api('GET', '/organizations/acme');
is_deeply [ @$j{qw(name full_name)} ], ['acme', 'Acme Inc.'], 'GET shows name and full name';
like $j->{guid}, qr/^[0-9a-f]{32}$/, 'and a guid';
($r, $j) = $s->api('GET', '/organizations');
is $j->{acme}, "$url/organizations/acme", 'the list maps names to uris';

my $orgs = count('organizations');
for my $bad ([{ full_name => 'x' }, 400, qr/Field 'name' missing/],
             [{ name => 'Bad Name!' }, 400, qr/Field 'name' invalid/],
             [{ name => ['x'] }, 400, qr/Field 'name' invalid/],
             ['{"name":', 400, qr/invalid JSON/],
             [{ name => 'acme' }, 409, qr/already exists/]) {
    my ($body, $status, $msg) = @$bad;
    ($r, $j) = $s->api('POST', '/organizations', $body);
    is $r->{status}, $status, "bad organization: $status";
    like $j->{error}[0], $msg, "  message: $msg";
}
is count('organizations'), $orgs, 'no bad request added an organization';

($r, $j) = $s->api('PUT', '/organizations/acme', { full_name => 'Acme Corporation' });
is $j->{full_name}, 'Acme Corporation', 'PUT changes the full name';
($r, $j) = $s->api('GET', '/organizations/nope');
is $r->{status}, 404, 'an unknown organization is 404';
is $j->{error}[0], "organization 'nope' does not exist", "in Chef's words";

# --- the validator registers a node, as chef-client does on its first run --------------------
my $c = $s->chef(user => 'acme-validator', key => $validator_key, version => '1.1', method => 'POST',
                 path => '/organizations/acme/clients', body => '{"name":"web1.example.com"}');
is $c->{status}, 201, 'the validator creates a client';
my $node_key = write_key('web1', $c->{json}{chef_key}{private_key} // '');
like $c->{json}{chef_key}{private_key} // '', qr/PRIVATE KEY/, 'the new client gets its private key, once';
is $c->{json}{chef_key}{expiration_date}, 'infinity', 'a key that does not expire';
$c = $s->chef(user => 'web1.example.com', key => $node_key, version => '1.3', path => '/organizations/acme');
is $c->{status}, 200, 'the new client signs its own requests';
$c = $s->chef(user => 'web1.example.com', key => $node_key, version => '1.3', path => '/organizations/acme/clients');
is $c->{status}, 403, 'but, as a node, may not list clients';
($r, $j) = $s->api('GET', '/organizations/acme/clients/web1.example.com');
is_deeply $j, { name => 'web1.example.com', clientname => 'web1.example.com', orgname => 'acme', validator => JSON::PP::false(),
                json_class => 'Chef::ApiClient', chef_type => 'client' }, 'GET client in Chef\'s shape';
($r, $j) = $s->api('GET', '/organizations/acme/clients/web1.example.com/keys/default');
like $j->{public_key}, qr/BEGIN PUBLIC KEY/, 'the stored key is public only';
ok !exists $j->{private_key}, 'the private key is not kept';

# --- users and keys ------------------------------------------------------------------------
my $pub = do { open my $fh, '<', PurserStack::root() . '/t/data/chef-auth/pub.pem' or die; local $/; <$fh> };
($r, $j) = $s->api('POST', '/users', { username => 'dave', display_name => 'Dave', email => 'd@example.com', public_key => $pub });
is $r->{status}, 201, 'a user with a given public key';
is $j->{chef_key}{public_key}, $pub, 'keeps that key';
ok !exists $j->{chef_key}{private_key}, 'and makes no private key';
($r, $j) = $s->api('GET', '/users/dave');
is_deeply [ @$j{qw(username display_name email)} ], ['dave', 'Dave', 'd@example.com'], 'GET user';
ok !grep({ /key/ } keys %$j), 'shows no key';

my $users = count('principals');
for my $bad ([{ email => 'x' }, qr/Field 'username' missing/], [{ username => 'UPPER' }, qr/Field 'username' invalid/],
             [{ username => 'erin', public_key => 'not a key' }, qr/Field 'public_key' is not a valid RSA public key/],
             [{ username => 'erin', create_key => 'yes' }, qr/Field 'create_key' invalid/]) {
    ($r, $j) = $s->api('POST', '/users', $bad->[0]);
    is $r->{status}, 400, 'bad user refused';
    like $j->{error}[0], $bad->[1], "  naming the field: $bad->[1]";
}
($r) = $s->api('POST', '/users', { username => 'dave' });
is $r->{status}, 409, 'a second dave is 409';
is count('principals'), $users, 'no bad request added a user';

($r, $j) = $s->api('POST', '/users/dave/keys', { name => 'laptop', create_key => JSON::PP::true(), expiration_date => '2099-12-31T00:00:00Z' });
is $r->{status}, 201, 'a second key, generated';
is $j->{uri}, "$url/users/dave/keys/laptop", 'its uri';
like $j->{private_key}, qr/PRIVATE KEY/, 'its private key, once';
($r, $j) = $s->api('GET', '/users/dave/keys');
is_deeply [ map { $_->{name} } @$j ], ['default', 'laptop'], 'both keys listed';
is_deeply [ map { $_->{expired} ? 1 : 0 } @$j ], [0, 0], 'neither expired';
($r, $j) = $s->api('GET', '/users/dave/keys/laptop');
is $j->{expiration_date}, '2099-12-31T00:00:00Z', 'the expiration date as given';
($r, $j) = $s->api('POST', '/users/dave/keys', { name => 'laptop', public_key => $pub, expiration_date => 'infinity' });
is $r->{status}, 409, 'a key name twice is 409';
($r, $j) = $s->api('POST', '/users/dave/keys', { name => 'k', public_key => $pub, expiration_date => 'someday' });
is $r->{status}, 400, 'a bad expiration date is 400';
like $j->{error}[0], qr/expiration_date/, 'naming the field';
($r, $j) = $s->api('PUT', '/users/dave/keys/laptop', { name => 'travel' });
is $j->{name}, 'travel', 'a key is renamed';
($r, $j) = $s->api('DELETE', '/users/dave/keys/travel');
is $r->{status}, 200, 'and deleted';
($r) = $s->api('GET', '/users/dave/keys/travel');
is $r->{status}, 404, 'then it is gone';

($r, $j) = $s->api('PUT', '/users/dave', { display_name => 'David', email => 'david@example.com' });
is_deeply [ @$j{qw(display_name email)} ], ['David', 'david@example.com'], 'PUT user changes fields';
($r, $j) = $s->api('PUT', '/users/dave', { display_name => 7 });
is $r->{status}, 400, 'a field of the wrong type is 400';
like $j->{error}[0], qr/display_name/, 'naming it';

# --- members -------------------------------------------------------------------------------
($r, $j) = $s->api('POST', '/organizations/acme/users', { username => 'dave', roles => ['operator'] });
is $r->{status}, 201, 'dave joins acme as operator';
($r, $j) = $s->api('POST', '/organizations/acme/users', { username => 'dave', roles => ['wizard'] });
is $r->{status}, 400, 'an unknown role is 400';
like $j->{error}[0], qr/wizard/, 'naming it';
($r, $j) = $s->api('GET', '/organizations/acme/users');
is_deeply $j, [{ user => { username => 'dave', roles => ['operator'] } }], 'members with their roles';
($r, $j) = $s->api('POST', '/organizations/acme/users', { username => 'dave', roles => ['reader'] });
ok $r->{status} == 200 || $r->{status} == 201, 'another role posted for dave: ' . $r->{status};
is_deeply $j->{user}{roles}, ['operator', 'reader'], '  the answer names every role he holds (a POST adds; operator stays)';
($r, $j) = $s->api('GET', '/organizations/acme/users');
is_deeply $j, [{ user => { username => 'dave', roles => ['operator', 'reader'] } }], '  as the list says';
($r) = $s->api('DELETE', '/organizations/acme/users/dave');
is $r->{status}, 200, 'dave leaves';
($r) = $s->api('DELETE', '/organizations/acme/users/dave');
is $r->{status}, 404, 'leaving twice is 404';

# --- deletes cascade -------------------------------------------------------------------------
($r, $j) = $s->api('DELETE', '/users/dave');
is $j->{username}, 'dave', 'DELETE user answers with the user';
is $s->sql("SELECT COUNT(*) FROM principal_keys k LEFT JOIN principals p ON p.id = k.principal_id WHERE p.id IS NULL"), "0\n",
   'no key is left without its user';
($r, $j) = $s->api('DELETE', '/organizations/acme?force=true'); # it holds a client (t/6008)
is $j->{name}, 'acme', 'DELETE organization answers with it';
is $s->sql("SELECT COUNT(*) FROM principals WHERE kind = 'client'"), "1\n", "its clients went with it (only the first organization's validator is left)";

PurserStack::finish();

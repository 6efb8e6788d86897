# 3007: Chef's principals endpoint, GET /organizations/{org}/principals/{name}: open (no
# authentication, and a bad signature does not matter), API version 0 answers one principal,
# 1 and later {principals: [...]} with a client and a user of the same name both; 404s in
# Chef's shape for an unknown principal and an unknown organization.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $s = PurserStack->new;
my $org = $s->env('PURSER_ORG');
my $true = JSON::PP::true();
my $false = JSON::PP::false();

sub principal {
    my ($name, %o) = @_;
    my %headers = (accept => 'application/json', %{ $o{headers} // {} });
    $headers{'x-ops-server-api-version'} = $o{version} if defined $o{version};
    my $res = $s->request('GET', '/organizations/' . ($o{org} // $org) . "/principals/$name", { headers => \%headers });
    return ($res, PurserStack::json($res));
}

# A user pat (not yet a member), and later a client pat of the organization.
my ($r, $j) = $s->api('POST', '/users', { username => 'pat' });
is $r->{status}, 201, 'a user pat';
my (undef, $user_key) = $s->api('GET', '/users/pat/keys/default');
like $user_key->{public_key}, qr/BEGIN PUBLIC KEY/, 'with a default key';

($r, $j) = principal('pat');
is $r->{status}, 200, 'GET principals/pat without any credentials is 200';
is $r->{headers}{'content-type'}, 'application/json', '  JSON';
is_deeply [ sort keys %$j ], [qw(authz_id name org_member public_key type)], 'API version 0: one principal, with Chef\'s fields';
is $j->{name}, 'pat', '  name';
is $j->{type}, 'user', '  type user';
is $j->{public_key}, $user_key->{public_key}, "  the user's default public key";
like $j->{authz_id}, qr/^[0-9a-f]{32}$/, '  a 32-hex authz_id';
is $j->{org_member}, $false, '  and not a member of the organization';
my $user_authz = $j->{authz_id};

($r) = $s->api('POST', "/organizations/$org/users", { username => 'pat', roles => ['reader'] });
is $r->{status}, 201, 'pat joins the organization';
($r, $j) = principal('pat');
is $j->{org_member}, $true, 'now org_member is true';
is $j->{authz_id}, $user_authz, 'and the authz_id is the same as before';

($r, $j) = principal('pat', version => 1);
is $r->{status}, 200, 'API version 1: 200';
is_deeply [ keys %$j ], ['principals'], '  {principals: [...]}';
is scalar @{ $j->{principals} }, 1, '  with one principal';
is $j->{principals}[0]{type}, 'user', '  the user';

($r, $j) = $s->api('POST', "/organizations/$org/clients", { name => 'pat' });
is $r->{status}, 201, 'a client also named pat';
my (undef, $client_key) = $s->api('GET', "/organizations/$org/clients/pat/keys/default");
($r, $j) = principal('pat', version => 2);
is scalar @{ $j->{principals} }, 2, 'API version 2 answers both principals named pat';
is_deeply [ map { $_->{type} } @{ $j->{principals} } ], ['client', 'user'], '  the client first';
is $j->{principals}[0]{public_key}, $client_key->{public_key}, "  each with its own key";
is $j->{principals}[1]{public_key}, $user_key->{public_key}, '  (the user\'s)';
is $j->{principals}[0]{org_member}, $true, '  a client is a member of its organization';
isnt $j->{principals}[0]{authz_id}, $j->{principals}[1]{authz_id}, '  distinct authz_ids';
($r, $j) = principal('pat');
is $j->{type}, 'client', 'API version 0 answers the client';

# The key Chef tooling would verify with: "default" before any other, never an expired one.
($r) = $s->api('POST', '/users', { username => 'quinn', create_key => $false });
is $r->{status}, 201, 'a user without keys';
($r, $j) = principal('quinn');
is $r->{status}, 200, 'is still a principal';
ok exists $j->{public_key} && !defined $j->{public_key}, '  with public_key null';
my $pub = do { open my $fh, '<', PurserStack::root() . '/t/data/chef-auth/pub.pem' or die; local $/; <$fh> };
($r) = $s->api('POST', '/users/quinn/keys', { name => 'old', public_key => $pub, expiration_date => '2001-01-01T00:00:00Z' });
is $r->{status}, 201, 'an expired key';
($r, $j) = principal('quinn');
ok !defined $j->{public_key}, '  is not answered';
($r) = $s->api('POST', '/users/quinn/keys', { name => 'laptop', public_key => $pub, expiration_date => 'infinity' });
is $r->{status}, 201, 'a key named laptop';
($r, $j) = principal('quinn');
is $j->{public_key}, $pub, '  is answered when there is no default';

# Open means open: bad credentials are not looked at.
($r, $j) = principal('pat', headers => { 'x-ops-userid' => 'invalid', 'x-ops-sign' => 'algorithm=sha1;version=1.0',
                                          'x-ops-timestamp' => 'xxx', 'x-ops-authorization-1' => 'garbage' });
is $r->{status}, 200, 'a request with a bad signature is answered all the same';
($r, $j) = principal('pat', headers => { authorization => 'Bearer purser_not_a_token' });
is $r->{status}, 200, 'and one with an unknown token';
($r, $j) = principal('pat', version => 9);
is $r->{status}, 406, 'an API version out of range is still 406';

# Not found, in Chef's shape (error is a string here, not a list).
($r, $j) = principal('not_a_number');
is $r->{status}, 404, 'an unknown principal is 404';
is_deeply $j, { error => 'Cannot find principal not_a_number', not_found => 'principal' }, "  Chef's body";
($r, $j) = principal('not_a_number', version => 1);
is_deeply $j, { error => 'Cannot find principal not_a_number', not_found => 'principal' }, '  in every version';
($r, $j) = principal('pat', org => 'bogus-org');
is $r->{status}, 404, 'an unknown organization is 404';
is_deeply $j, { error => 'Cannot find org bogus-org', not_found => 'org' }, "  Chef's body";
($r, $j) = $s->api('POST', '/organizations', { name => 'other', full_name => 'Other' });
($r, $j) = principal('pat', org => 'other', version => 1);
is_deeply [ map { "$_->{type}:" . ($_->{org_member} ? 1 : 0) } @{ $j->{principals} } ], ['user:0'],
    "another organization sees the user, not the first organization's client";

PurserStack::finish();

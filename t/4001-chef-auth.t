# 4001: Chef signed requests through nginx, made by Debian's ruby-mixlib-authentication as Chef
# tooling makes them: accepted with protocols 1.0, 1.1 and 1.3; refused, with the Chef
# Infra Server's status and message, when any signed part is changed afterwards.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

my $s = PurserStack->new;
my $org = $s->env('PURSER_ORG');
my $path = "/organizations/$org";

for my $version (qw(1.0 1.1 1.3)) {
    my $r = $s->chef(version => $version, path => $path);
    is $r->{status}, 200, "protocol $version: a signed GET is accepted";
    is $r->{json} && $r->{json}{name}, $org, "protocol $version: and answered";

    $r = $s->chef(version => $version, method => 'PUT', path => $path,
                  body => '{"full_name":"Renamed ' . $version . '"}');
    is $r->{status}, 200, "protocol $version: a signed PUT with a body is accepted";
    is $r->{json} && $r->{json}{full_name}, "Renamed $version", "protocol $version: and done";

    my %expect = (
        method => [401, qr/^Invalid signature for user or client 'admin'$/],
        path => [401, qr/^Invalid signature for user or client 'admin'$/],
        body => [401, qr/^Invalid signature for user or client 'admin'$/],
        timestamp => [401, qr/^Invalid signature for user or client 'admin'$/],
        authorization => [401, qr/^Invalid signature for user or client 'admin'$/],
        userid => [401, qr/^Failed to authenticate as 'xadmin'\. Ensure that your node_name and client key are correct\.$/],
    );
    for my $what (sort keys %expect) {
        my ($status, $message) = @{ $expect{$what} };
        my %req = (version => $version, method => 'PUT', path => $path, body => '{"full_name":"x"}', tamper => $what);
        # A changed method or path must still reach a route that exists.
        %req = (%req, method => 'GET', body => undef) if $what eq 'method';
        $r = $s->chef(%req);
        is $r->{status}, $status, "protocol $version: changed $what is refused with $status";
        my $msg = $r->{json} && ref $r->{json}{error} eq 'ARRAY' ? $r->{json}{error}[0] : '';
        like $msg, $message, "protocol $version: changed $what: Chef's message";
    }

    $r = $s->chef(version => $version, path => $path, clock_offset => 3600);
    is $r->{status}, 401, "protocol $version: a timestamp an hour off is refused";
    is $r->{json} && $r->{json}{error}[0], 'Failed to authenticate as admin. Synchronize the clock on your host.',
        "protocol $version: with Chef's clock message";
}
my (undef, $org_now) = $s->api('GET', $path);
is $org_now->{full_name}, 'Renamed 1.3', 'no tampered request changed anything';

# Every key of the principal is tried: a second key added, signing with it works.
my ($kr) = $s->api('POST', '/users/admin/keys', { name => 'second', create_key => JSON::PP::true(), expiration_date => 'infinity' });
is $kr->{status}, 201, 'a second key for admin';
my $second = PurserStack::json($kr)->{private_key};
my $keyfile = $s->dir . '/second.pem';
{ open my $fh, '>', $keyfile or die; print $fh $second; }
my $r = $s->chef(version => '1.3', path => $path, key => $keyfile);
is $r->{status}, 200, 'a request signed with the second key is accepted';

# An expired key no longer counts.
($kr) = $s->api('PUT', '/users/admin/keys/second', { expiration_date => '2001-01-01T00:00:00Z' });
is $kr->{status}, 200, 'the second key is made to expire';
$s->wait_auth_cache;
$r = $s->chef(version => '1.3', path => $path, key => $keyfile);
is $r->{status}, 401, 'a request signed with an expired key is refused';

# Workers keep parsed keys: a key replaced under the same name must not verify with the old
# parse, and a deleted key not at all (both within cache.auth_ttl).
($kr) = $s->api('POST', '/users/admin/keys', { name => 'third', create_key => JSON::PP::true(), expiration_date => 'infinity' });
my $third = $s->dir . '/third.pem';
{ open my $fh, '>', $third or die; print $fh PurserStack::json($kr)->{private_key}; }
for (1 .. 4) { # every worker parses and keeps it
    $r = $s->chef(version => '1.3', path => $path, key => $third);
    is $r->{status}, 200, 'signed with the third key';
}
my $other_pub = do { open my $fh, '<', PurserStack::root() . '/t/data/chef-auth/pub.pem' or die; local $/; <$fh> };
($kr) = $s->api('PUT', '/users/admin/keys/third', { public_key => $other_pub });
is $kr->{status}, 200, 'the third key is replaced by another public key';
$s->wait_auth_cache;
$r = $s->chef(version => '1.3', path => $path, key => $third);
is $r->{status}, 401, 'the replaced key no longer verifies in any worker';
($kr) = $s->api('POST', '/users/admin/keys', { name => 'fourth', create_key => JSON::PP::true(), expiration_date => 'infinity' });
my $fourth = $s->dir . '/fourth.pem';
{ open my $fh, '>', $fourth or die; print $fh PurserStack::json($kr)->{private_key}; }
$r = $s->chef(version => '1.3', path => $path, key => $fourth) for 1 .. 4;
is $r->{status}, 200, 'a fourth key verifies';
($kr) = $s->api('DELETE', '/users/admin/keys/fourth');
is $kr->{status}, 200, 'and is deleted';
$s->wait_auth_cache;
$r = $s->chef(version => '1.3', path => $path, key => $fourth);
is $r->{status}, 401, 'a deleted key no longer verifies';

# A client of the organization signing a document API request (the default organization's
# routes under /api/v1.0 name no {org}) is authenticated: its role decides, 403 not 401.
my (undef, $cj) = $s->api('POST', "/organizations/$org/clients", { name => 'doc-client' });
my $client_key = $s->dir . '/doc-client.pem';
{ open my $fh, '>', $client_key or die; print $fh $cj->{chef_key}{private_key}; }
for my $p ('/api/v1.0/revisions', "/organizations/$org/api/v1.0/revisions") {
    $r = $s->chef(version => '1.3', user => 'doc-client', key => $client_key, path => $p);
    is $r->{status}, 403, "a node client signing GET $p is authenticated, then refused (403)";
    like $r->{body}, qr/read_revision/, '  naming the action it lacks';
}

# Missing headers: Chef's 400.
my $res = $s->request('GET', $path, { headers => { 'X-Ops-UserId' => 'admin', 'X-Ops-Sign' => 'algorithm=sha1;version=1.0' } });
is $res->{status}, 400, 'some Chef headers but not all is 400';
is PurserStack::json($res)->{error}[0], "missing required authentication header(s) 'X-Ops-Timestamp', 'X-Ops-Content-Hash'",
    "naming the missing headers as Chef does";

$res = $s->request('GET', $path);
is $res->{status}, 401, 'no credentials at all is 401';

# A timestamp that does not parse: Chef's 401 (bad_clock), not a bad request.
$res = $s->request('GET', $path, { headers => { 'X-Ops-UserId' => 'admin', 'X-Ops-Sign' => 'algorithm=sha1;version=1.0',
    'X-Ops-Timestamp' => 'xxx', 'X-Ops-Content-Hash' => 'x', 'X-Ops-Authorization-1' => 'x' } });
is $res->{status}, 401, 'an X-Ops-Timestamp of xxx is 401';
is PurserStack::json($res)->{error}[0], 'Failed to authenticate as admin. Synchronize the clock on your host.',
    "with Chef's clock message";

# Server API version negotiation.
$r = $s->chef(version => '1.3', path => $path, api_version => '2');
is $r->{status}, 200, 'X-Ops-Server-API-Version 2 is accepted';
my $hdr = eval { JSON::PP->new->decode($r->{api_version}) } // {};
is_deeply $hdr, { min_version => '0', max_version => '2', request_version => '2', response_version => '2' },
    'and the response header says min, max, request and response versions';
$r = $s->chef(version => '1.3', path => $path, api_version => '3');
is $r->{status}, 406, 'version 3 is 406';
is_deeply $r->{json}, { error => 'invalid-x-ops-server-api-version', message => 'Specified version 3 not supported',
                        min_version => 0, max_version => 2 }, "with Chef's body";

PurserStack::finish();

#!/usr/bin/perl
# 6004: OSIS's life cycle on what exists (issue 12 item 5): organizations with labels and
# external ids (found by filter=external_id==X; an id belongs to one organization), users with
# labels and `active`, tokens with `active`; a deactivated user's keys and tokens, and a
# deactivated token, are refused with 401 within cache.auth_ttl; listings never show a secret.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $s = PurserStack->new(workers => 2, auth_ttl => 1);
my $json = JSON::PP->new->canonical;
sub call { $s->call(@_) }
sub msg { PurserStack::error_message(@_) }

# ---- organizations ----
my ($r, $d) = call('POST', '/organizations', { name => 'tenant1', full_name => 'Tenant 1', labels => { tier => 'gold' }, external_ids => ['osis-123', 'crm-9'] });
is $r->{status}, 201, 'an organization with labels and external ids';
($r, $d) = call('GET', '/organizations/tenant1');
is_deeply $d->{labels}, { tier => 'gold' }, '  its labels';
is_deeply $d->{external_ids}, ['crm-9', 'osis-123'], '  its external ids';
is $d->{full_name}, 'Tenant 1', "  and Chef's fields";
($r, $d) = call('GET', '/organizations?filter=external_id%3D%3Dosis-123');
is_deeply [ keys %$d ], ['tenant1'], 'filter=external_id==osis-123 finds it';
($r, $d) = call('GET', '/organizations?filter=external_id%3D%3Dnone');
is_deeply $d, {}, 'an unknown external id finds none';
($r, $d) = call('GET', '/organizations?filter=color%3D%3Dx');
is $r->{status}, 400, 'a field organizations do not have: 400';
like msg($d), qr/color/, '  naming it';
($r, $d) = call('POST', '/organizations', { name => 'tenant2', external_ids => ['osis-123'] });
is $r->{status}, 409, 'an external id another organization holds: 409';
like msg($d), qr/external id 'osis-123' belongs to another organization/, '  naming it';
($r) = call('GET', '/organizations/tenant2');
is $r->{status}, 404, '  and the organization was not created';
($r, $d) = call('POST', '/organizations', { name => 'tenant3', labels => { 'bad key' => 'x' } });
is $r->{status}, 400, 'an invalid label: 400';
like msg($d), qr/labels: key 'bad key'/, '  naming it';
($r, $d) = call('PUT', '/organizations/tenant1', { external_ids => ['osis-124'], labels => { tier => 'silver' } });
is $r->{status}, 200, 'PUT changes external ids and labels';
is_deeply $d->{external_ids}, ['osis-124'], '  replaced';
($r, $d) = call('GET', '/organizations?filter=external_id%3D%3Dosis-123');
is_deeply $d, {}, '  the old id finds nothing now';

# ---- users ----
($r, $d) = call('POST', '/users', { username => 'alice', display_name => 'Alice', email => 'a@example.com', labels => { team => 'ops' } });
is $r->{status}, 201, 'a user with labels';
my $alice_key = $d->{private_key};
($r, $d) = call('GET', '/users/alice');
is_deeply $d->{labels}, { team => 'ops' }, '  its labels';
is $d->{active}, JSON::PP::true, '  active';
($r, $d) = call('POST', '/users/alice/tokens', { description => 'ci' });
my $alice_token = $d->{token};
my $token_id = $d->{id};
($r) = call('GET', '/users/alice', undef, authorization => "Bearer $alice_token");
is $r->{status}, 200, "alice's token works";
my $keyfile = $s->dir . '/alice.pem';
{ open my $fh, '>', $keyfile or die; print $fh $alice_key; }
is $s->chef(user => 'alice', key => $keyfile, path => '/users/alice')->{status}, 200, "and alice's key";

($r, $d) = call('PATCH', '/users/alice', { active => JSON::PP::false }, 'content-type' => 'application/merge-patch+json');
is $r->{status}, 200, 'PATCH active: false';
is $d->{active}, JSON::PP::false, '  the user is deactivated';
$s->wait_auth_cache;
($r, $d) = call('GET', '/users/alice', undef, authorization => "Bearer $alice_token");
is $r->{status}, 401, "within cache.auth_ttl her token is refused";
is msg($d), "the token's user or client is deactivated", '  saying why';
is $s->chef(user => 'alice', key => $keyfile, path => '/users/alice')->{status}, 401, '  and her key';
($r) = call('PATCH', '/users/alice', { active => JSON::PP::true });
is $r->{status}, 200, 'reactivated';
$s->wait_auth_cache;
($r) = call('GET', '/users/alice', undef, authorization => "Bearer $alice_token");
is $r->{status}, 200, '  and the token works again';
($r, $d) = call('PATCH', '/users/alice', { active => 'no' });
is $r->{status}, 400, 'active that is not a boolean: 400';

# ---- tokens ----
($r, $d) = call('GET', '/users/alice/tokens');
my ($t) = grep { $_->{id} eq $token_id } @$d;
is $t->{active}, JSON::PP::true, 'the token listing shows active';
ok exists $t->{$_}, "  and $_" for qw(created_at expires_at last_used_at);
ok defined $t->{last_used_at}, '  last_used_at was set by its use';
ok !grep({ exists $_->{token} } @$d), '  never the secret';
unlike $r->{content}, qr/\Q$alice_token\E/, '  nor its text anywhere';
($r, $d) = call('PATCH', "/users/alice/tokens/$token_id", { active => JSON::PP::false });
is $r->{status}, 200, 'PATCH a token active: false';
is $d->{active}, JSON::PP::false, '  deactivated';
$s->wait_auth_cache;
($r, $d) = call('GET', '/users/alice', undef, authorization => "Bearer $alice_token");
is $r->{status}, 401, 'the token is refused';
is msg($d), 'token deactivated', '  "token deactivated"';
($r, $d) = call('PATCH', "/users/alice/tokens/$token_id", { description => 'x' });
is $r->{status}, 400, 'a token PATCH of another field: 400';
($r, $d) = call('PATCH', '/users/alice/tokens/nothing', { active => JSON::PP::true });
is $r->{status}, 404, 'an unknown token: 404';

PurserStack::finish();

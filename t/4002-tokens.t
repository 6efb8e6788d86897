# 4002: bearer tokens: shown once, stored only as a hash, accepted until revoked or expired.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

my $s = PurserStack->new;
my $org = $s->env('PURSER_ORG');

my ($r, $j) = $s->api('POST', '/users', { username => 'carol', email => 'carol@example.com' });
is $r->{status}, 201, 'a user carol';
($r, $j) = $s->api('POST', "/organizations/$org/users", { username => 'carol', roles => ['reader'] });
is $r->{status}, 201, 'who reads in the first organization';

# The admin makes carol no token; carol's own tokens are hers. As server admin we create one.
($r, $j) = $s->api('POST', '/users/carol/tokens', { description => 'laptop' });
is $r->{status}, 201, 'a token for carol';
my $token = $j->{token};
like $token, qr/^purser_[A-Za-z0-9_-]{43}$/, 'the token carries 256 random bits';
like $j->{id}, qr/^[0-9a-f]{16}$/, 'with an id';
is $j->{description}, 'laptop', 'and its description';

($r, $j) = $s->api('GET', "/organizations/$org", undef, $token);
is $r->{status}, 200, 'the token is accepted';
($r, $j) = $s->api('GET', '/users/carol/tokens', undef, $token);
is $r->{status}, 200, 'carol lists her own tokens';
is scalar(@$j), 1, 'one token';
ok !exists $j->[0]{token}, 'the list never shows a token';
like $j->[0]{last_used_at} // '', qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'its last use is recorded';

my $stored = $s->sql("SELECT token_sha256 FROM api_tokens WHERE id = '$j->[0]{id}'");
chomp $stored;
like $stored, qr/^[0-9a-f]{64}$/, 'the database holds a SHA-256';
my $dump = `mariadb-dump --no-defaults --socket=@{[$s->dir]}/run/mariadb.sock -uroot purser 2>/dev/null`;
ok length($dump) > 1000, 'a database dump';
unlike $dump, qr/\Q$token\E/, 'shows no token';
unlike $dump, qr/PRIVATE KEY/, 'and no private key';

($r) = $s->api('GET', "/organizations/$org", undef, $token . 'x');
is $r->{status}, 401, 'a changed token is refused';
($r) = $s->api('GET', "/organizations/$org", undef, 'purser_' . ('A' x 43));
is $r->{status}, 401, 'an unknown token is refused';

# carol revokes her token with another of hers.
($r, $j) = $s->api('POST', '/users/carol/tokens', {}, $token);
is $r->{status}, 201, 'carol creates a second token herself';
my $second = $j->{token};
($r, $j) = $s->api('GET', '/users/carol/tokens', undef, $second);
my ($first) = grep { $_->{description} eq 'laptop' } @$j;
($r) = $s->api('DELETE', "/users/carol/tokens/$first->{id}", undef, $second);
is $r->{status}, 204, 'the first token is revoked';
$s->wait_auth_cache;
($r, $j) = $s->api('GET', "/organizations/$org", undef, $token);
is $r->{status}, 401, 'a revoked token is refused';
is $j->{error}[0], 'invalid token', 'as invalid';
($r) = $s->api('DELETE', "/users/carol/tokens/$first->{id}", undef, $second);
is $r->{status}, 404, 'revoking it again is 404';

# Expiry.
($r, $j) = $s->api('POST', '/users/carol/tokens', { expires_in => 1 }, $second);
is $r->{status}, 201, 'a token that expires in a second';
my $short = $j->{token};
ok defined $j->{expires_at}, 'says when it expires';
sleep 2; # time itself: the token's second passes
($r, $j) = $s->api('GET', "/organizations/$org", undef, $short);
is $r->{status}, 401, 'an expired token is refused';
is $j->{error}[0], 'token expired', 'as expired';

($r, $j) = $s->api('POST', '/users/carol/tokens', { expires_in => 'soon' }, $second);
is $r->{status}, 400, 'expires_in must be a number of seconds';
like $j->{error}{message}, qr/expires_in/, 'the message names the field';

# Tokens belong to their user: carol cannot see or make the admin's.
($r) = $s->api('GET', '/users/admin/tokens', undef, $second);
is $r->{status}, 403, "carol cannot list the admin's tokens";
($r) = $s->api('POST', '/users/admin/tokens', {}, $second);
is $r->{status}, 403, 'nor create one for the admin';

PurserStack::finish();

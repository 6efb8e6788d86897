#!/usr/bin/perl
# 4012: signing in through an OpenID Provider (issue 52), against a real one on loopback
# (t/oidc/provider.mjs: npm's oidc-provider): an IdentityProvider's client secret sealed and
# never shown; the authorization code flow with PKCE, state and nonce; the first sign-in makes
# the user (its external id the issuer and subject) and its memberships from the mappings; the
# handoff code works once; RS256 and ES256; a key rotation at the provider; a group removed
# takes the role away at the next sign-in; a deactivated user and a deleted provider end the
# session; sign-out ends it on the server; and each refusal (wrong state, replayed code,
# expired, wrongly signed, unknown issuer, aud for another client, a redirect to another
# origin) is a 4xx naming what failed, logged without tokens, counted, an event, and signs
# no one in.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use Time::Local qw(timegm);
use PurserStack;
use PurserOidc;

my $s = PurserStack->new(workers => 2, auth_ttl => 1);
my $org = $s->env('PURSER_ORG');
my $url = $s->url;
my $callback = "$url/auth/sso/callback";
sub call { $s->call(@_) }
sub sql { my $out = $s->sql(@_); chomp $out; $out }
sub msg { PurserStack::error_message(@_) }

my $idp = PurserOidc->start($s->dir,
    users => {
        alice => { password => 'alice-pw', groups => ['ops', 'dev-web'], name => 'Alice' },
        bob => { password => 'bob-pw', groups => ['dev-web'] },
        carol => { password => 'carol-pw', groups => ['ops'] },
        dave => { password => 'dave-pw', groups => ['ops'] },
        admin => { password => 'admin-pw', groups => ['ops'] },
        erin => { password => 'erin-pw', groups => [], email_verified => JSON::PP::true },
        frank => { password => 'frank-pw', groups => [] },
    },
    clients => [
        { client_id => 'purser', client_secret => 'rs-secret-4012', redirect_uris => [$callback], alg => 'RS256' },
        { client_id => 'purser-es', client_secret => 'es-secret-4012', redirect_uris => [$callback], alg => 'ES256' },
    ]);

my @mappings = (
    { value => 'ops', organization => $org, role => 'admin' },
    { value => 'dev-*', organization => $org, role => 'operator', policy_groups => 'dev*' },
);
sub provider_body {
    my ($name, $client, $secret) = @_;
    return { metadata => { name => $name }, spec => {
        display_name => "Corp $name", issuer => $idp->issuer, client_id => $client,
        client_secret => $secret, scopes => ['openid', 'profile', 'email', 'groups'],
        mappings => \@mappings } };
}

# ---- the kind ----
my ($r, $d) = call('POST', '/identity-providers', provider_body('corp', 'purser', 'rs-secret-4012'));
is($r->{status}, 201, 'an identity provider is created') or diag($r->{content});
unlike($r->{content}, qr/rs-secret-4012/, 'the answer does not show the client secret');
is($d->{status}{client_secret_set}, JSON::PP::true, 'its status says a secret is set');
($r, $d) = call('GET', '/identity-providers/corp');
unlike($r->{content}, qr/rs-secret-4012/, 'reading it does not show the client secret');
ok(!sql("SELECT COUNT(*) FROM identity_providers WHERE client_secret LIKE '%rs-secret-4012%'"),
   'the client secret is sealed in the database');
($r) = call('POST', '/identity-providers', provider_body('corp-es', 'purser-es', 'es-secret-4012'));
is($r->{status}, 201, 'a second provider for the ES256 client');
($r, $d) = call('POST', '/identity-providers', { metadata => { name => 'bad' },
    spec => { issuer => 'http://idp.example.test', client_id => 'x', client_secret => 'y' } });
is($r->{status}, 400, 'an issuer that is plain http off loopback is refused');
like(msg($d), qr/spec\.issuer/, '  naming spec.issuer');
($r, $d) = call('POST', '/identity-providers', { metadata => { name => 'bad' },
    spec => { issuer => $idp->issuer, client_id => 'x' } });
is($r->{status}, 400, 'a provider without its client secret is refused');
like(msg($d), qr/client_secret/, '  naming client_secret');
{
    my $body = provider_body('bad', 'purser', 'x');
    $body->{spec}{mappings} = [$mappings[0], { value => 'x', organization => $org, role => 'overlord' }];
    ($r, $d) = call('POST', '/identity-providers', $body);
    is($r->{status}, 400, 'a mapping to a role the policy file does not have is refused');
    like(msg($d), qr/spec\.mappings\[1\]\.role: unknown role overlord/, '  naming spec.mappings[1].role');
    ($r, $d) = call('GET', '/identity-providers/corp');
    my $put = { metadata => { name => 'corp', revision => $d->{metadata}{revision} }, spec => { %{ $d->{spec} },
        mappings => [{ value => 'ops', organization => $org, role => 'nosuch' }] } };
    ($r, $d) = call('PUT', '/identity-providers/corp', $put);
    is($r->{status}, 400, '  on a change too');
    like(msg($d), qr/spec\.mappings\[0\]\.role/, '  naming spec.mappings[0].role');
    ($r, $d) = call('GET', '/identity-providers/corp');
    is($d->{spec}{mappings}[0]{role}, 'admin', '  the provider unchanged');
    is(sql("SELECT COUNT(*) FROM identity_providers WHERE name = 'bad'"), 0, '  and none made');
}
($r) = call('GET', '/identity-providers', undef, authorization => '');
is($r->{status}, 401, 'the providers are a server admin\'s to list');
($r, $d) = call('GET', '/auth/sso/providers', undef, authorization => '');
is_deeply([map { "$_->{name}=$_->{display_name}" } @{ $d->{items} }], ['corp=Corp corp', 'corp-es=Corp corp-es'],
          'the sign-in page lists each provider\'s name and display name, open');

# ---- the flow ----
# start(PROVIDER, RETURN_TO): purser's start; returns its answer. The browser keeps the sign-in
# cookie it sets ($sso_cookie, "name=value"), which cb() sends back.
my $sso_cookie;
sub start {
    my ($provider, $return_to) = @_;
    my $path = "/auth/sso/$provider/start" . (defined $return_to ? "?return_to=$return_to" : '');
    my $res = $s->request('GET', $path);
    ($sso_cookie) = ($res->{headers}{'set-cookie'} // '') =~ /^(__Host-purser-sign-in=[^;]+)/
        if $res->{status} == 302;
    return $res;
}

# cb(PATH, COOKIE): the browser's GET of purser's callback, with the sign-in cookie it holds.
sub cb {
    my ($path, $cookie) = @_;
    $cookie //= $sso_cookie;
    return $s->request('GET', $path, { headers => { defined $cookie ? (cookie => $cookie) : () } });
}

# to_callback(PROVIDER, USER): the browser's way from purser's start to its callback; returns
# the callback's path and query (or undef and the provider's page).
sub to_callback {
    my ($provider, $user, $password) = @_;
    my $res = start($provider);
    return (undef, "start answered $res->{status}: $res->{content}") unless $res->{status} == 302;
    my ($at, $page) = $idp->login($res->{headers}{location}, $user, $password // "$user-pw", $callback);
    return (undef, $page) unless $at;
    return substr($at, length $url);
}

# sign_in(PROVIDER, USER): the whole flow; returns (callback response, session answer, session).
sub sign_in {
    my ($provider, $user, $password) = @_;
    my ($path, $page) = to_callback($provider, $user, $password);
    return ({ status => 0, content => $page // '' }) unless $path;
    my $cb = cb($path);
    return ($cb) unless $cb->{status} == 302 && ($cb->{headers}{location} // '') =~ m{^/admin/#/sso\?code=(.+)$};
    my ($res, $session) = call('POST', '/auth/sso/session', { code => $1 }, authorization => '',
                               cookie => $sso_cookie);
    return ($cb, $res, $session);
}

sub roles_of {
    my ($user) = @_;
    my $roles = sql("SELECT GROUP_CONCAT(m.role ORDER BY m.role) FROM memberships m JOIN principals p"
        . " ON p.id = m.principal_id WHERE p.name = '$user'");
    return $roles eq 'NULL' ? '' : $roles;
}

$r = start('corp');
is($r->{status}, 302, 'the start sends the browser to the provider');
my $location = $r->{headers}{location} // '';
like($location, qr/^\Q@{[$idp->issuer]}\E\/auth\?/, '  at its authorization endpoint');
like($location, qr/code_challenge_method=S256/, '  with PKCE (S256)');
like($location, qr/[?&]state=[A-Za-z0-9_-]{43}(&|$)/, '  a state');
like($location, qr/[?&]nonce=[A-Za-z0-9_-]{43}(&|$)/, '  and a nonce');

my ($cb, $res, $session) = sign_in('corp', 'alice');
is($cb->{status}, 302, 'the callback finishes the sign-in') or diag($cb->{content});
is($res->{status}, 201, 'the handoff code is traded for a session') or diag($res && $res->{content});
is($session->{user}, 'alice', '  of the user the provider named');
my $alice = $session->{token};
($r, $d) = call('GET', "/organizations/$org/permissions", undef, authorization => "Bearer $alice");
is($r->{status}, 200, 'the session token is a credential');
is(roles_of('alice'), 'admin,operator', 'the mappings made alice admin (ops) and operator (dev-*)');

# the session in the user's token list: marked as a sign-in's (as tctl marks them), and ended there
($r) = call('POST', '/users/alice/tokens', { description => 'a token of her own' });
($r, $d) = call('GET', '/users/alice/tokens', undef, authorization => "Bearer $alice");
is($r->{status}, 200, 'alice lists her tokens with her session');
my %kind_of = map { ($_->{description} => $_->{session} ? "session of $_->{session}{provider}" : 'token') } @{ $d // [] };
is_deeply(\%kind_of, { 'session: signed in through corp' => 'session of corp', 'a token of her own' => 'token' },
          '  the session marked as one of corp, a token of her own not');
($r, $d) = call('GET', '/users/alice/tokens?page_size=10', undef, authorization => "Bearer $alice");
my ($session_item) = grep { ($_->{status} // {})->{session} } @{ $d->{items} // [] };
is($session_item && $session_item->{status}{session}{provider}, 'corp', '  and in the pages\' list (status.session)');
($r) = call('DELETE', "/users/alice/tokens/$session_item->{metadata}{name}", undef, authorization => "Bearer $alice");
is($r->{status}, 204, 'she ends the session from her token list');
$s->wait_auth_cache;
($r) = call('GET', "/organizations/$org/permissions", undef, authorization => "Bearer $alice");
is($r->{status}, 401, '  and it is refused from then on');
is(sql("SELECT m.policy_groups FROM memberships m JOIN principals p ON p.id = m.principal_id WHERE p.name = 'alice' AND m.role = 'operator'"),
   'dev*', '  the operator role limited to the mapping\'s policy groups');
is(sql("SELECT CONCAT(x.issuer, ' ', x.subject) FROM user_external_ids x JOIN principals p ON p.id = x.principal_id WHERE p.name = 'alice'"),
   $idp->issuer . ' alice', 'the user\'s external id is the issuer and subject');
my ($Y, $M, $D, $h, $m, $sec) = ($session->{expires_at} // '') =~ /^(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)Z$/;
my $left = defined $Y ? timegm($sec, $m, $h, $D, $M - 1, $Y) - time : 0;
ok($left > 3500 && $left <= 3602, "the session lasts session_seconds (an hour; ${left}s left)");

# the handoff code and the callback work once
my ($cb2) = cb('/auth/sso/callback?state=' . ('x' x 43) . '&code=nothing', '__Host-purser-sign-in=' . ('x' x 43) . '.' . ('y' x 43));
is($cb2->{status}, 400, 'a state that is no sign-in under way is refused (400)');
like($cb2->{headers}{'content-type'} // '', qr{^text/html}, '  to a browser as a page');
like($cb2->{content}, qr/<div class="error" role="alert">sign-in refused: &#39;state&#39; is not a sign-in under way/, '  naming the state');
like($cb2->{content}, qr{<a href="/admin/#/signin">Back to the sign-in</a>}, '  with the way back to the sign-in');
like($cb2->{content}, qr{<link rel="stylesheet" href="/admin/app.css">}, '  in the admin pages\' look');
($r, $d) = call('GET', '/auth/sso/callback?state=' . ('x' x 43) . '&code=nothing', undef, authorization => '',
                cookie => '__Host-purser-sign-in=' . ('x' x 43) . '.' . ('y' x 43));
is($r->{status}, 400, '  and as JSON to a client asking for it');
like(msg($d), qr/'state' is not a sign-in under way/, '  naming the state there too');
($r) = cb('/auth/sso/callback?error=%3Cscript%3Ealert(1)%3C/script%3E');
is($r->{status}, 401, 'a refusal by the provider is refused too (401)');
unlike($r->{content}, qr/<script>|&lt;script/, '  its words not on the page when they are no error code of OAuth\'s (a link may carry any)');
like($r->{content}, qr/not one of OAuth&#39;s codes/, '  saying so');
($r) = cb('/auth/sso/callback?error=Your+session+expired.+Call+IT+at+555-0100');
unlike($r->{content}, qr/555-0100/, '  (nor a message someone would have purser show)');
($r) = cb('/auth/sso/callback?error=access_denied');
like($r->{content}, qr/answered &#39;access_denied&#39;/, '  while one of its codes is named');
my ($path) = to_callback('corp', 'bob');
($cb) = cb($path);
is($cb->{status}, 302, 'bob signs in');
is($cb->{headers}{'set-cookie'}, undef, '  his sign-in cookie stays for the trade of the code');
my ($replay) = cb($path);
is($replay->{status}, 400, 'the same callback again is refused: its state was used');
my ($code) = ($cb->{headers}{location} =~ /code=(.+)$/);
($res, $session) = call('POST', '/auth/sso/session', { code => $code }, authorization => '', cookie => $sso_cookie);
is($res->{status}, 201, 'bob\'s handoff code is traded');
like($res->{headers}{'set-cookie'} // '', qr/^__Host-purser-sign-in=;.*Max-Age=0/, '  and his sign-in cookie is cleared then');
my $bob = $session->{token};
($res, $d) = call('POST', '/auth/sso/session', { code => $code }, authorization => '', cookie => $sso_cookie);
is($res->{status}, 401, 'the same handoff code again is refused');
like(msg($d), qr/unknown, used already or expired/, '  saying so');

# login CSRF: a callback URL is bound to the browser that began its sign-in. An attacker signs
# in at the provider as himself and sends the callback URL to a victim, whose browser holds no
# sign-in cookie (or its own sign-in's): refused, and nothing of the state used up.
$r = start('corp');
unlike($r->{headers}{location} // '', qr/[?&]prompt=/, 'the pages\' sign-in leaves the provider\'s session to the provider (no prompt)');
like($r->{headers}{'set-cookie'} // '', qr/^__Host-purser-sign-in=[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}; Path=\/; Max-Age=600; Secure; HttpOnly; SameSite=Lax$/,
     'the start binds the sign-in to the browser: a __Host- cookie (state.secret), Secure, HttpOnly, SameSite=Lax, ten minutes');
{
    my ($state) = ($r->{headers}{location} // '') =~ /[?&]state=([^&]+)/;
    my ($held_state, $secret) = $sso_cookie =~ /=([^.]+)\.(.+)$/;
    is($held_state, $state, '  its first half the state in the provider\'s URL');
    ok(index($r->{headers}{location} // '', $secret) < 0, '  its second half (the handoff\'s proof) in no URL');
}
my ($attacker_path) = to_callback('corp', 'bob');
my $attacker_cookie = $sso_cookie;
($r, $d) = call('GET', $attacker_path, undef, authorization => '');
is($r->{status}, 400, 'a callback URL followed by a browser that did not begin its sign-in is refused (400)');
like(msg($d), qr/'state' is not a sign-in this browser began/, '  naming the state');
start('corp');
($r, $d) = call('GET', $attacker_path, undef, authorization => '', cookie => $sso_cookie);
is($r->{status}, 400, '  and so is one followed by a browser in another sign-in of its own');
($r) = cb($attacker_path, $attacker_cookie);
is($r->{status}, 302, '  while the browser that began it still finishes it');

# login CSRF through the handoff: the code of an attacker's own finished sign-in, put in a link
# to /admin/#/sso?code=... and sent to a victim, is traded only by the browser that began it
# (its sign-in cookie); the victim's browser is refused, and the code is left for its owner
($r) = start('corp');
my ($own_path) = to_callback('corp', 'bob');
my $own_cookie = $sso_cookie;
($r) = cb($own_path, $own_cookie);
my ($own_code) = ($r->{headers}{location} // '') =~ m{^/admin/#/sso\?code=(.+)$};
ok($own_code, 'an attacker finishes a sign-in of his own and holds its handoff code');
my $sessions_before = sql('SELECT COUNT(*) FROM api_tokens WHERE provider_id IS NOT NULL');
($r, $d) = call('POST', '/auth/sso/session', { code => $own_code }, authorization => '');
is($r->{status}, 401, 'a handoff code traded by a browser without the sign-in cookie is refused (401)');
like(msg($d), qr/sign-in code was not begun here/, '  naming it');
start('corp');
($r, $d) = call('POST', '/auth/sso/session', { code => $own_code }, authorization => '', cookie => $sso_cookie);
is($r->{status}, 401, '  and so is one traded by a browser in another sign-in of its own');
is(sql('SELECT COUNT(*) FROM api_tokens WHERE provider_id IS NOT NULL'), $sessions_before, '  no session was made');
# the state is in the provider's URL (its logs, a Referer): with the code it trades nothing
my ($own_state, $own_secret) = $own_cookie =~ /=([^.]+)\.(.+)$/;
($r, $d) = call('POST', '/auth/sso/session', { code => $own_code, verifier => $own_state }, authorization => '');
is($r->{status}, 401, 'the pages\' code traded with its state as a verifier is refused (401)');
($r, $d) = call('POST', '/auth/sso/session', { code => $own_code, verifier => "cookie:$own_secret" }, authorization => '');
is($r->{status}, 400, '  and one with the cookie\'s proof in the body is refused (400)');
like(msg($d), qr/^verifier: not a purserctl verifier/, '  naming the verifier');
($r) = call('POST', '/auth/sso/session', { code => $own_code }, authorization => '', cookie => $own_cookie);
is($r->{status}, 201, '  while the browser that began it still trades it');

# purserctl's loopback: the code goes to a listener on 127.0.0.1, which any program could hold;
# the trade needs the verifier whose challenge the start was given
{
    use Digest::SHA qw(sha256);
    use MIME::Base64 qw(encode_base64url);
    my $return_to = 'http://127.0.0.1:9/callback';
    $r = start('corp', $return_to);
    is($r->{status}, 400, 'a loopback sign-in without handoff_challenge is refused (400)');
    like($r->{content}, qr/handoff_challenge must be/, '  naming handoff_challenge');
    my $verifier = 'v' x 43;
    my $challenge = encode_base64url(sha256($verifier));
    $r = start('corp', "$return_to&handoff_challenge=$challenge");
    is($r->{status}, 302, 'with its challenge it starts') or diag("$r->{status} $r->{content}");
    like($r->{headers}{location} // '', qr/[?&]prompt=login(&|$)/, '  asking the provider to have the person sign in again (prompt=login: a local program may have begun it)');
    my ($at) = $idp->login($r->{headers}{location}, 'bob', 'bob-pw', $callback);
    ($r) = cb(substr($at // '', length $url));
    my ($loop_code) = ($r->{headers}{location} // '') =~ m{^\Q$return_to\E\?code=(.+)$};
    ok($loop_code, '  and its code goes to the listener');
    like($r->{headers}{'set-cookie'} // '', qr/^__Host-purser-sign-in=;.*Max-Age=0/, '  the browser\'s sign-in cookie cleared (purserctl holds the proof)');
    ($r, $d) = call('POST', '/auth/sso/session', { code => $loop_code }, authorization => '');
    is($r->{status}, 401, 'the listener\'s code traded without the verifier is refused (401)');
    like(msg($d), qr/sign-in code was not begun here/, '  naming it');
    ($r) = call('POST', '/auth/sso/session', { code => $loop_code, verifier => 'w' x 43 }, authorization => '');
    is($r->{status}, 401, '  and so is one with another verifier');
    ($r, $d) = call('POST', '/auth/sso/session', { code => $loop_code, verifier => $verifier }, authorization => '');
    is($r->{status}, 201, '  with the verifier it is traded');
    # a provider that ignores prompt=login finishes it with an old session of the person's
    $r = start('corp', "$return_to&handoff_challenge=$challenge");
    like($r->{headers}{location} // '', qr/[?&]max_age=0(&|$)/, 'a loopback sign-in also asks max_age=0 (the provider must say when it signed the person in)');
    ($at) = $idp->login($r->{headers}{location}, 'bob', 'bob-pw', $callback);
    $idp->control('fault', { kind => 'stale-auth' });
    ($r, $d) = call('GET', substr($at // '', length $url), undef, authorization => '', cookie => $sso_cookie);
    is($r->{status}, 401, '  an ID token whose auth_time is before the sign-in began is refused (401)');
    like(msg($d), qr/did not sign the person in again/, '  naming it');
}

# a replayed code: the provider's code of a finished sign-in, under a new state
my ($old_query) = $path =~ /[?&](code=[^&]+)/;
$r = start('corp');
my ($new_state) = $r->{headers}{location} =~ /[?&]state=([^&]+)/;
($r, $d) = call('GET', "/auth/sso/callback?state=$new_state&$old_query", undef, authorization => '',
                cookie => $sso_cookie);
is($r->{status}, 401, 'a replayed authorization code is refused (401)');
like(msg($d), qr/would not trade the code/, '  naming the code');

# ---- the ID token's refusals, each made by the provider gone wrong once ----
sleep 2; # nginx limits /auth/sso/ to 10 a second after a burst of 40: this test's own pace stays under it
my $users_before = sql("SELECT COUNT(*) FROM principals WHERE kind = 'user'");
for my $case (['expired', qr/expired/, 'an expired ID token'],
              ['foreign-key', qr/signature does not verify/, 'an ID token signed by another key'],
              ['audience', qr/'aud' does not name this client/, 'an ID token for another client'],
              ['issuer', qr/'iss' is not the provider's issuer/, 'an ID token of an unknown issuer'],
              ['nonce', qr/'nonce' is not the one this sign-in sent/, 'an ID token of another sign-in (nonce)']) {
    my ($fault, $message, $what) = @$case;
    my ($p) = to_callback('corp', 'carol');
    $idp->control('fault', { kind => $fault });
    ($r, $d) = call('GET', $p, undef, authorization => '', cookie => $sso_cookie);
    is($r->{status}, 401, "$what is refused (401)");
    like(msg($d), $message, '  naming what failed');
}
is(sql("SELECT COUNT(*) FROM principals WHERE kind = 'user'"), $users_before,
   'no refused sign-in made a user');
is(roles_of('carol'), '', '  nor a membership');

# a redirect to another origin
$r = start('corp', 'https://elsewhere.example.test/');
is($r->{status}, 400, 'a sign-in that would hand its code to another origin is refused (400)');
like($r->{content}, qr/return_to must be a loopback URL/, '  naming return_to');
$r = start('nosuch');
is($r->{status}, 404, 'a provider that does not exist is refused (404)');
like($r->{headers}{'content-type'} // '', qr{^text/html}, '  to a browser (the start is a navigation) as a page');
like($r->{content}, qr{<div class="error" role="alert">[^<]*no such identity provider}, '  naming what failed');
($r, $d) = call('GET', '/auth/sso/nosuch/start', undef, authorization => '');
like(msg($d), qr/no such identity provider/, '  and as JSON to a client asking for it');

# ---- ES256, and a key rotation at the provider ----
($cb, $res, $session) = sign_in('corp-es', 'dave');
is($res && $res->{status}, 201, 'an ES256 ID token is taken (the ES256 client)') or diag($cb->{content});

# a name already used here by a user the provider did not make is never taken over
($cb) = sign_in('corp', 'admin');
is($cb->{status}, 409, 'a sign-in as a user the provider did not make is refused (409)');
like($cb->{content}, qr/exists and was not made by this provider/, '  naming it');
($cb) = sign_in('corp', 'dave');
is($cb->{status}, 409, '  and so is one as a user another provider made');
$idp->control('rotate');
($cb, $res, $session) = sign_in('corp', 'carol');
is($res && $res->{status}, 201, 'after the provider rotates its keys, a token under the new kid is taken (the JWKS fetched again)')
    or diag($cb->{content});
is(roles_of('carol'), 'admin', 'carol is admin through ops');

# ---- a group removed at the provider: the role goes at the next sign-in ----
$idp->control('user', { name => 'alice', groups => ['dev-web'] });
($cb, $res, $session) = sign_in('corp', 'alice');
is($res && $res->{status}, 201, 'alice signs in again');
is(roles_of('alice'), 'operator', 'her admin role went with the ops group');
$alice = $session->{token};

# ---- a membership given by hand stays ----
($r) = call('POST', "/organizations/$org/users", { username => 'bob', roles => ['reader'] });
($cb, $res) = sign_in('corp', 'bob');
is(roles_of('bob'), 'operator,reader', 'a role given by hand stays beside the mapped ones');

# ---- a user disabled at the provider cannot sign in there ----
sleep 2;
$idp->control('user', { name => 'carol', disabled => JSON::PP::true });
($cb) = sign_in('corp', 'carol');
is($cb->{status}, 0, 'a user disabled at the provider gets no code');
like($cb->{content}, qr/disabled/, '  its sign-in page says so');

# ---- a user deactivated here: the session ends, a new sign-in is refused ----
($r) = call('PATCH', '/users/alice', { active => JSON::PP::false });
$s->wait_auth_cache;
($r) = call('GET', "/organizations/$org/permissions", undef, authorization => "Bearer $alice");
is($r->{status}, 401, 'a deactivated user\'s session is refused');
($cb) = sign_in('corp', 'alice');
is($cb->{status}, 403, 'a deactivated user cannot sign in again (403)');
like($cb->{content}, qr/deactivated/, '  naming it');

# ---- sign-out ends the session on the server ----
($cb, $res, $session) = sign_in('corp', 'bob');
my $bob2 = $session->{token};
($r) = call('POST', '/auth/sso/sign-out', undef, authorization => "Bearer $bob2");
is($r->{status}, 204, 'sign-out answers 204');
$s->wait_auth_cache;
($r) = call('GET', "/organizations/$org/permissions", undef, authorization => "Bearer $bob2");
is($r->{status}, 401, 'the signed-out session is refused');
($r) = call('POST', '/auth/sso/sign-out');
is($r->{status}, 204, 'signing out with a token that is not a session');
($r) = call('GET', "/organizations/$org/permissions");
is($r->{status}, 200, '  leaves that token alone');

# ---- what a sign-in makes ends with it; a provider changed takes back what it granted ----
{
    my ($c, $res2, $sess) = sign_in('corp-es', 'dave');
    my $bs = $sess->{token};
    my ($rr, $tok) = call('POST', '/users/dave/tokens', { description => 'made with a session', expires_in => 10 * 86400 },
                          authorization => "Bearer $bs");
    is($rr->{status}, 201, 'a session makes an API token');
    ok(defined $tok->{expires_at} && $tok->{expires_at} le $sess->{expires_at},
       "  which ends with the session at the latest ($tok->{expires_at}, the session $sess->{expires_at})");
    is(sql("SELECT COUNT(*) FROM api_tokens t JOIN identity_providers i ON i.id = t.provider_id WHERE t.id = '$tok->{id}' AND i.name = 'corp-es'"), 1,
       '  and is the provider\'s, as the session is');
    my ($rk, $dk) = call('POST', '/users/dave/keys', { name => 'laptop', public_key => 'x' }, authorization => "Bearer $tok->{token}");
    is($rk->{status}, 403, 'a key added with a token made by a session is refused (403: it would outlive the sign-in)');
    like(msg($dk), qr/adds or changes no key of its own user/, '  saying why');
    ($rk, $dk) = call('PUT', '/users/dave/keys/default', { name => 'default', create_key => JSON::PP::true, expiration_date => 'infinity' },
                      authorization => "Bearer $bs");
    is($rk->{status}, 403, '  and so is a key of its own changed (a new key made) with the session itself');
    # what a handoff of the old settings would have traded is gone with them (below)
    my ($at_old) = to_callback('corp-es', 'dave');
    # the mappings change: what they granted goes, with the sessions and what they made
    ($rr, my $pd) = call('GET', '/identity-providers/corp-es');
    my %spec = %{ $pd->{spec} };
    ($rr) = call('PUT', '/identity-providers/corp-es', { metadata => { name => 'corp-es', revision => $pd->{metadata}{revision} },
        spec => { %spec, mappings => [$mappings[0]] } });
    is($rr->{status}, 200, 'the provider\'s mappings are changed') or diag($rr->{content});
    $s->wait_auth_cache;
    is(sql("SELECT COUNT(*) FROM memberships m JOIN principals p ON p.id = m.principal_id WHERE p.name = 'dave' AND m.provider_id IS NOT NULL"), 0,
       '  the memberships it granted are taken back (the next sign-in grants what it grants now)');
    ($rr) = call('GET', "/organizations/$org/permissions", undef, authorization => "Bearer $bs");
    is($rr->{status}, 401, '  the session ends');
    ($rr) = call('GET', "/organizations/$org/permissions", undef, authorization => "Bearer $tok->{token}");
    is($rr->{status}, 401, '  and so does the token made with it');
    ($rr, my $dd) = call('GET', $at_old, undef, authorization => '', cookie => $sso_cookie);
    is($rr->{status}, 400, '  and a sign-in begun before the change cannot finish') or diag($rr->{content});
    like(msg($dd), qr/'state' is not a sign-in under way/, '  (its state gone with the change, not refused for another reason)');
    # a new issuer: the stored secret is the old client's, and the old issuer's subjects are not the new one's
    ($rr, $pd) = call('GET', '/identity-providers/corp-es');
    my $moved = { metadata => { name => 'corp-es', revision => $pd->{metadata}{revision} },
                  spec => { %{ $pd->{spec} }, issuer => 'https://elsewhere.example.test' } };
    my ($rp, $dp) = call('PUT', '/identity-providers/corp-es', $moved);
    is($rp->{status}, 400, 'a new issuer without the client secret is refused (400)');
    like(msg($dp), qr/^spec\.client_secret/, '  naming spec.client_secret');
    my $linked = sql("SELECT COUNT(*) FROM user_external_ids x JOIN identity_providers i ON i.id = x.provider_id WHERE i.name = 'corp-es'");
    ok($linked > 0, "  (its users still linked: $linked)");
    ($rp) = call('PUT', '/identity-providers/corp-es', { %$moved, spec => { %{ $moved->{spec} }, issuer => $idp->issuer . '/', client_secret => 'es-secret-4012' } });
    is($rp->{status}, 200, 'with the secret it is taken') or diag($rp->{content});
    is(sql("SELECT COUNT(*) FROM user_external_ids x JOIN identity_providers i ON i.id = x.provider_id WHERE i.name = 'corp-es'"), 0,
       '  and its users are no longer linked to it (another issuer\'s dave is not this one)');
    ($rp, $pd) = call('GET', '/identity-providers/corp-es');
    ($rp) = call('PUT', '/identity-providers/corp-es', { metadata => { name => 'corp-es', revision => $pd->{metadata}{revision} },
        spec => { %{ $pd->{spec} }, issuer => $idp->issuer, client_secret => 'es-secret-4012', mappings => \@mappings } });
    is($rp->{status}, 200, '  (the issuer and the mappings put back)');
    ($c) = sign_in('corp-es', 'dave');
    is($c->{status}, 409, '  a sign-in as dave through it now is refused: dave is no longer its user') or diag($c->{content});
}

# ---- a mapping on email grants only a verified one (many providers let a user type any) ----
{
    my ($rr) = call('POST', '/identity-providers', { metadata => { name => 'corp-mail' }, spec => {
        issuer => $idp->issuer, client_id => 'purser', client_secret => 'rs-secret-4012',
        scopes => ['openid', 'profile', 'email'],
        mappings => [{ claim => 'email', value => '*@example.test', organization => $org, role => 'reader' }] } });
    is($rr->{status}, 201, 'a provider mapping on email');
    my ($c) = sign_in('corp-mail', 'erin');
    is($c->{status}, 302, '  erin (email verified) signs in') or diag($c->{content});
    is(roles_of('erin'), 'reader', '  and is a reader through her email');
    ($c) = sign_in('corp-mail', 'frank');
    is($c->{status}, 302, '  frank (email not verified) signs in') or diag($c->{content});
    is(roles_of('frank'), '', '  and is granted nothing by it');
    ($rr) = call('DELETE', '/identity-providers/corp-mail');
}

# ---- the provider deleted: its sessions end ----
($r) = call('GET', "/organizations/$org/permissions", undef, authorization => "Bearer $bob");
is($r->{status}, 200, 'bob\'s first session works');
($r) = call('DELETE', '/identity-providers/corp');
is($r->{status}, 204, 'the provider is deleted');
$s->wait_auth_cache;
($r) = call('GET', "/organizations/$org/permissions", undef, authorization => "Bearer $bob");
is($r->{status}, 401, 'its sessions are refused');
is(roles_of('bob'), 'reader', 'the memberships its mappings granted went with it, the one given by hand stayed');
$r = start('corp');
is($r->{status}, 404, 'signing in through it is refused');

# ---- counted, as events, logged without tokens ----
($r) = $s->request('GET', '/metrics');
my $metrics = $r->{content};
for my $reason (qw(state code expired signature audience issuer nonce redirect provider handoff user)) {
    like($r->{content}, qr/^purser_sign_in_refusals_total\{reason="$reason"\} [1-9]/m, "refusals for $reason are counted");
}
like($r->{content}, qr/^purser_sign_ins_total [1-9]/m, 'sign-ins are counted');
($r, $d) = call('GET', "/organizations/$org/events?since=0&kinds=sign_in,sign_in_refused,identity_provider&page_size=500");
my %ops;
$ops{"$_->{kind}:$_->{op}"}++ for @{ $d->{items} // $d->{events} // [] };
ok($ops{'sign_in:put'}, 'sign-ins are events of the organization');
ok($ops{'sign_in_refused:put'}, 'refusals are events');
{   # anyone may be refused (the routes need no sign-in): at most one event a minute per reason and worker
    my %events;
    $events{ $_->{reason} // '?' }++ for grep { $_->{kind} eq 'sign_in_refused' } @{ $d->{items} // $d->{events} // [] };
    my ($counted) = $metrics =~ /^purser_sign_in_refusals_total\{reason="code"\} (\d+)/m;
    ok(($counted // 0) > 2 && ($events{code} // 0) >= 1 && ($events{code} // 0) <= 2,
       "  no more than one a minute per reason and worker (code: " . ($counted // 0) . ' refused, ' . ($events{code} // 0) . ' events)')
        or diag(explain(\%events));
}
ok($ops{'identity_provider:put'} && $ops{'identity_provider:delete'}, 'the provider\'s creation and deletion are events');
my $log = join '', $s->log_lines('purser-fcgi.log');
like($log, qr/sign-in refused/, 'refusals are logged');
for my $secret ([$alice, 'a session token'], [$bob, 'another session token'], [$code, 'a handoff code'],
                ['rs-secret-4012', 'the client secret']) {
    ok(index($log, $secret->[0]) < 0, "the log holds no $secret->[1]");
}
# the provider's code and purser's state come back in the callback's query: nginx's access
# log leaves that query out (as it does /install/'s bootstrap token)
my @access = grep { m{/auth/sso/callback} } $s->log_lines('nginx-access.log');
ok(@access, 'the access log has the callbacks');
ok(!grep({ m{/auth/sso/callback\?} } @access), '  without their query (the code and the state)')
    or diag($access[0]);

# ---- export and import: a provider mapping to the organization, never its client secret ----
{
    my $admin = 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN');
    my $export = $s->request('GET', "/organizations/$org/export", { headers => { authorization => $admin, accept => 'application/json' } });
    is($export->{status}, 200, 'the organization is exported');
    my $docs = eval { decode_json($export->{content}) } // [];
    my @providers = grep { $_->{kind} eq 'IdentityProvider' } @$docs;
    is_deeply([map { $_->{metadata}{name} } @providers], ['corp-es'], 'its export holds the provider that maps to it');
    is_deeply([map { $_->{organization} } @{ $providers[0]{spec}{mappings} // [] }], [$org, $org], '  with its mappings to this organization');
    ok(!exists $providers[0]{spec}{client_secret}, '  and no client secret');
    unlike($export->{content}, qr/es-secret-4012/, '  nowhere in the export');
    $export = $s->request('GET', "/organizations/$org/export?secrets=true", { headers => { authorization => $admin, accept => 'application/json' } });
    unlike($export->{content} // '', qr/es-secret-4012/, '  not even in one with secrets');
    my $yaml = $s->request('GET', "/organizations/$org/export", { headers => { authorization => $admin } })->{content};
    # an organization's admin (not a server admin) exports it: the server's providers are not in it
    call('POST', '/users', { username => 'orgadm' });
    call('POST', "/organizations/$org/users", { username => 'orgadm', roles => ['admin'] });
    my (undef, $tok) = call('POST', '/users/orgadm/tokens', {});
    my $orgadm = "Bearer $tok->{token}";
    $export = $s->request('GET', "/organizations/$org/export", { headers => { authorization => $orgadm, accept => 'application/json' } });
    is($export->{status}, 200, 'the organization\'s admin exports it');
    $docs = eval { decode_json($export->{content}) } // [];
    is(scalar(grep { $_->{kind} eq 'IdentityProvider' } @$docs), 0, '  without the identity providers (read_identity_providers is a server admin\'s)');
    ok(scalar(grep { $_->{kind} eq 'Organization' } @$docs), '  with the rest of it');
    # a mapping to a role the policy file does not have: the import refused, nothing made
    (my $bad = $yaml) =~ s/(kind: IdentityProvider\n(?:.*\n)*?\s+role: )\S+/${1}no-such-role/ or die 'no mapping role in the export';
    ($r) = call('POST', '/organizations', { name => 'idp-bad', full_name => 'Bad roles' });
    my $imp = $s->request('POST', '/organizations/idp-bad/import', { headers => { authorization => $admin,
        'content-type' => 'application/x-yaml', accept => 'application/json' }, content => $bad });
    is($imp->{status}, 400, 'an import whose provider maps to an unknown role is refused (400)');
    like(msg(eval { decode_json($imp->{content}) } // {}), qr/IdentityProvider corp-es.*spec\.mappings\[\d\]\.role: unknown role no-such-role/, '  naming the document and the field') or diag($imp->{content});
    # the provider is still on this server: an import leaves it as it is, and does not count it as imported
    $imp = $s->request('POST', '/organizations/idp-bad/import', { headers => { authorization => $admin,
        'content-type' => 'application/x-yaml', accept => 'application/json' }, content => $yaml });
    is($imp->{status}, 201, 'an import while the provider is on the server (into the same organization: the refused one left it empty)') or diag($imp->{content});
    my $summary = eval { decode_json($imp->{content}) } // {};
    ok(!exists $summary->{imported}{IdentityProvider}, '  does not count it as imported') or diag($imp->{content});
    like(join(' ', map { $_->{reason} // '' } @{ $summary->{left_out} // [] }), qr/left as it is/, '  and says it was left as it is');
    # into another organization of a server where the provider is gone
    ($r) = call('DELETE', '/identity-providers/corp-es');
    # a site policy that lets organization admins import: their import does not make the
    # server's providers (write_identity_providers is not theirs)
    (my $policy = do { local (@ARGV, $/) = PurserStack::root() . '/policies/default.yaml'; <> })
        =~ s/(  admin:\n(?:.*\n)*?    actions:\n)/$1      - import_organization\n/ or die 'no admin role';
    my $file = $s->dir . '/policy-import.yaml';
    { open my $fh, '>', $file or die; print $fh $policy; close $fh }
    $s->use_policy_file($file);
    my @old = $s->worker_pids;
    kill 'HUP', $s->master_pid;
    PurserStack::wait_for(10, sub { my %o = map { $_ => 1 } @old; my @w = $s->worker_pids; @w == 2 && !grep { $o{$_} } @w });
    ($r) = call('POST', '/organizations', { name => 'idp-limited', full_name => 'Imported by its admin' });
    call('POST', '/organizations/idp-limited/users', { username => 'orgadm', roles => ['admin'] });
    $imp = $s->request('POST', '/organizations/idp-limited/import', { headers => { authorization => $orgadm,
        'content-type' => 'application/x-yaml', accept => 'application/json' }, content => $yaml });
    is($imp->{status}, 201, 'an organization admin allowed to import imports the export') or diag($imp->{content});
    $summary = eval { decode_json($imp->{content}) } // {};
    ok(!exists $summary->{imported}{IdentityProvider}, '  without making the identity provider');
    like(join(' ', map { $_->{reason} // '' } grep { ($_->{kind} // '') eq 'IdentityProvider' } @{ $summary->{left_out} // [] }),
        qr/only a holder of write_identity_providers/, '  left_out saying why');
    ($r) = call('GET', '/identity-providers/corp-es');
    is($r->{status}, 404, '  (no provider of that name on the server)');
    ($r) = call('POST', '/organizations', { name => 'idp-import', full_name => 'Imported' });
    $imp = $s->request('POST', '/organizations/idp-import/import', { headers => { authorization => $admin,
        'content-type' => 'application/x-yaml', accept => 'application/json' }, content => $yaml });
    is($imp->{status}, 201, 'the export is imported into another organization') or diag($imp->{content});
    $summary = eval { decode_json($imp->{content}) } // {};
    is($summary->{imported}{IdentityProvider}, 1, '  counting the provider it made');
    my ($said) = grep { ($_->{kind} // '') eq 'IdentityProvider' } @{ $summary->{left_out} // [] };
    is($said && $said->{field}, 'spec.client_secret', '  saying the provider\'s client secret must be set again');
    ($r, $d) = call('GET', '/identity-providers/corp-es');
    is($r->{status}, 200, '  the provider is made');
    is($d->{status}{client_secret_set}, JSON::PP::false, '  without a client secret');
    is_deeply([map { $_->{organization} } @{ $d->{spec}{mappings} }], ['idp-import', 'idp-import'], '  its mappings granting in the organization imported into');
    $r = start('corp-es');
    is($r->{status}, 400, '  no one signs in through it until the secret is set');
    like($r->{content}, qr/has no client secret/, '  saying so');
}

# ---- http.external_url: the redirect_uri is made from it, never from the Host a client sent ----
{
    my $port = $s->env('PURSER_PORT') // ($url =~ /:(\d+)$/)[0];
    ($r) = call('POST', '/identity-providers', provider_body('corp-rs', 'purser', 'rs-secret-4012'));
    my $start_as = sub {
        my ($host) = @_;
        my $head = `curl -sk -o /dev/null -D - -H 'Host: $host' '$url/auth/sso/corp-rs/start'`;
        my ($status) = $head =~ m{^HTTP/\S+ (\d+)}m;
        my ($location) = $head =~ /^location: (\S+)/mi;
        return ($status // 0, $location // '');
    };
    my ($status, $location) = $start_as->('purser.example.test');
    is($status, 302, 'with no http.external_url a sign-in begins under any Host');
    like($location, qr/redirect_uri=https%3A%2F%2Fpurser\.example\.test%2Fauth/, '  whose redirect_uri follows it');
    my $file = $s->dir . '/purser.yaml';
    my $cfg = do { local (@ARGV, $/) = $file; <> };
    $cfg =~ s/^http:\n/http:\n  external_url: https:\/\/purser.example.test\n/m or die "no http section in $file";
    open my $fh, '>', $file or die; print $fh $cfg; close $fh;
    my @old = $s->worker_pids;
    kill 'HUP', $s->master_pid;
    PurserStack::wait_for(10, sub { my %o = map { $_ => 1 } @old; my @w = $s->worker_pids; @w == 2 && !grep { $o{$_} } @w });
    ($status, $location) = $start_as->("127.0.0.1:$port");
    is($status, 400, 'with http.external_url set, a sign-in begun under another Host is refused (400)');
    ($status, $location) = $start_as->('purser.example.test');
    is($status, 302, '  under the configured one it begins');
    like($location, qr/redirect_uri=https%3A%2F%2Fpurser\.example\.test%2Fauth%2Fsso%2Fcallback(&|$)/, '  its redirect_uri made from http.external_url');
    $r = $s->request('GET', '/auth/sso/corp-rs/start');
    like($r->{content}, qr{begin it at https://purser\.example\.test \(http\.external_url\)}, '  the refusal naming where to begin');
}

# /auth/sso/ is open and each start writes a pending sign-in: rate-limited per address
{
    local $s->{checking} = 1; # a 429 comes from nginx, not an answer of purser's operations
    my %seen;
    for (1 .. 80) {
        my $res = $s->request('GET', '/auth/sso/no-such-provider/start');
        $seen{ $res->{status} }++;
        $seen{json429}++ if $res->{status} == 429 && $res->{content} =~ /"limit_exceeded"/;
    }
    ok($seen{429}, 'a burst of 80 starts from one address meets the rate limit (429 x ' . ($seen{429} // 0) . ')');
    is($seen{json429}, $seen{429}, '  in purser\'s error form');
}

$s->stop;
done_testing;

#!/usr/bin/perl
# 4013: the admin pages' sign-in through an identity provider in Chromium (issue 52): the
# sign-in page offers "Sign in with NAME" beside the token form; the provider's login brings the
# tab back signed in as the provider's user, with the session token in this tab's
# sessionStorage only (never in the address, a cookie or localStorage); sign-out ends the
# session on the server, not only in the tab.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;
use PurserOidc;

my $s = PurserStack->new(workers => 2, auth_ttl => 1);
my $org = $s->env('PURSER_ORG');
my $idp = PurserOidc->start($s->dir,
    users => { erin => { password => 'erin-pw', groups => ['ops'] },
               mallory => { password => 'mallory-pw', groups => ['ops'] } },
    clients => [{ client_id => 'purser', client_secret => 'pages-secret-4013',
                  redirect_uris => [$s->url . '/auth/sso/callback'] }]);
$s->must('a provider', 'POST', '/identity-providers', { metadata => { name => 'corp' }, spec => {
    display_name => 'Corp SSO', issuer => $idp->issuer, client_id => 'purser',
    client_secret => 'pages-secret-4013', scopes => ['openid', 'profile', 'groups'],
    mappings => [{ value => 'ops', organization => $org, role => 'admin' }] } });

# login CSRF: mallory finishes a sign-in of his own (no browser) and puts its handoff code in a
# link to the pages, which the browser follows after its own sign-in
my $start = $s->request('GET', '/auth/sso/corp/start');
my ($cookie) = ($start->{headers}{'set-cookie'} // '') =~ /^(__Host-purser-sign-in=[^;]+)/;
my ($at) = $idp->login($start->{headers}{location}, 'mallory', 'mallory-pw', $s->url . '/auth/sso/callback');
my $cb = $s->request('GET', substr($at // '', length $s->url), { headers => { cookie => $cookie // '' } });
my ($forged) = ($cb->{headers}{location} // '') =~ m{code=(.+)$};
ok($forged, 'mallory holds the handoff code of a sign-in of his own');

my %seen = PurserStack::browser_run('sso', { url => $s->url, out => $s->dir . '/shots', org => $org,
    provider => 'Corp SSO', user => 'erin', password => 'erin-pw', forged => $forged });
is($seen{error}, undef, 'the browser went through the whole sign-in') or diag($seen{error});
is_deeply($seen{buttons}, ['Sign in with Corp SSO'], 'the sign-in page offers "Sign in with NAME" for the provider');
ok($seen{'at the provider'}, 'the button leads to the provider\'s own login page');
is($seen{principal}, 'signed in as erin', 'back on the pages, signed in as the provider\'s user');
unlike($seen{address} // 'code=', qr/code=/, 'the one-time code is gone from the address');
my $stored = $seen{storage} // {};
ok($stored->{token}, 'the session token is in the tab\'s sessionStorage');
is_deeply($stored->{local}, [], '  nothing in localStorage');
is($stored->{cookies}, '', '  and no cookie');
is_deeply($seen{'token in a URL'}, [], 'no request carried the token in its URL');
is($seen{'signed out'}, undef, 'sign-out forgets the token in the tab');
my ($r) = $s->call('GET', "/organizations/$org/permissions", undef,
                   authorization => 'Bearer ' . ($stored->{token} // 'none'));
is($r->{status}, 401, 'and the session is refused on the server after sign-out');
is($s->sql('SELECT COUNT(*) FROM api_tokens WHERE provider_id IS NOT NULL') + 0, 0,
   'no session of the provider is left');
my $forged_seen = $seen{'forged link'} // {};
like($forged_seen->{message} // '', qr/not begun in this tab/, 'a link with a sign-in code this tab did not ask for is refused, saying so');
is($forged_seen->{token}, undef, '  nobody is signed in');
is_deeply($forged_seen->{traded}, [], '  and the page did not even try to trade the code');
unlike($forged_seen->{address} // 'code=', qr/code=/, '  which is gone from the address');
is($s->sql('SELECT COUNT(*) FROM oidc_handoffs') + 0, 1, '  mallory\'s code is still untraded');
is_deeply($seen{problems}, [], 'no console error, page error or CSP violation');

$s->stop;
done_testing;

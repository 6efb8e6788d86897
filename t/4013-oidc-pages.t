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
    users => { erin => { password => 'erin-pw', groups => ['ops'] } },
    clients => [{ client_id => 'purser', client_secret => 'pages-secret-4013',
                  redirect_uris => [$s->url . '/auth/sso/callback'] }]);
$s->must('a provider', 'POST', '/identity-providers', { metadata => { name => 'corp' }, spec => {
    display_name => 'Corp SSO', issuer => $idp->issuer, client_id => 'purser',
    client_secret => 'pages-secret-4013', scopes => ['openid', 'profile', 'groups'],
    mappings => [{ value => 'ops', organization => $org, role => 'admin' }] } });

my %seen = PurserStack::browser_run('sso', { url => $s->url, out => $s->dir . '/shots', org => $org,
    provider => 'Corp SSO', user => 'erin', password => 'erin-pw' });
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
is_deeply($seen{problems}, [], 'no console error, page error or CSP violation');

$s->stop;
done_testing;

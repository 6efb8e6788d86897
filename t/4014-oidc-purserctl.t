#!/usr/bin/perl
# 4014: purserctl login --sso (issue 52) against a real OpenID Provider on loopback: by the
# browser and purserctl's loopback listener (the callback hands a one-time code to
# http://127.0.0.1:PORT, purserctl trades it for the session), and by the device authorization
# grant (purser proxies it: the client secret stays in purser); the context keeps the session's
# end and the session works; an ended session is refused by purserctl itself, naming how to
# sign in again; purserctl logout ends it on the server. The identity provider is created with
# purserctl too (create identity-provider).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use File::Temp qw(tempdir);
use HTTP::Tiny;
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);
use YAML::XS ();
use PurserStack;
use PurserOidc;

delete @ENV{qw(PURSER_URL PURSER_CA PURSER_ORG PURSER_TOKEN XDG_CONFIG_HOME BROWSER)};
my $tmp = tempdir('purserctl-sso-XXXXXX', TMPDIR => 1, CLEANUP => 1);
$ENV{HOME} = $tmp;
$ENV{PURSER_CTL_CONFIG} = "$tmp/ctl/config.yaml";
$ENV{PURSER_CTL_STRICT} = 1;
my $purserctl = PurserStack::build() . '/purserctl';

my $s = PurserStack->new(workers => 2, auth_ttl => 1);
my $org = $s->env('PURSER_ORG');
my $url = $s->url;
my $callback = "$url/auth/sso/callback";
my $idp = PurserOidc->start($s->dir,
    users => { frank => { password => 'frank-pw', groups => ['ops'] },
               grace => { password => 'grace-pw', groups => ['ops'] } },
    clients => [{ client_id => 'purser', client_secret => 'ctl-secret-4014', redirect_uris => [$callback] }]);

# run(ARGS...): purserctl to its end: (exit code, stdout, stderr)
sub run {
    my $pid = spawn(@_);
    waitpid $pid, 0;
    return ($? >> 8, slurp("$tmp/out"), slurp("$tmp/err"));
}
sub spawn {
    my @args = @_;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDIN, '<', '/dev/null';
        open STDOUT, '>', "$tmp/out";
        open STDERR, '>', "$tmp/err";
        exec $purserctl, @args or die "exec: $!";
    }
    return $pid;
}
sub slurp { my ($f) = @_; open my $fh, '<', $f or return ''; local $/; <$fh> // '' }
sub wait_for_text {
    my ($file, $re) = @_;
    for (1 .. 200) { my $t = slurp($file); return $1 if $t =~ $re; sleep 0.1 }
    return undef;
}
sub finish {
    my ($pid) = @_;
    for (1 .. 300) { return $? >> 8 if waitpid($pid, WNOHANG) == $pid; sleep 0.1 }
    kill 'TERM', $pid;
    waitpid $pid, 0;
    return -1;
}
sub context { my $c = eval { YAML::XS::LoadFile($ENV{PURSER_CTL_CONFIG}) } // {}; ($c->{contexts} // [])->[0] // {} }

# the provider made with purserctl, as an admin's context
my ($code, $out, $err) = run('login', '--from', $s->dir . '/stack.env', '--name', 'admin');
is($code, 0, 'an admin context') or diag($err);
open my $fh, '>', "$tmp/idp.yaml" or die;
print $fh YAML::XS::Dump({ kind => 'IdentityProvider', metadata => { name => 'corp' }, spec => {
    issuer => $idp->issuer, client_id => 'purser', client_secret => 'ctl-secret-4014',
    scopes => ['openid', 'profile', 'groups'],
    mappings => [{ value => 'ops', organization => $org, role => 'admin' }] } });
close $fh;
($code, $out, $err) = run('create', 'identity-provider', '-f', "$tmp/idp.yaml");
is($code, 0, 'purserctl create identity-provider') or diag($err);
($code, $out) = run('get', 'identity-providers');
like($out, qr/^corp\s+\Q@{[$idp->issuer]}\E\s+purser\s+1\s/m, 'purserctl get identity-providers lists it');
unlike($out, qr/ctl-secret-4014/, '  without its secret');

# ---- the browser and the loopback listener ----
my $pid = spawn('login', '--url', $url, '--ca', $s->env('PURSER_CA'), '--org', $org, '--sso', 'corp', '--name', 'sso');
my $start = wait_for_text("$tmp/err", qr{(https://\S+/auth/sso/corp/start\?\S+)});
ok($start, 'purserctl prints the address to open') or diag(slurp("$tmp/err"));
like($start // '', qr{return_to=http%3A%2F%2F127\.0\.0\.1%3A\d+%2Fcallback}, '  which returns to its loopback listener');
my $r = $s->request('GET', substr($start // '', length $url));
is($r->{status}, 302, 'purser sends the browser to the provider');
my ($cookie) = ($r->{headers}{'set-cookie'} // '') =~ /^(__Host-purser-sign-in=[^;]+)/;
my ($at) = $idp->login($r->{headers}{location}, 'frank', 'frank-pw', $callback);
ok($at, 'the provider sends the browser back to purser');
$r = $s->request('GET', substr($at // '', length $url), { headers => { cookie => $cookie // '' } });
like($r->{headers}{location} // '', qr{^http://127\.0\.0\.1:\d+/callback\?code=[A-Za-z0-9_-]+$},
     'purser\'s callback hands a one-time code to purserctl\'s listener');
my $browser = HTTP::Tiny->new(max_redirect => 0, timeout => 10)->get($r->{headers}{location} // 'http://127.0.0.1:1/');
is($browser->{status}, 200, 'the listener answers the browser');
like($browser->{content}, qr/Signed in/, '  saying it is signed in');
is(finish($pid), 0, 'purserctl login --sso ends well') or diag(slurp("$tmp/err"));
like(slurp("$tmp/out"), qr/logged in to \S+ as frank .*the session ends at \d{4}-\d\d-\d\dT/, '  naming the user and when the session ends');
my $ctx = context();
($ctx) = grep { $_->{name} eq 'sso' } @{ (eval { YAML::XS::LoadFile($ENV{PURSER_CTL_CONFIG}) } // {})->{contexts} // [] };
ok($ctx->{token}, 'the context holds the session token');
like($ctx->{expires} // '', qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, '  and its end');
($code, $out, $err) = run('--context', 'sso', 'get', 'permissions', '-o', 'json');
is($code, 0, 'the session works') or diag($err);
like($out, qr/"principal"\s*:\s*"frank"/, '  as frank');

# an ended session: purserctl says so before asking
my $yaml = slurp($ENV{PURSER_CTL_CONFIG});
(my $ended = $yaml) =~ s/(expires: )'?\d{4}-[^'\n]*'?/${1}2001-01-01T00:00:00Z/;
open $fh, '>', $ENV{PURSER_CTL_CONFIG} or die; print $fh $ended; close $fh;
($code, $out, $err) = run('--context', 'sso', 'get', 'permissions');
is($code, 5, 'an ended session is refused by purserctl (exit 5)');
like($err, qr/session of context sso ended at 2001-01-01T00:00:00Z: sign in again \(purserctl login --sso\)/, '  saying when and what to do');
open $fh, '>', $ENV{PURSER_CTL_CONFIG} or die; print $fh $yaml; close $fh;

# logout ends it on the server
my $token = $ctx->{token};
($code, $out, $err) = run('--context', 'sso', 'logout');
is($code, 0, 'purserctl logout') or diag($err);
$s->wait_auth_cache;
($r) = $s->call('GET', "/organizations/$org/permissions", undef, authorization => "Bearer $token");
is($r->{status}, 401, 'the session is refused on the server after logout');

# ---- the device authorization grant ----
$pid = spawn('login', '--url', $url, '--ca', $s->env('PURSER_CA'), '--org', $org, '--sso', 'corp', '--device', '--name', 'device');
my $complete = wait_for_text("$tmp/err", qr{\(or open (http://\S+?)\)});
ok($complete, 'purserctl --device prints the address and code to enter elsewhere') or diag(slurp("$tmp/err"));
like(slurp("$tmp/err"), qr/enter the code [A-Z-]+/, '  the user code');
# the provider asks for slower polls (RFC 8628 3.5): purserctl adds 5 s to its interval
$idp->control('fault', { kind => 'slow_down' });
ok(wait_for_text("$tmp/err", qr/(polled less often: every 10 s)/), 'on slow_down purserctl polls 5 s less often (every 10 s)')
    or diag(slurp("$tmp/err"));
my (undef, $page) = $idp->login($complete // 'http://127.0.0.1:1/', 'grace', 'grace-pw', 'never');
like($page // '', qr/Sign-in Success|success/i, 'the person signs in at the provider on "another machine"');
is(finish($pid), 0, 'purserctl login --sso --device ends well once polled') or diag(slurp("$tmp/err"));
like(slurp("$tmp/out"), qr/logged in to \S+ as grace/, '  as grace');
($code, $out, $err) = run('--context', 'device', 'get', 'permissions', '-o', 'json');
like($out, qr/"principal"\s*:\s*"grace"/, 'the device session works');
unlike(slurp("$tmp/err") . slurp($ENV{PURSER_CTL_CONFIG}), qr/ctl-secret-4014/, 'the client secret never reached purserctl');

# a device_id that is no sign-in under way
($r) = $s->call('POST', '/auth/sso/device/token', { device_id => 'x' x 43 }, authorization => '');
is($r->{status}, 401, 'polling a device sign-in that does not exist is refused');

$s->stop;
done_testing;

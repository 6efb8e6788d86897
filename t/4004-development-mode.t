# 4004: development mode (auth.development_mode: true): an unauthenticated request from
# loopback acts as a server admin, as Deckhand's development mode does; credentials that are
# given are still checked. Off by default.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

my $dev = PurserStack->new(development => 1);
my ($r, $j) = $dev->api('GET', '/organizations', undef, '');
is $r->{status}, 200, 'development mode: no credentials, and the request is answered';
ok exists $j->{$dev->env('PURSER_ORG')}, 'as a server admin (every organization listed)';
($r) = $dev->api('POST', '/organizations', { name => 'devorg' }, '');
is $r->{status}, 201, 'even a server-admin action';
($r) = $dev->api('GET', '/organizations', undef, 'purser_wrong');
is $r->{status}, 401, 'a wrong token is still refused';
ok scalar(grep { /"principal":"development"/ } $dev->log_lines('purser-fcgi.log')), 'the log names the development principal';
$dev->stop;

my $normal = PurserStack->new;
($r) = $normal->api('GET', '/organizations', undef, '');
is $r->{status}, 401, 'without development mode the same request is 401';

# A TCP FastCGI socket (not loopback-only by construction) is refused in development mode.
my $cfg = $normal->dir . '/tcp-dev.yaml';
{ open my $fh, '>', $cfg or die; print $fh "fcgi:\n  socket: \"127.0.0.1:9\"\nauth:\n  development_mode: true\nrbac:\n  policy_file: " . PurserStack::root() . "/policies/default.yaml\n"; }
my $out = `'@{[PurserStack::build()]}/purser-fcgi' -c '$cfg' 2>&1`;
isnt $?, 0, 'purser-fcgi refuses development mode on a TCP socket';
like $out, qr/development_mode/, 'and says why';

PurserStack::finish();

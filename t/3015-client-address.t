#!/usr/bin/perl
# 3015: who asked, from where. purser's request log names the client's address ("remote");
# behind a proxy of one's own (PURSER_TRUSTED_PROXIES, nginx's real_ip: tools/hosts' front),
# that address is the client's from the proxy's X-Forwarded-For, for the log and for the
# /install/ rate limit (each client its own bucket, not every client the proxy's); from anyone
# else X-Forwarded-For is not believed.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

# The request log's line for the request with this X-Request-Id (purser answers it), decoded.
sub logged {
    my ($stack, $res) = @_;
    my $id = $res->{headers}{'x-request-id'} // return undef;
    for (reverse $stack->log_lines('purser-fcgi.log')) {
        next unless /"request_id":"\Q$id\E"/;
        return eval { decode_json($_) };
    }
    return undef;
}

# Redeems of an unknown bootstrap token from one client address (X-Forwarded-For), n times:
# how many the rate limit refused (429).
sub refused {
    my ($stack, $client, $n) = @_;
    my $count = 0;
    for (1 .. $n) {
        my $res = $stack->request('GET', '/install/bootstrap.json?token=' . ('0' x 64),
                                  { headers => { 'X-Forwarded-For' => $client } });
        $count++ if $res->{status} == 429;
    }
    return $count;
}

# ---- behind a trusted proxy (here: the test itself, on loopback) ----
my $behind = PurserStack->new(trusted_proxies => '127.0.0.1');
my $res = $behind->request('GET', '/healthz', { headers => { 'X-Forwarded-For' => '203.0.113.7' } });
is $res->{status}, 200, 'behind a trusted proxy: a request with X-Forwarded-For';
is((logged($behind, $res) // {})->{remote}, '203.0.113.7', '  the request log names the client it forwarded for');
$res = $behind->request('GET', '/healthz', { headers => { 'X-Forwarded-For' => '198.51.100.1, 203.0.113.8' } });
is((logged($behind, $res) // {})->{remote}, '203.0.113.8',
   '  of a chain, the address the proxy added (what the client put before it is not believed)');
$res = $behind->request('GET', '/healthz');
is((logged($behind, $res) // {})->{remote}, '127.0.0.1', '  without the header: the proxy\'s own');
cmp_ok refused($behind, '203.0.113.20', 80), '>', 0, 'a burst of 80 redeems from one client meets the /install/ rate limit';
is refused($behind, '203.0.113.21', 10), 0, '  while another client behind the same proxy is not refused';
my ($access) = grep { /^203\.0\.113\.21 / } $behind->log_lines('nginx-access.log');
ok $access, "  nginx's log names the client too";
$res = $behind->request('GET', '/metrics', { headers => { 'X-Forwarded-For' => '203.0.113.9' } });
is $res->{status}, 401, '  and a forwarded client is not loopback: /metrics asks it for credentials';
$behind->stop;

# ---- trusting no proxy (the default) ----
my $s = PurserStack->new;
$res = $s->request('GET', '/healthz', { headers => { 'X-Forwarded-For' => '203.0.113.7' } });
is((logged($s, $res) // {})->{remote}, '127.0.0.1', 'trusting no proxy: X-Forwarded-For is ignored, the log names the peer');
cmp_ok refused($s, '203.0.113.30', 80), '>', 0, '  a burst of 80 redeems meets the rate limit';
cmp_ok refused($s, '203.0.113.31', 10), '>', 0, '  and another X-Forwarded-For does not escape it (the same bucket)';
$res = $s->request('GET', '/metrics', { headers => { 'X-Forwarded-For' => '203.0.113.9' } });
is $res->{status}, 200, '  /metrics stays open to the loopback peer whatever it claims';

PurserStack::finish();

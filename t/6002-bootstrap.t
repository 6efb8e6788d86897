#!/usr/bin/perl
# 6002: bootstrap tokens and dynamic facts (issue 12 items 3 and 4): a token redeems once (of
# 16 concurrent redeems exactly one wins), its errors (400 missing or malformed, 401 unknown,
# 401 used or expired), expiry after inventory.bootstrap_ttl, reset (the old one stops), the
# install manifest's credential (bearer and Chef-signed) writing its own cluster's facts and
# refused on another's, the facts history's order and bound (inventory.facts_versions), and
# nginx's rate limit on /install/ in purser's error form.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org/clusters";
my $json = JSON::PP->new->canonical;

sub call { $s->call(@_) }
sub err { PurserStack::error_message(@_) }
sub redeem { my ($token) = @_; call('GET', '/install/bootstrap.json' . (defined $token ? "?token=$token" : ''), undef, authorization => '') }
sub set_config {
    my ($section, $key, $value) = @_;
    my $conf = do { open my $fh, '<', $s->dir . '/purser.yaml' or die; local $/; <$fh> };
    $conf .= "$section:\n" unless $conf =~ /^$section:\n/m;
    $conf =~ s/^$section:\n/$section:\n  $key: $value\n/m;
    { open my $fh, '>', $s->dir . '/purser.yaml' or die; print $fh $conf; }
    my @old = $s->worker_pids;
    kill 'HUP', $s->master_pid;
    PurserStack::wait_for(10, sub { my @p = $s->worker_pids; (@p == 2 && !grep { my $o = $_; grep { $_ == $o } @p } @old) ? 1 : undef });
}

# ---- errors ----
my ($r, $d) = redeem(undef);
is $r->{status}, 400, 'no token: 400';
like err($d), qr/token/, '  naming it';
($r, $d) = redeem('xyz');
is $r->{status}, 400, 'a malformed token: 400';
($r, $d) = redeem('0' x 64);
is $r->{status}, 401, 'an unknown token: 401';
is err($d), 'invalid token', '  "invalid token"';

# ---- the race: 16 concurrent redeems, one winner ----
($r, $d) = call('POST', $base, { metadata => { name => 'race' } });
is $r->{status}, 201, 'a cluster to race for';
my $token = $d->{bootstrap_token}{token};
my @kids;
for my $i (1 .. 16) {
    pipe(my $rd, my $wr) or die;
    my $pid = fork // die;
    if (!$pid) {
        close $rd;
        my ($res, $data) = redeem($token);
        print $wr "$res->{status} " . (err($data) || ($data->{cluster} // '')) . "\n";
        close $wr;
        POSIX::_exit(0);
    }
    close $wr;
    push @kids, [$pid, $rd];
}
my @answers;
for my $k (@kids) { my $fh = $k->[1]; my $line = <$fh>; chomp $line; push @answers, $line; waitpid $k->[0], 0 }
my @won = grep { /^200 c-race$/ } @answers;
my @lost = grep { /^401 token already used or expired$/ } @answers;
is scalar(@won), 1, 'of 16 concurrent redeems exactly one wins' or diag join("\n", @answers);
is scalar(@lost), 15, '  and 15 get 401 "token already used or expired"';
is $s->sql("SELECT COUNT(*) FROM principals WHERE name = 'c-race'") + 0, 1, '  one client for the cluster';
is $s->sql("SELECT COUNT(*) FROM api_tokens t JOIN principals p ON p.id = t.principal_id WHERE p.name = 'c-race'") + 0, 1, '  with one token';

# ---- the manifest and its credential ----
($r, $d) = call('POST', $base, { metadata => { name => 'own' } });
my $own_token = $d->{bootstrap_token}{token};
call('POST', $base, { metadata => { name => 'other' } });
($r, my $m) = redeem($own_token);
is $r->{status}, 200, 'redeem: 200';
is $m->{cluster}, 'c-own', '  the manifest names the cluster';
is $m->{organization}, $org, '  and the organization';
like $m->{api_url}, qr{^https://127\.0\.0\.1:\d+$}, '  and the API URL';
like $m->{client}{private_key}, qr/BEGIN (RSA )?PRIVATE KEY/, '  a private key for Chef signing';
like $m->{token}, qr/^purser_/, '  and a bearer token';
is $r->{headers}{'cache-control'}, 'no-store', '  not to be cached';
($r, $d) = redeem($own_token);
is $r->{status}, 401, 'redeeming it again: 401';
is err($d), 'token already used or expired', '  "token already used or expired"';
($r, $d) = call('GET', "$base/c-own");
is $d->{status}{client}, 'c-own', 'the cluster names its client';
ok $d->{status}{bootstrap_token}{redeemed_at}, '  and when its token was redeemed';

my %as_cluster = (authorization => "Bearer $m->{token}");
($r, $d) = call('PUT', "$base/c-own/facts", { kubernetes => { version => '1.31' }, nodes => 3 }, %as_cluster);
is $r->{status}, 200, 'the credential writes its own facts';
is_deeply $d->{status}{dynamic_facts}, { kubernetes => { version => '1.31' }, nodes => 3 }, '  as status.dynamic_facts (any JSON)';
($r, $d) = call('PUT', "$base/c-other/facts", { nodes => 1 }, %as_cluster);
is $r->{status}, 403, "and gets 403 on another cluster's facts";
like err($d), qr/write_cluster_facts/, '  naming the action';
($r, $d) = call('GET', "$base/c-other", undef, %as_cluster);
is $r->{status}, 403, 'and on reading another cluster';
($r, $d) = call('GET', "$base/c-own", undef, %as_cluster);
is $r->{status}, 200, 'it reads its own';
($r, $d) = call('GET', $base, undef, %as_cluster);
is_deeply [ map { $_->{metadata}{name} } @{ $d->{items} } ], ['c-own'], 'its list holds only its own cluster';
($r) = call('PUT', "$base/c-own", { spec => {} }, %as_cluster, 'if-match' => '*');
is $r->{status}, 403, 'it may not change its spec';
($r) = call('POST', "/organizations/$org/clusters/c-own/bootstrap-token", undef, %as_cluster);
is $r->{status}, 403, 'nor reset its token';
($r) = call('GET', "/organizations/$org/policies", undef, %as_cluster);
is $r->{status}, 200, 'it reads the policies';
($r) = call('GET', "/organizations/$org/api/v1.0/revisions", undef, %as_cluster);
is $r->{status}, 200, 'and the documents';
{
    my $keyfile = $s->dir . '/cluster.pem';
    open my $fh, '>', $keyfile or die;
    print $fh $m->{client}{private_key};
    close $fh;
    my $c = $s->chef(user => 'c-own', key => $keyfile, method => 'GET', path => "/organizations/$org/policies");
    is $c->{status}, 200, 'the key signs Chef requests as the cluster\'s client';
}

# ---- reset ----
($r, $d) = call('POST', $base, { metadata => { name => 'reset' } });
my $first = $d->{bootstrap_token}{token};
($r, $d) = call('POST', "$base/c-reset/bootstrap-token");
is $r->{status}, 201, 'reset: 201';
my $second = $d->{bootstrap_token}{token};
like $second, qr/^[0-9a-f]{64}$/, '  a new token, shown once';
is $d->{metadata}{name}, 'c-reset', '  in the shape a creation answers: the cluster';
is $d->{status}{bootstrap_token}{expires_at}, $d->{bootstrap_token}{expires_at},
    '  whose status has the new expiry';
isnt $second, $first, '  not the old one';
($r, $d) = redeem($first);
is $r->{status}, 401, 'the old token stops working';
($r, $d) = redeem($second);
is $r->{status}, 200, 'the new one works';
($r, $d) = call('POST', "$base/c-nothing/bootstrap-token");
is $r->{status}, 404, 'reset of an unknown cluster: 404';

# ---- facts history ----
for my $i (1 .. 7) {
    ($r) = call('PUT', "$base/c-own/facts", { i => $i }, %as_cluster);
    die "facts $i: $r->{status}" unless $r->{status} == 200;
}
($r, $d) = call('GET', "$base/c-own/facts/history?page_size=3", undef, %as_cluster);
is_deeply [ map { $_->{facts}{i} } @{ $d->{items} } ], [7, 6, 5], 'history: newest first, paged';
is $d->{items}[0]{author}, 'c-own', '  with the author';
($r, $d) = call('GET', "$base/c-own/facts/history?page_size=3&page_token=$d->{next_page_token}", undef, %as_cluster);
is_deeply [ map { $_->{facts}{i} } @{ $d->{items} } ], [4, 3, 2], '  the next page';
set_config('inventory', 'facts_versions', 4);
($r) = call('PUT', "$base/c-own/facts", { i => 8 }, %as_cluster);
($r, $d) = call('GET', "$base/c-own/facts/history?page_size=100");
is_deeply [ map { $_->{facts}{i} } @{ $d->{items} } ], [8, 7, 6, 5], 'inventory.facts_versions bounds what is kept';
is $d->{next_page_token}, '', '  the last page says so';

# ---- the CA certificate in the manifest, when inventory.ca_file names one ----
is $m->{ca_certificate}, undef, 'without inventory.ca_file the manifest has no CA certificate';
set_config('inventory', 'ca_file', $s->env('PURSER_CA'));
($r, $d) = call('POST', $base, { metadata => { name => 'with-ca' } });
($r, $d) = redeem($d->{bootstrap_token}{token});
my $ca = do { open my $fh, '<', $s->env('PURSER_CA') or die; local $/; <$fh> };
is $d->{ca_certificate}, $ca, 'with it, the manifest carries that certificate';

# ---- expiry ----
set_config('inventory', 'bootstrap_ttl', 1);
($r, $d) = call('POST', $base, { metadata => { name => 'late' } });
sleep 2; # time itself: inventory.bootstrap_ttl passes
($r, $d) = redeem($d->{bootstrap_token}{token});
is $r->{status}, 401, 'a token past inventory.bootstrap_ttl: 401';
is err($d), 'token already used or expired', '  "token already used or expired"';

# ---- rate limit ----
my %seen;
for (1 .. 80) { my ($res, $data) = redeem('0' x 64); $seen{$res->{status}}++; $seen{json429}++ if $res->{status} == 429 && ($data->{error}{code} // '') eq 'limit_exceeded' }
ok $seen{429}, "a burst of 80 redeems from one address meets the rate limit (429 x " . ($seen{429} // 0) . ')';
is $seen{json429}, $seen{429}, '  in purser\'s error form';

ok !grep({ /$own_token|$second/ } $s->log_lines('purser-fcgi.log')), 'no token appears in purser\'s log';
ok scalar(grep { m{/install/bootstrap\.json} } $s->log_lines('nginx-access.log')), 'nginx logs the redeems';
my @leaks = grep { /$own_token|$second|[?&]token=/ } $s->log_lines('nginx-access.log');
ok !@leaks, '  without their tokens' or diag "@leaks[0 .. 2]";

PurserStack::finish();

#!/usr/bin/perl
# 6016: expiry acts on its own (issue 53 item 5). With expiry.interval 1 and nothing read, an
# expired user, client, token and cluster (with what it owns) are deleted in the background,
# each with its delete event {reason: expired} by actor purser, and an expired bootstrap token
# an interval after its expiry; a second purser-fcgi on the same database does not sweep too
# (one lease holder at a time, its delete events once each).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Time::HiRes qw(time sleep);
use POSIX qw(strftime);
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');

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
sub iso_utc { strftime('%Y-%m-%dT%H:%M:%SZ', gmtime $_[0]) }
sub count { my ($sql) = @_; my $n = $s->sql($sql); chomp $n; return $n + 0 }
sub expired_events {
    my ($kind, $name) = @_;
    return count("SELECT COUNT(*) FROM events e JOIN organizations o ON o.id = e.org_id WHERE o.name = '$org'"
        . " AND e.kind = '$kind' AND e.name = '$name' AND e.op = 'delete' AND e.actor = 'purser'"
        . " AND JSON_VALUE(e.detail, '\$.reason') = 'expired'");
}

set_config('expiry', 'interval', 1);
set_config('inventory', 'bootstrap_ttl', 3);

# ---- things that expire 6 s after each is made (time for the set-up on a loaded machine: each
# counts from its own request), never read after ----
sub at { iso_utc(time + 6) }
$s->must('user', 'POST', '/users', { username => 'brief-user', email => 'b@example.com', expires => at() });
$s->must('member', 'POST', "/organizations/$org/users", { username => 'brief-user', roles => ['reader'] });
$s->must('client', 'POST', "/organizations/$org/clients", { name => 'brief-client', expires => at() });
my $token = $s->must('token', 'POST', '/users/admin/tokens', { description => 'brief', expires_in => 6 });
my $cluster = $s->must('cluster', 'POST', "/organizations/$org/clusters", { metadata => { name => 'brief', expires => at() } });
my $lasting = $s->must('cluster', 'POST', "/organizations/$org/clusters", { metadata => { name => 'lasting' } });
my $c_id = $cluster->{metadata}{name};
is count("SELECT COUNT(*) FROM resources WHERE kind = 'cluster' AND name = '$c_id'"), 1, 'a cluster that expires in 6 s is stored';
is count("SELECT COUNT(*) FROM bootstrap_tokens"), 2, '  both clusters\' bootstrap tokens too (3 s)';

my $gone = PurserStack::wait_for(12, sub {
    count("SELECT (SELECT COUNT(*) FROM principals WHERE name IN ('brief-user', 'brief-client'))"
        . " + (SELECT COUNT(*) FROM api_tokens WHERE id = '$token->{id}')"
        . " + (SELECT COUNT(*) FROM resources WHERE name = '$c_id')"
        . " + (SELECT COUNT(*) FROM bootstrap_tokens)") == 0 ? 1 : undef });
ok $gone, 'with nothing read, the expired user, client, token, cluster and bootstrap tokens are deleted within 12 s';
is count("SELECT COUNT(*) FROM resources WHERE name = '$lasting->{metadata}{name}'"), 1, '  a cluster without expires stays';
is expired_events('user', 'brief-user'), 1, '  the user\'s delete event {reason: expired}, by purser, once';
is expired_events('client', 'brief-client'), 1, '  the client\'s';
is expired_events('cluster', $c_id), 1, '  the cluster\'s';
my ($r, $d) = $s->call('GET', "/organizations/$org/clusters/$c_id");
is $r->{status}, 404, '  and the cluster answers 404';

# ---- sign-ins begun and never finished, handoff codes never traded ----
$s->must('identity provider', 'POST', '/identity-providers', { metadata => { name => 'corp' }, spec => {
    issuer => 'https://idp.example.test', client_id => 'purser', client_secret => 'not-used-6016',
    mappings => [] } });
my $pid = count("SELECT id FROM identity_providers WHERE name = 'corp'");
my $uid = count("SELECT id FROM principals WHERE name = 'admin' AND kind = 'user'");
for my $when (['old', '- INTERVAL 1 MINUTE'], ['new', '+ INTERVAL 1 HOUR']) {
    $s->sql("INSERT INTO oidc_logins (state_sha256, provider_id, nonce, code_verifier, return_to,"
        . " handoff_challenge, expires_at) VALUES (SHA2('state-$when->[0]', 256), $pid, 'n', 'v', '', '',"
        . " UTC_TIMESTAMP(6) $when->[1])");
    $s->sql("INSERT INTO oidc_handoffs (code_sha256, provider_id, principal_id, challenge, expires_at)"
        . " VALUES (SHA2('code-$when->[0]', 256), $pid, $uid, '', UTC_TIMESTAMP(6) $when->[1])");
}
sub unfinished { count("SELECT (SELECT COUNT(*) FROM oidc_logins WHERE state_sha256 = SHA2('state-$_[0]', 256))"
    . " + (SELECT COUNT(*) FROM oidc_handoffs WHERE code_sha256 = SHA2('code-$_[0]', 256))") }
is unfinished('old'), 2, 'an expired sign-in under way and an expired handoff code are stored';
ok PurserStack::wait_for(5, sub { unfinished('old') == 0 ? 1 : undef }),
    '  and swept within 5 s, never read';
is unfinished('new'), 2, '  those not expired stay';

# ---- a second purser-fcgi on the same database: one sweeper at a time ----
my $conf = do { open my $fh, '<', $s->dir . '/purser.yaml' or die; local $/; <$fh> };
$conf =~ s{(socket: \S*)purser-fcgi\.sock}{${1}second.sock} or die 'no fcgi.socket in purser.yaml';
{ open my $fh, '>', $s->dir . '/second.yaml' or die; print $fh $conf; }
my $second = fork // die;
if (!$second) {
    open STDOUT, '>>', $s->dir . '/log/second.log'; open STDERR, '>&', \*STDOUT;
    exec(PurserStack::build() . '/purser-fcgi', '-c', $s->dir . '/second.yaml') or POSIX::_exit(1);
}
my @made;
for my $i (1 .. 6) { # a client that expires every half second
    push @made, "swept-$i";
    $s->must("client $i", 'POST', "/organizations/$org/clients", { name => "swept-$i", expires => iso_utc(time + 1 + $i / 2) });
}
my %holders;
for (1 .. 30) { # 6 s: four workers of two masters each look every second
    my $h = $s->sql("SELECT value FROM settings WHERE name = 'lease:expiry'"); chomp $h;
    $holders{$h}++ if $h;
    sleep 0.2;
}
my @second_workers = PurserStack::children_of($second);
is scalar(@second_workers), 2, 'a second purser-fcgi with its two workers ran on the same database';
is scalar(keys %holders), 1, '  and one worker of the four held the expiry lease throughout (' . join(', ', keys %holders) . ')';
is count("SELECT COUNT(*) FROM principals WHERE name LIKE 'swept-%'"), 0, '  the six clients expiring meanwhile are deleted';
is((grep { expired_events('client', $_) == 1 } @made), 6, '  each with one delete event');
kill 'TERM', $second;
waitpid $second, 0;

PurserStack::finish();

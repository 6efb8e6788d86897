#!/usr/bin/perl
# 6009: deleting a cluster ends its access (issue 32 item 1). The credential its bootstrap
# token made (the client, its key and its bearer token) goes in the same transaction, the event
# feed records the cluster's, the client's and the token's deletion, an unredeemed bootstrap
# token dies with its cluster, and every worker refuses the credential at once: the stack runs
# with cache.auth_ttl 300, so a worker that kept the credential cached would still answer 200.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use Time::HiRes ();
use PurserStack;

my $s = PurserStack->new(workers => 2, auth_ttl => 300);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org/clusters";

sub call { $s->call(@_) }
sub err { PurserStack::error_message(@_) }
sub redeem { call('GET', "/install/bootstrap.json?token=$_[0]", undef, authorization => '') }

# The routes the issue found still open to a deleted cluster's credential.
my @reads = ($base, "/organizations/$org/policies", '/api/v1.0/revisions');

my ($r, $d) = call('POST', $base, { metadata => { name => 'ghost' } });
is $r->{status}, 201, 'a cluster';
($r, my $m) = redeem($d->{bootstrap_token}{token});
is $r->{status}, 200, 'its bootstrap token redeemed';
my %bearer = (authorization => "Bearer $m->{token}");
my $keyfile = $s->dir . '/ghost.pem';
{ open my $fh, '>', $keyfile or die; print $fh $m->{client}{private_key}; }
sub signed { $s->chef(user => 'c-ghost', key => $keyfile, path => $_[0])->{status} }

# Requests sent at the same time, so that both workers serve some: the statuses, in order.
sub burst {
    my ($n, @call) = @_;
    my @kids;
    for (1 .. $n) {
        pipe(my $rd, my $wr) or die "pipe: $!";
        my $pid = fork // die "fork: $!";
        if (!$pid) {
            close $rd;
            my ($res) = call(@call);
            print $wr $res->{status};
            close $wr;
            POSIX::_exit(0);
        }
        close $wr;
        push @kids, [$pid, $rd];
    }
    return map { my ($pid, $rd) = @$_; my $st = <$rd>; waitpid $pid, 0; $st // 0 } @kids;
}
# The worker pids that answered the cluster's credential, from purser's log.
sub served_by {
    my %pids = map { /"pid":(\d+)/ ? ($1 => 1) : () }
        grep { /"principal":"c-ghost"/ } $s->log_lines('purser-fcgi.log');
    return scalar keys %pids;
}
use POSIX ();

# Both workers serve the credential (and cache it) before the delete.
my %before;
for (1 .. 20) {
    $before{$_}++ for burst(4, 'GET', $reads[$_ % @reads], undef, %bearer);
    last if served_by() >= 2;
}
is_deeply [ keys %before ], [200], 'the manifest\'s bearer token reads';
is served_by(), 2, '  on both workers, which now hold it in their caches';
is signed("/organizations/$org/policies"), 200, 'and its key signs Chef requests';
($r, $d) = call('GET', "/organizations/$org/clients");
ok exists $d->{'c-ghost'}, 'the cluster\'s client is listed';
my (undef, $feed) = call('GET', "/organizations/$org/events?since=0&page_size=1000");
my $seq = $feed->{next};
my $token_id = $s->sql("SELECT t.id FROM api_tokens t JOIN principals p ON p.id = t.principal_id"
                       . " WHERE p.name = 'c-ghost' AND p.kind = 'client'");
chomp $token_id;
ok $token_id, 'the client holds a token';

($r) = call('DELETE', "$base/c-ghost");
is $r->{status}, 204, 'the cluster is deleted';

# At once, on every worker: no waiting for cache.auth_ttl.
my $lines = () = $s->log_lines('purser-fcgi.log');
sub since_line { my @l = $s->log_lines('purser-fcgi.log'); @l[$_[0] .. $#l] }
my (%after, %refused_by);
for my $round (1 .. 10) { # bursts of requests at once until both workers have answered
    $after{$_}++ for map { burst(4, 'GET', $_, undef, %bearer) } @reads;
    %refused_by = map { /"pid":(\d+)/ ? ($1 => 1) : () } grep { /"status":401/ } since_line($lines);
    last if keys %refused_by >= 2;
}
is_deeply [ keys %after ], [401], 'its bearer token is refused at once (bursts of requests at once)'
    or diag explain \%after;
is scalar(keys %refused_by), 2, '  by both workers';
($r, $d) = call('GET', $reads[0], undef, %bearer);
is err($d), 'invalid token', '  as an invalid token';
is signed("/organizations/$org/policies"), 401, 'and its key signs nothing';
is signed('/organizations'), 401, '  on any route';

($r, $d) = call('GET', "/organizations/$org/clients");
ok !exists $d->{'c-ghost'}, 'the client is no longer listed';
($r) = call('GET', "/organizations/$org/clients/c-ghost");
is $r->{status}, 404, '  nor found';
is $s->sql("SELECT COUNT(*) FROM principals WHERE name = 'c-ghost'") + 0, 0, 'no principal remains';
is $s->sql("SELECT COUNT(*) FROM api_tokens WHERE id = '$token_id'") + 0, 0, 'nor its token';
is $s->sql("SELECT COUNT(*) FROM memberships m LEFT JOIN principals p ON p.id = m.principal_id"
           . " WHERE p.id IS NULL") + 0, 0, 'nor a membership';

($r, $d) = call('GET', "/organizations/$org/events?since=$seq");
my @seen = map { "$_->{kind}/$_->{name}/$_->{op}" } @{ $d->{events} };
is_deeply [ sort @seen ], [ sort('cluster/c-ghost/delete', 'client/c-ghost/delete', "token/$token_id/delete") ],
    'the event feed records the cluster\'s, the client\'s and the token\'s deletion'
    or diag explain \@seen;
is scalar(@{ $d->{events} }), 3, '  and nothing else';

# ---- an unredeemed bootstrap token dies with its cluster ----
($r, $d) = call('POST', $base, { metadata => { name => 'unborn' } });
my $unborn = $d->{bootstrap_token}{token};
($r) = call('DELETE', "$base/c-unborn");
is $r->{status}, 204, 'a cluster whose token was never redeemed is deleted';
($r, $d) = redeem($unborn);
is $r->{status}, 401, '  and its bootstrap token is refused';
is err($d), 'invalid token', '  as unknown';
is $s->sql("SELECT COUNT(*) FROM principals WHERE name = 'c-unborn'") + 0, 0, '  and no client was made';

# ---- a cluster made again under the same name starts with nothing ----
($r, $d) = call('POST', $base, { metadata => { name => 'ghost' } });
is $r->{status}, 201, 'a new cluster of the deleted one\'s name';
($r) = call('GET', $reads[0], undef, %bearer);
is $r->{status}, 401, '  does not revive the old credential';
($r, my $m2) = redeem($d->{bootstrap_token}{token});
($r) = call('GET', "$base/c-ghost", undef, authorization => "Bearer $m2->{token}");
is $r->{status}, 200, '  its own new credential works';

# ---- a cluster does not take over a client of its name that it did not make ----
($r) = call('POST', "/organizations/$org/clients", { name => 'c-taken' });
is $r->{status}, 201, 'a client c-taken, made apart from any cluster';
($r, $d) = call('POST', $base, { metadata => { name => 'taken' } });
($r, $d) = redeem($d->{bootstrap_token}{token});
is $r->{status}, 409, 'a cluster of that name redeeming its token: 409';
like err($d), qr/a client named 'c-taken' exists and is not this one's credential/, '  saying why';
($r) = call('DELETE', "$base/c-taken");
is $r->{status}, 204, 'deleting that cluster';
($r) = call('GET', "/organizations/$org/clients/c-taken");
is $r->{status}, 200, '  leaves the client it never made';

# ---- a conditional delete that fails leaves the credential ----
($r) = call('DELETE', "$base/c-ghost", undef, 'if-match' => '"0000000000000000"');
is $r->{status}, 412, 'a delete with a stale If-Match: 412';
($r) = call('GET', "$base/c-ghost", undef, authorization => "Bearer $m2->{token}");
is $r->{status}, 200, '  and the credential still works';

# ---- a cluster that expires takes its credential with it, whether or not anything reads it ----
{
    use POSIX qw(strftime);
    my $at = sub { strftime('%Y-%m-%dT%H:%M:%SZ', gmtime(time + $_[0])) };
    ($r, $d) = call('POST', $base, { metadata => { name => 'brief', expires => $at->(3600) } });
    is $r->{status}, 201, 'a cluster that expires in an hour';
    ($r, my $mb) = redeem($d->{bootstrap_token}{token});
    is $r->{status}, 200, '  its token redeemed';
    my %brief = (authorization => "Bearer $mb->{token}");
    ($r) = call('GET', "$base/c-brief", undef, %brief);
    is $r->{status}, 200, '  its credential works';
    ($r, $d) = call('GET', "$base/c-brief"); # the redemption wrote its status: a new revision
    my $brief_ends = time + 3; # (whole seconds: the expiry is this second)
    ($r, $d) = call('PATCH', "$base/c-brief", { metadata => { expires => strftime("%Y-%m-%dT%H:%M:%SZ", gmtime($brief_ends)), revision => $d->{metadata}{revision} } },
                    'content-type' => 'application/merge-patch+json');
    is $r->{status}, 200, 'its expiry brought to 3 seconds from now' or diag explain $d;
    ($r) = call('GET', "/organizations/$org/clients/c-brief");
    is $r->{status}, 200, '  its client is still there meanwhile';
    # time itself: the cluster's expiry (3 s, to the second) passes, and the second after it
    Time::HiRes::sleep(0.05) while Time::HiRes::time() < $brief_ends + 1.2;
    my $token_now = (call('GET', "/organizations/$org/policies", undef, %brief))[0]{status};
    is $token_now, 401, 'after the cluster expired, nothing having read it, its bearer token is refused';
    my $kf = $s->dir . '/brief.pem';
    { open my $fh, '>', $kf or die; print $fh $mb->{client}{private_key}; }
    is $s->chef(user => 'c-brief', key => $kf, path => "/organizations/$org/policies")->{status}, 401,
        '  and so is its Chef key';
}

PurserStack::finish();

#!/usr/bin/perl
# 6003: keyset pages under churn (issue 12 item 7): 2,500 clusters walked page by page (by
# name, by created_at, and by a label selector) while another client inserts clusters between
# them and deletes some. No cluster appears twice, and every cluster that existed before the
# walk and was not deleted during it appears.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;
use Time::HiRes ();
use POSIX ();

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org/clusters";
my $auth = { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN'), accept => 'application/json' };

# 2,500 clusters written straight into the store (the test is about reading them): p0001 to
# p2500, created one millisecond apart, env=prod on the even ones.
my $oid = $s->sql("SELECT id FROM organizations WHERE name = '$org'");
chomp $oid;
$s->sql("INSERT INTO resources (org_id, kind, name, revision, title, labels, annotations, description, spec, created_at, updated_at) "
    . "SELECT $oid, 'cluster', CONCAT('c-p', LPAD(seq, 4, '0')), LPAD(HEX(seq), 16, '0'), '', "
    . "CONCAT('{\"env\":\"', IF(seq % 2 = 0, 'prod', 'dev'), '\"}'), '{}', '', '{}', "
    . "TIMESTAMP('2026-01-01') + INTERVAL seq * 1000 MICROSECOND, NOW(6) FROM seq_1_to_2500");
$s->sql("INSERT INTO resource_labels (resource_id, org_id, kind, name, lkey, lvalue) "
    . "SELECT id, org_id, kind, name, 'env', JSON_VALUE(labels, '\$.env') FROM resources WHERE kind = 'cluster'");
my %initial = map { (sprintf('c-p%04d', $_) => 1) } 1 .. 2500;

sub walk {
    my ($query) = @_;
    my (@names, $token);
    my $pages = 0;
    do {
        my $res = $s->request('GET', "$base?page_size=100$query" . (defined $token && length $token ? "&page_token=$token" : ''), { headers => $auth });
        die "list: $res->{status} $res->{content}" unless $res->{status} == 200;
        my $d = JSON::PP->new->decode($res->{content});
        push @names, map { $_->{metadata}{name} } @{ $d->{items} };
        $token = $d->{next_page_token};
        $pages++;
        select undef, undef, undef, 0.05; # give the other client time to change things
    } while (length $token && $pages < 200);
    return @names;
}

for my $case (['by name', ''], ['by created_at', '&sort=created_at'], ['by -name', '&sort=-name'],
              ['by the selector env=prod', '&labels=env%3Dprod']) {
    my ($what, $query) = @$case;
    my $deleted_file = $s->dir . '/deleted';
    unlink $deleted_file;
    my $pid = fork // die;
    if (!$pid) { # the other client: insert between existing names, delete some initial ones
        srand($$ ^ time); # (each child its own victims: a forked child repeats the parent's sequence)
        my $http = HTTP::Tiny->new(verify_SSL => 1, SSL_options => { SSL_ca_file => $s->env('PURSER_CA') }, keep_alive => 1);
        open my $log, '>>', $deleted_file or die;
        $log->autoflush(1);
        my $stop = time + 60;
        my $n = 0;
        while (time < $stop && !-e $s->dir . '/stop') {
            $n++;
            my $near = 1 + int(rand 2500);
            my $new = sprintf('p%04da%d', $near, $n);
            $http->request('POST', $s->url . $base, { headers => { %$auth, 'content-type' => 'application/json' },
                content => JSON::PP->new->encode({ metadata => { name => $new, labels => { env => 'prod' } } }) });
            my $victim = sprintf('c-p%04d', 1 + int(rand 2500));
            my $res = $http->request('DELETE', $s->url . "$base/$victim", { headers => $auth });
            print $log "$victim\n" if $res->{status} == 204;
            # about 20 changes a second: a walk by created_at chases the clusters made behind
            # it, and a client as fast as the machine would keep it walking to its 200 pages
            select undef, undef, undef, 0.05;
        }
        POSIX::_exit(0);
    }
    unlink $s->dir . '/stop';
    # (the walk starts once the other client is under way: a few deletes logged)
    for (1 .. 200) {
        my $lines = 0;
        if (open my $fh, '<', $deleted_file) { $lines = () = <$fh> }
        last if $lines >= 3;
        Time::HiRes::sleep(0.1);
    }
    my @names = walk($query);
    { open my $fh, '>', $s->dir . '/stop' or die; }
    waitpid $pid, 0;
    unlink $s->dir . '/stop';
    my %deleted = map { chomp; ($_ => 1) } do { open my $fh, '<', $deleted_file or die; <$fh> };
    my %count;
    $count{$_}++ for @names;
    my @twice = grep { $count{$_} > 1 } sort keys %count;
    my @expected = grep { !$deleted{$_} && ($query !~ /env/ || /(\d+)$/ && $1 % 2 == 0) } sort keys %initial;
    my @missed = grep { !$count{$_} } @expected;
    ok scalar(keys %deleted) > 5, "$what: the other client deleted " . scalar(keys %deleted) . ' clusters meanwhile';
    is scalar(@twice), 0, "$what: no cluster twice in " . scalar(@names) . ' listed' or diag "@twice[0 .. 9]";
    is scalar(@missed), 0, "$what: no survivor of " . scalar(@expected) . ' missed' or diag "@missed[0 .. 9]";
    delete $initial{$_} for keys %deleted;
}

PurserStack::finish();

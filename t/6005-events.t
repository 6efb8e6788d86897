#!/usr/bin/perl
# 6005: the event log (issue 13, items 1 and 2, for every kind: clusters,
# facts, bootstrap-token resets and redeems, document revisions, tags, validations, purges,
# organizations, members, users, clients, keys, tokens):
# one event per committed write with kind, name, op, revision and actor, none for a refused
# write; seq without gap or reorder under 8 racing writers; the kinds filter and paging by
# since; 410 with the oldest kept seq after `purser gc-events`; kinds= takes the kinds of the
# table in lib/store/events.c, which the manual lists (docs/automation.md), and is 400 for any other or an empty item.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;
use POSIX ();
use Time::HiRes ();

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org/clusters";
sub call { $s->call(@_) }
sub events {
    my ($query) = @_;
    my ($r, $d) = call('GET', "/organizations/$org/events?$query");
    die "events: $r->{status} $r->{content}" unless $r->{status} == 200;
    return $d;
}
my $last = 0;
sub new_events { my $d = events("since=$last&page_size=1000"); $last = $d->{next}; return @{ $d->{events} } }

my ($r, $d) = call('GET', "/organizations/$org/events");
is $r->{status}, 200, 'the feed answers';
is_deeply [ map { "$_->{kind} $_->{name} $_->{op}" } @{ $d->{events} } ],
    [ "organization $org put", "client $org-validator put", 'member admin put' ],
    '  with the first organization\'s making: itself, its validator, its admin';
is $d->{next}, 3, '  next is 3';
$last = $d->{next};

# An organization's first events, racing: each write gets its event (none fails on the
# counter row both try to create).
{
    my ($cr) = call('POST', '/organizations', { name => 'racefirst' });
    # (its making numbered events 1 and 2; its counter row goes, so that the writes race on it)
    $s->sql("DELETE e, c FROM events e JOIN event_counters c ON c.org_id = e.org_id JOIN organizations o ON o.id = e.org_id WHERE o.name = 'racefirst'");
    my @pids;
    for my $i (1 .. 8) {
        my $pid = fork // die;
        if (!$pid) {
            my ($x) = $s->call('POST', '/organizations/racefirst/clusters', { metadata => { name => "f$i" } });
            POSIX::_exit($x->{status} == 201 ? 0 : 1);
        }
        push @pids, $pid;
    }
    my $failed = 0;
    for (@pids) { waitpid $_, 0; $failed++ if $? }
    is $failed, 0, "8 racing first writes of a new organization all succeed";
    my (undef, $fe) = call('GET', '/organizations/racefirst/events?page_size=100');
    is_deeply [ map { $_->{seq} } @{ $fe->{events} } ], [1 .. 8], '  with events 1 to 8';
}

# ---- one event per write ----
($r, $d) = call('POST', $base, { metadata => { name => 'e1' } });
my $rev = $d->{metadata}{revision};
my $token = $d->{bootstrap_token}{token};
my @e = new_events();
is scalar(@e), 1, 'creating a cluster: one event';
is_deeply [ @{ $e[0] }{qw(kind name op revision actor)} ], ['cluster', 'c-e1', 'put', $rev, 'admin'],
    '  kind, name, op, revision and actor';
is $e[0]{seq}, 4, '  seq 4 (after the three of the making)';
like $e[0]{at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, '  and when';
ok !exists $e[0]{spec} && !exists $e[0]{bootstrap_token}, '  never data';

($r) = call('POST', $base, { metadata => { name => 'e1' } });
is $r->{status}, 409, 'a refused write (409)';
($r) = call('PUT', "$base/c-e1", { spec => { facts => { n => 1 } } }, 'if-match' => '*');
is $r->{status}, 400, 'and another (400)';
is scalar(new_events()), 0, '  append nothing';

call('PATCH', "$base/c-e1", { metadata => { labels => { a => 'b' } } }, 'content-type' => 'application/merge-patch+json', 'if-match' => '*');
call('POST', "$base/c-e1/bootstrap-token");
($r, $d) = call('POST', $base, { metadata => { name => 'e2' } });
($r, my $m) = call('GET', "/install/bootstrap.json?token=$d->{bootstrap_token}{token}", undef, authorization => '');
call('PUT', "$base/c-e2/facts", { x => 1 }, authorization => "Bearer $m->{token}");
call('DELETE', "$base/c-e1");
@e = new_events();
is_deeply [ map { "$_->{kind} $_->{name} $_->{op}" } @e ],
    ['cluster c-e1 put', 'bootstrap_token_reset c-e1 put', 'cluster c-e2 put', 'cluster c-e2 put',
     'client c-e2 put', "token $e[5]{name} put", 'facts c-e2 put', 'cluster c-e1 delete'],
    'patch, reset, create, redeem (cluster, client, token), facts, delete: an event each, in order';
is $e[6]{actor}, 'c-e2', "  the facts' actor is the cluster's credential";
is $e[3]{actor}, 'c-e2', '  and the redeem is by the cluster';
like $e[5]{name}, qr/^[0-9a-f]{16}$/, '  the token event names its id only';
ok !grep({ ($_->{name} // '') eq $m->{token} } @e), '  never the token';
is_deeply [ map { $_->{seq} } @e ], [ map { $_ + 4 } 1 .. 8 ], '  numbered without a gap';

my $doc = "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: d1\n  layeringDefinition: {abstract: false, layer: site}\ndata: 1\n";
($r, $d) = $s->yaml('PUT', "/organizations/$org/api/v1.0/buckets/b1/documents", $doc);
my ($revision) = $r->{content} =~ /revision: (\d+)/;
$s->yaml('PUT', "/organizations/$org/api/v1.0/buckets/b1/documents", $doc); # no change: no revision
$s->yaml('POST', "/organizations/$org/api/v1.0/revisions/$revision/tags/good");
$s->yaml('POST', "/organizations/$org/api/v1.0/revisions/$revision/validations/check", "status: success\nvalidator: {name: x, version: '1'}\n");
$s->yaml('DELETE', "/organizations/$org/api/v1.0/revisions/$revision/tags/good");
($r) = $s->yaml('DELETE', "/organizations/$org/api/v1.0/revisions/$revision/tags/none");
is $r->{status}, 404, 'deleting a tag that is not there: 404';
$s->yaml('DELETE', "/organizations/$org/api/v1.0/revisions");
@e = new_events();
is_deeply [ map { "$_->{kind} $_->{name} $_->{op}" } @e ],
    ["document_revision $revision put", "tag $revision/good put", "validation $revision/check put",
     "tag $revision/good delete", 'document_revision * delete'],
    'documents: the revision, tag, validation, untag, purge (an unchanged PUT and a 404 append none)';
is_deeply $e[0]{buckets}, ['b1'], '  the revision event names the buckets it changed';

# ---- policies, groups, nodes ----
sub lock_for {
    my ($name, $rev) = @_;
    return { revision_id => $rev, name => $name, run_list => ['recipe[base::default]'],
             cookbook_locks => { base => { version => '1.0.0', identifier => "id-$rev" } },
             default_attributes => {}, override_attributes => {} };
}
my $obase = "/organizations/$org";
($r) = call('PUT', "$obase/policy_groups/staging/policies/web", lock_for('web', 'w1'));
is $r->{status}, 201, 'a lock into a group';
($r) = call('PUT', "$obase/policy_groups/staging/policies/web", lock_for('web', 'w1'));
($r) = call('POST', "$obase/policies/web/revisions", lock_for('web', 'w2'));
($r) = call('PUT', "$obase/policy_groups/staging/policies/web/revision/w2", undef);
($r) = call('POST', "$obase/policy_groups/production/promote", { from => 'staging' });
is $r->{status}, 200, 'promote';
($r) = call('POST', "$obase/policies/web/revisions", lock_for('web', 'w2'));
is $r->{status}, 409, 'an upload refused (409)';
($r) = call('POST', "$obase/nodes", { name => 'n1', policy_name => 'web', policy_group => 'staging' });
($r) = call('PUT', "$obase/nodes/n1", { name => 'n1', policy_name => 'web', policy_group => 'production' });
($r) = call('DELETE', "$obase/nodes/n1");
($r) = call('DELETE', "$obase/policy_groups/staging/policies/web");
($r) = call('DELETE', "$obase/policies/web/revisions/w1");
($r) = call('DELETE', "$obase/policies/web");
@e = new_events();
is_deeply [ map { "$_->{kind} $_->{name} $_->{op}" . ($_->{revision} ? " $_->{revision}" : '') } @e ],
    ['policy_group_pointer staging/web put w1', 'policy_revision web/w1 put w1',
     'policy_revision web/w2 put w2', 'policy_group_pointer staging/web put w2',
     'policy_group_pointer production/web put w2', 'node n1 put', 'node n1 put', 'node n1 delete',
     'policy_group_pointer staging/web delete', 'policy_revision web/w1 delete', 'policy web delete'],
    'policy writes: pointer and revision (an identical PUT and a 409 append none), promote one per pointer, nodes, deletes';

# ---- kinds and paging ----
my $all = events('since=0&page_size=1000');
my @clusters = grep { $_->{kind} eq 'cluster' } @{ $all->{events} };
is_deeply [ map { $_->{seq} } @{ events('since=0&kinds=cluster&page_size=1000')->{events} } ],
    [ map { $_->{seq} } @clusters ], 'kinds=cluster keeps only those';
my $page = events('since=0&page_size=3');
is scalar(@{ $page->{events} }), 3, 'page_size=3';
is $page->{next}, 3, '  next is the last seq returned';
is events("since=3&page_size=1")->{events}[0]{seq}, 4, '  and since=3 goes on from 4';
($r, $d) = call('GET', "/organizations/$org/events?since=x");
is $r->{status}, 400, 'a since that is not a number: 400';

# ---- 8 racing writers: no gap, no reorder ----
my @kids;
for my $w (1 .. 8) {
    my $pid = fork // die;
    if (!$pid) {
        for my $i (1 .. 10) { $s->call('POST', $base, { metadata => { name => "r$w-$i" } }) }
        POSIX::_exit(0);
    }
    push @kids, $pid;
}
# a reader follows while they write: what it has seen must never change
my (%seen, $changed);
my $follow = $last;
while (grep { waitpid($_, POSIX::WNOHANG()) == 0 } @kids) {
    my $d2 = events("since=$follow&page_size=1000");
    for my $ev (@{ $d2->{events} }) { $changed++ if exists $seen{ $ev->{seq} }; $seen{ $ev->{seq} } = "$ev->{kind} $ev->{name}" }
    $follow = $d2->{next};
}
waitpid $_, 0 for @kids;
my $d3 = events("since=$follow&page_size=1000");
$seen{ $_->{seq} } = "$_->{kind} $_->{name}" for @{ $d3->{events} };
my @seqs = sort { $a <=> $b } keys %seen;
is scalar(@seqs), 80, '80 writes by 8 racing writers: 80 events';
is_deeply \@seqs, [ $last + 1 .. $last + 80 ], '  numbered without a gap';
ok !$changed, '  and a follower never saw a number twice or a lower one later';
my $check = events("since=$last&page_size=1000");
is_deeply [ map { "$_->{kind} $_->{name}" } @{ $check->{events} } ], [ map { $seen{$_} } @seqs ],
    '  what the follower saw is what is stored';

# ---- identity: the organization, its members, its clients, its members' users, keys, tokens ----
{
    my ($r1) = call('POST', '/organizations', { name => 'idorg' });
    is $r1->{status}, 201, 'a new organization';
    my $id_last = 0;
    my $id_events = sub {
        my ($x, $dd) = call('GET', "/organizations/idorg/events?since=$id_last&page_size=1000");
        $id_last = $dd->{next};
        return [ map { "$_->{kind} $_->{name} $_->{op}" } @{ $dd->{events} } ];
    };
    is_deeply $id_events->(), ['organization idorg put', 'client idorg-validator put'],
        '  its creation and its validator client';
    call('PUT', '/organizations/idorg', { full_name => 'Id Org' });
    is_deeply $id_events->(), ['organization idorg put'], 'an organization update';
    ($r1) = call('PUT', '/organizations/idorg', { full_name => 'x' x 2000 });
    is $r1->{status}, 400, '  a refused one: 400';
    is_deeply $id_events->(), [], '  and no event';
    call('POST', '/users', { username => 'ida' });
    is_deeply $id_events->(), [], 'a new user who is no member: no event here';
    call('POST', '/organizations/idorg/users', { username => 'ida', roles => ['reader'] });
    is_deeply $id_events->(), ['member ida put'], 'adding a member';
    call('PUT', '/users/ida', { display_name => 'Ida' });
    is_deeply $id_events->(), ['user ida put'], "a member's user changes";
    ($r1) = call('PUT', '/users/ida', { display_name => 'Ida B', active => 'yes' });
    is $r1->{status}, 400, '  a change with a bad field: 400';
    my ($ru, $du) = call('GET', '/users/ida');
    is $du->{display_name}, 'Ida', '  and nothing of it was written';
    is_deeply $id_events->(), [], '  nor an event';
    call('POST', '/users/ida/keys', { name => 'laptop', create_key => JSON::PP::true(), expiration_date => 'infinity' });
    call('PUT', '/users/ida/keys/laptop', { name => 'desk' });
    call('DELETE', '/users/ida/keys/desk');
    is_deeply $id_events->(), ['key ida/laptop put', 'key ida/desk put', 'key ida/desk delete'],
        'her keys: created, renamed, deleted';
    my ($rt, $dt) = call('POST', '/users/ida/tokens', { description => 'x' });
    my $tid = $dt->{id};
    call('PATCH', "/users/ida/tokens/$tid", { active => JSON::PP::false() }, 'content-type' => 'application/merge-patch+json');
    call('DELETE', "/users/ida/tokens/$tid");
    my $evs = $id_events->();
    is_deeply $evs, ["token $tid put", "token $tid put", "token $tid delete"], 'her tokens, by id';
    my ($rr, $raw) = call('GET', "/organizations/idorg/events?since=0&kinds=token&page_size=100");
    ok !grep({ /$dt->{token}/ } $rr->{content}), '  never with the secret';
    call('POST', '/organizations/idorg/clients', { name => 'idc' });
    call('PUT', '/organizations/idorg/clients/idc', { validator => JSON::PP::true() });
    call('DELETE', '/organizations/idorg/clients/idc');
    is_deeply $id_events->(), ['client idc put', 'client idc put', 'client idc delete'], 'a client: created, changed, deleted';
    call('DELETE', '/organizations/idorg/users/ida');
    is_deeply $id_events->(), ['member ida delete'], 'removing the member';
    call('PUT', '/users/ida', { display_name => 'Ida C' });
    is_deeply $id_events->(), [], '  after which her changes are not this organization\'s';
}

# ---- pruning: 410 with the oldest kept seq ----
$s->sql("UPDATE events SET at = at - INTERVAL 30 DAY WHERE seq <= 10 AND org_id = (SELECT id FROM organizations WHERE name = '$org')");
my $purser = ($ENV{PURSER_BUILD} // PurserStack::root() . '/build') . '/purser';
my $out = `'$purser' -c '@{[$s->dir]}/purser.yaml' gc-events 2>&1`;
like $out, qr/^10 event\(s\) older than 7 day\(s\) removed/m, 'purser gc-events removes what is older than events.retention';
($r, $d) = call('GET', "/organizations/$org/events?since=5");
is $r->{status}, 410, 'since older than what is kept: 410';
is $r->{reason}, 'Gone', '  Gone: the status of the code gone, from the one table (fcgi/request.c)';
is $d->{error}{code}, 'gone', '  the error names its code, gone';
is $d->{oldest_seq}, 11, '  with the oldest kept seq';
like PurserStack::error_message($d), qr/re-read/, '  saying to re-read and follow from there';
($r, $d) = call('GET', "/organizations/$org/events?since=10");
is $r->{status}, 200, 'since just before the oldest kept: 200';
is $d->{events}[0]{seq}, 11, '  from it';

# ---- the kinds filter names kinds of the table (lib/store/events.c), which the manual lists ----
{
    open my $fh, '<', PurserStack::root() . '/docs/automation.md' or die "docs/automation.md: $!";
    my $page = do { local $/; <$fh> };
    my ($section) = $page =~ /^## Events\n(.*?)^## /ms or die 'no Events section in docs/automation.md';
    my @listed = $section =~ /^\| `([a-z_]+)` \|/mg;
    cmp_ok scalar(@listed), '>=', 18, "the manual's Events section lists the event kinds";
    my (undef, $k) = call('GET', "/organizations/$org/events?kinds=none-such");
    is_deeply \@listed, $k->{known},
        '  the same kinds in the same order as the feed knows them (the core\'s table, then the '
        . 'resource kinds\')';
    my $from = 10; # the oldest kept is 11 (pruned above)
    my $seqs = sub {
        [ map { $_->{seq} } @{ events("since=$from&page_size=1000&$_[0]")->{events} } ];
    };
    my @all = @{ events("since=$from&page_size=1000")->{events} };
    my @refused;
    for my $kind (@listed) {
        my ($rk, $dk) =
            call('GET', "/organizations/$org/events?since=$from&page_size=1000&kinds=$kind");
        push @refused, "$kind: $rk->{status}" unless $rk->{status} == 200
            && !grep { $_->{kind} ne $kind } @{ $dk->{events} };
    }
    is_deeply \@refused, [], '  kinds= accepts each of them, and keeps only that kind';
    is_deeply $seqs->('kinds=' . join(',', @listed)), [ map { $_->{seq} } @all ],
        '  all of them at once keep every event (no event has a kind the manual misses)';
    is_deeply $seqs->('kinds=cluster,node'),
        [ map { $_->{seq} } grep { $_->{kind} =~ /^(cluster|node)$/ } @all ],
        'a known kind filters as before (kinds=cluster,node)';
    ok scalar(@{ $seqs->('kinds=cluster,node') }), '  and finds some';
    is_deeply $seqs->('kinds='), [ map { $_->{seq} } @all ], 'kinds= with nothing filters nothing';

    ($r, $d) = call('GET', "/organizations/$org/events?since=$from&kinds=cluster,bogus");
    is $r->{status}, 400, 'an unknown kind: 400';
    is $d->{error}{code}, 'bad_request', '  in the route\'s JSON error form';
    my ($known) =
        PurserStack::error_message($d) =~ /^kinds: unknown event kind 'bogus' \(known: (.*)\)$/;
    ok defined $known, '  naming it: ' . PurserStack::error_message($d);
    # (an error message is 256 bytes: a list that outgrows it ends in "...")
    my @known = split /, /, $known // '';
    pop @known if @known && $known[-1] eq '...';
    ok @known && "@known" eq "@listed[0 .. $#known]", '  and the known kinds, as the manual lists them';
    ($r, $d) = call('GET', "/organizations/$org/events?since=$from&kinds=Cluster");
    like PurserStack::error_message($d), qr/unknown event kind 'Cluster'/,
        '  kinds are case-sensitive';
    for my $bad ('cluster,,node', 'cluster,', ',cluster', ',') {
        ($r, $d) = call('GET', "/organizations/$org/events?since=$from&kinds=$bad");
        is $r->{status}, 400, "an empty item (kinds=$bad): 400";
        like PurserStack::error_message($d), qr/^kinds: item \d+ is empty/, '  saying so';
    }
    my $next = events("since=$from&page_size=1000")->{next};
    my $t0 = Time::HiRes::time();
    ($r, $d) = call('GET', "/organizations/$org/events?since=$next&wait=20&kinds=bogus");
    is $r->{status}, 400, 'with wait= and nothing to read: 400 all the same';
    cmp_ok Time::HiRes::time() - $t0, '<', 10, '  at once, not after the wait';
    ($r, $d) = call('GET', "/organizations/nosuchorg/events?kinds=bogus");
    is $r->{status}, 400, '  and before the organization is looked up';
}

# the newest events without reading the log (issue 38 item 7): last=N, with kinds and actor
{
    my $all = [];
    my (undef, $gone) = call('GET', "/organizations/$org/events?since=0");
    my $since = $gone && $gone->{oldest_seq} ? $gone->{oldest_seq} - 1 : 0; # (pruned above)
    while (1) { my $d = events("since=$since&page_size=1000"); push @$all, @{ $d->{events} }; last if $d->{next} == $since || @{ $d->{events} } < 1000; $since = $d->{next} }
    my $newest = $all->[-1]{seq};
    my $d = events('last=5');
    is_deeply [ map { $_->{seq} } @{ $d->{events} } ], [ map { $_->{seq} } @$all[-5 .. -1] ], 'last=5: the newest five, oldest first';
    is $d->{next}, $newest, '  next: the newest seq, where following starts';
    my @clusters = grep { $_->{kind} eq 'cluster' } @$all;
    $d = events('last=2&kinds=cluster');
    is_deeply [ map { $_->{seq} } @{ $d->{events} } ], [ map { $_->{seq} } @clusters[-2, -1] ], '  with kinds: the newest two of that kind';
    is $d->{next}, $newest, '  next passes what kinds left out';
    my @by = grep { $_->{actor} eq 'admin' } @$all;
    $d = events('last=3&actor=admin');
    is_deeply [ map { $_->{seq} } @{ $d->{events} } ], [ map { $_->{seq} } @by[-3 .. -1] ], '  with actor: the newest three by that actor';
    $d = events('last=3&actor=nobody-at-all');
    is_deeply $d->{events}, [], '  an actor with none: none';
    $d = events("since=$all->[0]{seq}&page_size=1000&actor=admin");
    is_deeply [ map { $_->{seq} } @{ $d->{events} } ], [ map { $_->{seq} } grep { $_->{seq} > $all->[0]{seq} } @by ], 'actor narrows since= too';
    for my $bad ('last=5&since=3', 'last=5&wait=2', 'last=1001', 'last=x') {
        ($r, $d) = call('GET', "/organizations/$org/events?$bad");
        is $r->{status}, 400, "$bad: 400";
        like PurserStack::error_message($d), qr/last/, '  naming last';
    }
}

PurserStack::finish();

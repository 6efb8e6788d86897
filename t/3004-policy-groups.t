# 3004: what the Policyfile RFC asked for beyond Chef: pointing a group at an uploaded
# revision, promotion (all or nothing), the groups of a revision, the nodes of a group, the
# diff between groups, retention (purser gc-policies), and racing uploads to one pointer.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use POSIX ();
use PurserStack;

my $s = PurserStack->new(workers => 4);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org";

sub lock_for {
    my ($name, $rev, %o) = @_;
    return { revision_id => $rev, name => $name, run_list => $o{run_list} // ['recipe[base::default]'],
             cookbook_locks => { base => { version => $o{version} // '1.0.0', identifier => "id-$rev" } },
             default_attributes => $o{attributes} // {}, override_attributes => {} };
}
sub put_lock { my ($group, $name, $rev, %o) = @_; ($s->api('PUT', "$base/policy_groups/$group/policies/$name", lock_for($name, $rev, %o)))[0]{status} }

is put_lock('staging', 'web', 'w1'), 201, 'web w1 in staging';
is put_lock('staging', 'db', 'd1'), 201, 'db d1 in staging';
my ($r, $j) = $s->api('POST', "$base/policies/web/revisions", lock_for('web', 'w2', version => '1.1.0', run_list => ['recipe[base::default]', 'recipe[web::default]'], attributes => { port => 8080 }));
is $r->{status}, 201, 'web w2 uploaded, in no group';

# Point a group at an uploaded revision.
($r, $j) = $s->api('PUT', "$base/policy_groups/staging/policies/web/revision/w2");
is $r->{status}, 200, 'PUT .../revision/w2 with no body moves the pointer (200: it existed)';
is $j->{revision_id}, 'w2', 'and answers the lock it points at now';
($r) = $s->api('PUT', "$base/policy_groups/qa/policies/web/revision/w1");
is $r->{status}, 201, 'a new pointer is 201';
($r) = $s->api('PUT', "$base/policy_groups/qa/policies/web/revision/nope");
is $r->{status}, 404, 'an unknown revision is 404';

($r, $j) = $s->api('GET', "$base/policies/web/revisions/w1/policy_groups");
is_deeply $j, ['qa'], 'the groups of a revision';

# Diff between two groups (known pair: w1 in qa, w2 in staging).
($r, $j) = $s->api('GET', "$base/policies/web/diff?from_group=qa&to_group=staging");
is $r->{status}, 200, 'diff qa -> staging';
is_deeply $j->{run_list}{added}, ['recipe[web::default]'], 'run list: added recipe';
is_deeply $j->{cookbooks}{changed}{base}, { from => '1.0.0', to => '1.1.0', from_identifier => 'id-w1', to_identifier => 'id-w2' },
    'cookbooks: base changed version';
is_deeply $j->{attributes}{added}, ['default_attributes.port'], 'attributes: the added path';
is_deeply [ $j->{from}{revision_id}, $j->{to}{revision_id} ], ['w1', 'w2'], 'labels name both sides';
($r, $j) = $s->api('GET', "$base/policies/web/diff?from_revision=w2&to_revision=w1");
is_deeply $j->{run_list}{removed}, ['recipe[web::default]'], 'diff between revisions, the other way';
($r, $j) = $s->api('GET', "$base/policies/web/diff?from_group=qa");
is $r->{status}, 400, 'a diff needs both sides';

# Promotion: all or nothing.
($r, $j) = $s->api('POST', "$base/policy_groups/production/promote", { from => 'staging', policies => ['web', 'cache'] });
is $r->{status}, 404, 'promoting a policy the source group lacks fails';
like $j->{error}[0], qr/'cache' is not in policy group 'staging'/, 'naming it';
($r) = $s->api('GET', "$base/policy_groups/production/policies/web");
is $r->{status}, 404, 'and nothing was promoted';
($r, $j) = $s->api('POST', "$base/policy_groups/production/promote", { from => 'staging', policies => ['web'] });
is $r->{status}, 200, 'promote web only';
is_deeply $j->{policies}, { web => { revision_id => 'w2' } }, 'production now has web at w2, and only web';
($r, $j) = $s->api('POST', "$base/policy_groups/production/promote", { from => 'staging' });
is_deeply $j->{policies}, { web => { revision_id => 'w2' }, db => { revision_id => 'd1' } }, 'promote everything';
($r, $j) = $s->api('POST', "$base/policy_groups/production/promote", { policies => ['web'] });
is $r->{status}, 400, 'promote needs a source group';
like $j->{error}[0], qr/'from' missing/, 'naming the field';

# Nodes of a group.
$s->api('POST', "$base/nodes", { name => 'n1', policy_name => 'web', policy_group => 'production' });
$s->api('POST', "$base/nodes", { name => 'n2', policy_name => 'db', policy_group => 'production' });
$s->api('POST', "$base/nodes", { name => 'n3', policy_name => 'web', policy_group => 'staging' });
($r, $j) = $s->api('GET', "$base/policy_groups/production/nodes");
is_deeply [ sort keys %$j ], ['n1', 'n2'], 'the nodes of a group';
($r, $j) = $s->api('GET', "$base/policy_groups/production/policies/web/nodes");
is_deeply [ sort keys %$j ], ['n1'], 'the nodes of a policy in a group';

# Retention.
$s->api('POST', "$base/policies/web/revisions", lock_for('web', "old$_")) for 1 .. 3;
my $before = ($s->api('GET', "$base/events?since=0&page_size=1000"))[1]{next};
my $purser = PurserStack::build() . '/purser';
my $cfg = $s->dir . '/purser.yaml';
my $out = `'$purser' -c '$cfg' gc-policies --keep 1 2>&1`;
is $?, 0, 'gc-policies runs';
like $out, qr/^2 revision\(s\) removed$/m, 'and reports what it removed';
($r, $j) = $s->api('GET', "$base/policies/web");
is_deeply [ sort keys %{ $j->{revisions} } ], ['old3', 'w1', 'w2'], 'kept: the newest, and every revision a group points at';
($r, $j) = $s->api('GET', "$base/events?since=$before&kinds=policy_revision");
is_deeply [ map { "$_->{name} $_->{op}" } @{ $j->{events} } ], ['web/old1 delete', 'web/old2 delete'],
    '  each removal is an event, as the API writes for a deleted revision';

# Racing uploads: 8 clients PUT different revisions to one group and policy at once.
my @kids;
pipe(my $reader, my $writer) or die;
for my $i (1 .. 8) {
    my $pid = fork // die;
    if (!$pid) {
        close $reader;
        my ($res) = $s->api('PUT', "$base/policy_groups/race/policies/cache", lock_for('cache', "c$i"));
        syswrite $writer, "$res->{status}\n"; # unbuffered: _exit flushes nothing
        POSIX::_exit(0); # not exit: the END block would stop the stack
    }
    push @kids, $pid;
}
close $writer;
my @statuses = map { chomp; $_ } <$reader>;
waitpid($_, 0) for @kids;
is scalar(@statuses), 8, 'eight racing PUTs answered';
is scalar(grep { $_ == 201 } @statuses), 1, 'exactly one created the pointer (201)';
is scalar(grep { $_ == 200 } @statuses), 7, 'the others moved it (200), none failed'
    or diag "statuses: @statuses";
is $s->sql("SELECT COUNT(*) FROM policy_group_pointers pp JOIN policy_groups g ON g.id = pp.group_id WHERE g.name = 'race'"), "1\n",
    'one pointer';
is $s->sql("SELECT COUNT(*) FROM policy_revisions r JOIN policies p ON p.id = r.policy_id WHERE p.name = 'cache'"), "8\n",
    'all eight revisions stored, none lost';
($r, $j) = $s->api('GET', "$base/policy_groups/race/policies/cache");
like $j->{revision_id}, qr/^c[1-8]$/, 'the pointer names one of them';

# Racing uploads of one new revision id with different contents, to a new group each round
# (issue 17 item 7): one writer wins (201), every loser gets 409, never 404 or 500.
for my $round (1 .. 6) {
    my @racers;
    pipe(my $rd, my $wr) or die;
    for my $i (1 .. 12) {
        my $pid = fork // die;
        if (!$pid) {
            close $rd;
            my ($res) = $s->api('PUT', "$base/policy_groups/same$round/policies/rpol",
                                lock_for("rpol", "same$round", attributes => { writer => $i }));
            syswrite $wr, "$res->{status}\n";
            POSIX::_exit(0);
        }
        push @racers, $pid;
    }
    close $wr;
    my @got = map { chomp; $_ } <$rd>;
    waitpid($_, 0) for @racers;
    is join(',', sort @got), join(',', 201, (409) x 11), "round $round: one 201 and eleven 409"
        or diag "statuses: @got";
}

# A group whose last pointer is gone: Chef shows it with "policies": {} (only the list leaves
# the key out).
is put_lock('empty-soon', 'web', 'w1'), 201, 'a group with one pointer';
($r) = $s->api('DELETE', "$base/policy_groups/empty-soon/policies/web");
is $r->{status}, 200, '  its pointer removed';
($r, $j) = $s->api('GET', "$base/policy_groups/empty-soon");
is $r->{status}, 200, 'the group is still there';
is_deeply $j->{policies}, {}, '  with "policies": {}';
like $j->{uri}, qr{/policy_groups/empty-soon$}, '  and its uri';

PurserStack::finish();

#!/usr/bin/perl
# 4008: grants by policy group (issue 32 item 2). A role granted in an organization may be
# limited to policy groups by name or pattern, in the policy file (the `release` role: prod,
# prod-*, production) or by the membership (POST .../users {"policy_groups": {"operator":
# ["dev*", "staging"]}}). A matrix of such grants over every route that reads or moves a group's
# pointer (Chef's 403 `{"error": ["missing update permission"]}` where refused, and the store
# unchanged); promote needs the right on the target and read on the source; deleting a policy or
# revision that a group points at needs the right on that group; lists and the groups of a
# revision show only readable groups; the permissions answer and the member list show the
# limits; bad grants are 400 naming the field.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org";
my @groups = qw(dev dev-2 staging prod);

sub lock_for { PurserStack::lock_for(@_) }
sub admin { $s->api(@_) }
sub status_of { ($s->api(@_))[0]{status} }
# The group's pointer for web as the admin sees it: its revision, or the status.
sub pointer {
    my ($r, $j) = admin('GET', "$base/policy_groups/$_[0]/policies/web");
    return $r->{status} == 200 ? $j->{revision_id} : $r->{status};
}
# Every group points web at w1; w2 is uploaded and in no group.
sub reset_groups {
    for my $g (@groups) {
        my $st = status_of('PUT', "$base/policy_groups/$g/policies/web", lock_for('w1'));
        die "reset $g: $st\n" unless $st =~ /^20[01]$/;
    }
}
reset_groups();
is status_of('POST', "$base/policies/web/revisions", lock_for('w2')), 201, 'web w2 uploaded';

# ---- the grants ----
my (%token, %key);
sub user_with {
    my ($name, $membership) = @_;
    my ($r, $j) = admin('POST', '/users', { username => $name });
    die "user $name: $r->{status}\n" unless $r->{status} == 201;
    $key{$name} = $j->{private_key};
    ($r, $j) = admin('POST', "$base/users", { username => $name, %$membership });
    is $r->{status}, 201, "$name: " . JSON::PP->new->canonical->encode($membership);
    ($r, $j) = admin('POST', "/users/$name/tokens", {});
    $token{$name} = $j->{token};
    return $j;
}
user_with('ci', { roles => ['operator'], policy_groups => { operator => ['dev*', 'staging'] } });
user_with('rel', { roles => ['reader', 'release'] });
user_with('stg', { roles => ['reader'], policy_groups => { reader => ['staging'] } });
user_with('ops', { roles => ['operator'] });

# Whether each subject may read (r), write (w) and promote into (p) each group.
my %may = (
    ci  => { map { $_ => $_ eq 'prod' ? '' : 'rwp' } @groups },
    rel => { map { $_ => $_ eq 'prod' ? 'rwp' : 'r' } @groups },
    stg => { map { $_ => $_ eq 'staging' ? 'r' : '' } @groups },
    ops => { map { $_ => 'rwp' } @groups },
);

# ---- the matrix: every group route, every group, every subject ----
# [name, method, path (GROUP for the group), body, right, what a refusal says, what it leaves]
my @routes = (
    ['show the group', 'GET', 'policy_groups/GROUP', undef, 'r', 'read'],
    ["fetch the group's lock (chef-client)", 'GET', 'policy_groups/GROUP/policies/web', undef, 'r', 'read'],
    ['PUT a lock into the group', 'PUT', 'policy_groups/GROUP/policies/web', lock_for('w2'), 'w', 'update'],
    ['point the group at w2', 'PUT', 'policy_groups/GROUP/policies/web/revision/w2', undef, 'w', 'update'],
    ["delete the group's pointer", 'DELETE', 'policy_groups/GROUP/policies/web', undef, 'w', 'delete'],
    ['promote into the group', 'POST', 'policy_groups/GROUP/promote', { from => 'staging' }, 'p', 'update'],
    ['delete the group', 'DELETE', 'policy_groups/GROUP', undef, 'w', 'delete'],
);
my ($checked, $wrong) = (0, 0);
for my $who (sort keys %may) {
    for my $g (@groups) {
        for my $route (@routes) {
            my ($name, $method, $path, $body, $right, $word) = @$route;
            (my $url = "$base/$path") =~ s/GROUP/$g/;
            # a promote into staging copies staging onto itself: promote from dev then
            my $b = $body && $body->{from} && $g eq 'staging' ? { from => 'dev' } : $body;
            my $allowed = index($may{$who}{$g}, $right) >= 0;
            # promote also reads its source: ci and stg read dev, rel and ops read everything
            $allowed &&= index($may{$who}{ $b->{from} }, 'r') >= 0 if $b && $b->{from};
            my ($r, $j) = $s->api($method, $url, $b, $token{$who});
            my $ok;
            if ($allowed) {
                $ok = $r->{status} =~ /^20[01]$/;
            } else {
                $ok = $r->{status} == 403 && JSON::PP->new->canonical->encode($j // {}) eq
                    qq({"error":["missing $word permission"]}) && pointer($g) eq 'w1';
            }
            $checked++;
            unless ($ok) {
                $wrong++;
                diag "$who: $name ($method $url): got $r->{status} $r->{content}, expected "
                    . ($allowed ? 'allowed' : "403 missing $word permission, pointer w1 (now " . pointer($g) . ')');
            }
            reset_groups() if $allowed && $method ne 'GET';
        }
    }
}
is $checked, 4 * 4 * 7, "$checked requests: every group route, group and subject";
is $wrong, 0, 'each allowed exactly where its grant reaches; each refusal in Chef\'s words, changing nothing';

# A refusal is logged with the action and the group.
my @denied = grep { /access denied/ && /"principal":"ci"/ && /"policy_group":"prod"/ } $s->log_lines('purser-fcgi.log');
ok scalar(@denied), 'a refusal is logged with its policy group';
like $denied[0] // '', qr/"action":"(read|write|promote)_policy_group"/, '  and its action';

# Promote needs read on the source: ci may move dev but not copy prod into it.
my ($r, $j) = $s->api('POST', "$base/policy_groups/dev/promote", { from => 'prod' }, $token{ci});
is $r->{status}, 403, 'promoting prod into dev needs read on prod: 403';
is_deeply $j, { error => ['missing read permission'] }, "  Chef's words for a read";

# ---- what reads several groups shows only those the caller may read ----
($r, $j) = $s->api('GET', "$base/policy_groups", undef, $token{stg});
is_deeply [ sort keys %$j ], ['staging'], 'the group list of a reader limited to staging';
($r, $j) = $s->api('GET', "$base/policy_groups", undef, $token{ci});
is_deeply [ sort keys %$j ], [qw(dev dev-2 staging)], 'the group list of ci (dev*, staging)';
($r, $j) = $s->api('GET', "$base/policy_groups", undef, $token{rel});
is_deeply [ sort keys %$j ], [ sort @groups ], 'reader and release: every group';
($r, $j) = $s->api('GET', "$base/policies/web/revisions/w1", undef, $token{stg});
is_deeply $j->{policy_group_list}, ['staging'], "a revision's policy_group_list: the readable groups";
($r, $j) = $s->api('GET', "$base/policies/web/revisions/w1/policy_groups", undef, $token{stg});
is_deeply $j, ['staging'], "  and the revision's groups route";
($r, $j) = $s->api('GET', "$base/policies/web/revisions/w1/policy_groups");
is_deeply [ sort @$j ], [ sort @groups ], '  (the admin sees all four)';
($r, $j) = $s->api('GET', "$base/policies/web/diff?from_group=prod&to_group=staging", undef, $token{stg});
is $r->{status}, 403, "a diff that reads prod's pointer: 403 for stg";
($r, $j) = $s->api('GET', "$base/policies/web/diff?from_revision=w1&to_group=staging", undef, $token{stg});
is $r->{status}, 200, '  one that reads staging only: 200';

# ---- deleting what a group points at moves that group ----
($r, $j) = $s->api('DELETE', "$base/policies/web/revisions/w1", undef, $token{ci});
is $r->{status}, 403, 'ci may not delete a revision prod points at';
is_deeply $j, { error => ['missing delete permission'] }, "  in Chef's words";
is pointer('prod'), 'w1', '  and prod still points at it';
($r, $j) = $s->api('DELETE', "$base/policies/web", undef, $token{ci});
is $r->{status}, 403, 'nor the policy';
is status_of('GET', "$base/policies/web/revisions/w2"), 200, '  whose revisions are all still there';
($r) = $s->api('DELETE', "$base/policies/web/revisions/w2", undef, $token{ci});
is $r->{status}, 200, 'a revision no group points at: ci deletes it';
is status_of('POST', "$base/policies/web/revisions", lock_for('w2')), 201, '  (uploaded again)';

# ---- a Chef-signed request is held to the same grants ----
my $keyfile = $s->dir . '/ci.pem';
{ open my $fh, '>', $keyfile or die; print $fh $key{ci}; }
my $c = $s->chef(user => 'ci', key => $keyfile, method => 'PUT', path => "$base/policy_groups/prod/policies/web/revision/w2");
is $c->{status}, 403, 'signed as ci, pointing prod: 403';
is_deeply $c->{json}, { error => ['missing update permission'] }, "  Chef's shape";
$c = $s->chef(user => 'ci', key => $keyfile, method => 'PUT', path => "$base/policy_groups/dev/policies/web/revision/w2");
is $c->{status}, 200, '  pointing dev: 200';
reset_groups();

# ---- the permissions answer and the member list show the limits ----
($r, $j) = $s->api('GET', "$base/permissions", undef, $token{ci});
is_deeply $j->{policy_groups}, { map { $_ => ['dev*', 'staging'] } qw(read_policy_group write_policy_group promote_policy_group read_node) },
    "ci's permissions: the policy group actions with their groups (read_node: a group's nodes)";
ok((grep { $_ eq 'write_policy_group' } @{ $j->{actions} }), '  (listed among its actions)');
($r, $j) = $s->api('GET', "$base/permissions", undef, $token{rel});
is_deeply $j->{policy_groups}, { map { $_ => ['prod', 'prod-*', 'production'] } qw(write_policy_group promote_policy_group) },
    "rel's: write and promote limited by the release role; read is the reader's, on every group";
($r, $j) = $s->api('GET', "$base/permissions", undef, $token{ops});
is_deeply $j->{policy_groups}, {}, "an unlimited operator's: none";
($r, $j) = admin('GET', "$base/users");
my ($ci) = grep { $_->{user}{username} eq 'ci' } @$j;
is_deeply $ci->{user}, { username => 'ci', roles => ['operator'], policy_groups => { operator => ['dev*', 'staging'] } },
    'the member list shows the limit';
my ($ops) = grep { $_->{user}{username} eq 'ops' } @$j;
ok !exists $ops->{user}{policy_groups}, '  and none for an unlimited member';

# ---- bad grants: 400 naming the field, nothing changed ----
my @bad = (
    [{ username => 'ci', roles => ['operator'], policy_groups => ['dev'] }, qr/Field 'policy_groups' invalid/],
    [{ username => 'ci', roles => ['operator'], policy_groups => { reader => ['dev'] } }, qr/Field 'policy_groups\.reader' invalid: the request does not grant role reader/],
    [{ username => 'ci', roles => ['operator'], policy_groups => { operator => [] } }, qr/Field 'policy_groups\.operator' invalid/],
    [{ username => 'ci', roles => ['operator'], policy_groups => { operator => ['prod/x'] } }, qr/Field 'policy_groups\.operator\[0\]' invalid/],
    [{ username => 'ci', roles => ['operator'], policy_groups => { operator => ['dev', 7] } }, qr/Field 'policy_groups\.operator\[1\]' invalid/],
    [{ username => 'ci', roles => ['operator'], policy_groups => { operator => ['a,b'] } }, qr/Field 'policy_groups\.operator\[0\]' invalid/],
);
for my $case (@bad) {
    ($r, $j) = admin('POST', "$base/users", $case->[0]);
    is $r->{status}, 400, '400: ' . JSON::PP->new->canonical->encode($case->[0]{policy_groups});
    like PurserStack::error_message($j), $case->[1], '  naming the field';
}
($r, $j) = admin('GET', "$base/users");
($ci) = grep { $_->{user}{username} eq 'ci' } @$j;
is_deeply $ci->{user}{policy_groups}, { operator => ['dev*', 'staging'] }, 'and the grant is unchanged';

# ---- what else moves what a group runs: its nodes, the cookbook artifacts its locks name ----
is status_of('POST', "$base/nodes", { name => 'prodweb', policy_name => 'web', policy_group => 'prod' }), 201,
    'a node in prod';
is status_of('POST', "$base/nodes", { name => 'devweb', policy_name => 'web', policy_group => 'dev' }), 201,
    'a node in dev';
($r, $j) = $s->api('PUT', "$base/nodes/prodweb", { name => 'prodweb', policy_name => 'web', policy_group => 'dev' }, $token{ci});
is $r->{status}, 403, 'ci may not move a prod node into dev';
is_deeply $j, { error => ['missing update permission'] }, "  Chef's words";
is +(admin('GET', "$base/nodes/prodweb"))[1]{policy_group}, 'prod', '  and the node stays in prod';
is status_of('PUT', "$base/nodes/devweb", { name => 'devweb', policy_name => 'web', policy_group => 'prod' }, $token{ci}), 403,
    'nor a dev node into prod';
is status_of('DELETE', "$base/nodes/prodweb", undef, $token{ci}), 403, 'nor delete a prod node';
is status_of('POST', "$base/nodes", { name => 'newprod', policy_name => 'web', policy_group => 'prod' }, $token{ci}), 403,
    'nor create a node in prod';
is status_of('PUT', "$base/nodes/devweb", { name => 'devweb', policy_name => 'web', policy_group => 'staging' }, $token{ci}), 200,
    'it moves a dev node into staging';
is status_of('PUT', "$base/nodes/prodweb", { name => 'prodweb', policy_name => 'web', policy_group => 'dev' }, $token{ops}), 200,
    'an unlimited operator moves any node';
my $artifact = { name => 'base', identifier => 'id-w1', version => '1.0.0', chef_type => 'cookbook_version',
                 metadata => { name => 'base', version => '1.0.0', dependencies => {} }, all_files => [] };
is status_of('PUT', "$base/cookbook_artifacts/base/id-w1", $artifact), 201, "the artifact prod's lock names";
($r, $j) = $s->api('DELETE', "$base/cookbook_artifacts/base/id-w1", undef, $token{ci});
is $r->{status}, 403, 'ci may not delete it';
is_deeply $j, { error => ['missing delete permission'] }, "  Chef's words";
is status_of('GET', "$base/cookbook_artifacts/base/id-w1"), 200, '  and it is still there';

# ---- a limit is not lifted by the one it limits ----
user_with('la', { roles => ['admin'], policy_groups => { admin => ['dev*'] } });
($r, $j) = $s->api('POST', "$base/users", { username => 'la', roles => ['admin'] }, $token{la});
is $r->{status}, 403, 'an admin limited to dev* may not grant itself admin without the limit';
like PurserStack::error_message($j), qr/may not change its own membership/, '  saying why';
($r, $j) = $s->api('POST', "$base/users", { username => 'ops', roles => ['operator'] }, $token{la});
is $r->{status}, 201, '  a role it grants another without a limit gets its own (t/4011)';
is_deeply $j->{user}{policy_groups}, { operator => ['dev*'] }, '  operator on dev* only';
($r, $j) = $s->api('POST', "$base/users", { username => 'ops', roles => ['operator'], policy_groups => { operator => ['prod'] } }, $token{la});
is $r->{status}, 403, '  nor one beyond its own groups';
like PurserStack::error_message($j), qr/'prod' is beyond your own policy groups/, '  naming the pattern';
($r) = $s->api('POST', "$base/users", { username => 'stg', roles => ['operator'], policy_groups => { operator => ['dev-3'] } }, $token{la});
is $r->{status}, 201, '  a grant within its own groups: 201';

# ---- granting again: a given limit replaces the one there, none keeps it, null lifts it ----
($r) = admin('POST', "$base/users", { username => 'ci', roles => ['operator'], policy_groups => { operator => ['prod'] } });
is $r->{status}, 201, 'ci granted operator on prod instead';
is status_of('PUT', "$base/policy_groups/prod/policies/web/revision/w2", undef, $token{ci}), 200, '  now moves prod at once';
is status_of('PUT', "$base/policy_groups/dev/policies/web/revision/w2", undef, $token{ci}), 403, '  and no longer dev';
($r) = admin('POST', "$base/users", { username => 'ci', roles => ['operator'] });
is status_of('PUT', "$base/policy_groups/dev/policies/web/revision/w1", undef, $token{ci}), 403,
    'granted again without policy_groups: the limit stays';
($r) = admin('POST', "$base/users", { username => 'ci', roles => ['operator'], policy_groups => { operator => undef } });
is $r->{status}, 201, 'granted with policy_groups {operator: null}';
is status_of('PUT', "$base/policy_groups/dev/policies/web/revision/w1", undef, $token{ci}), 200, '  the limit is lifted: every group';

# ---- the event feed shows a limited reader only its groups' pointers ----
($r, $j) = $s->api('GET', "$base/events?since=0&page_size=1000", undef, $token{stg});
my %pointer_groups = map { ($_->{name} =~ m{^([^/]+)/})[0] => 1 } grep { $_->{kind} eq 'policy_group_pointer' } @{ $j->{events} };
is_deeply [ sort keys %pointer_groups ], ['staging'], "a reader limited to staging sees only staging's pointer events";
($r, $j) = admin('GET', "$base/events?since=0&page_size=1000");
%pointer_groups = map { ($_->{name} =~ m{^([^/]+)/})[0] => 1 } grep { $_->{kind} eq 'policy_group_pointer' } @{ $j->{events} };
ok $pointer_groups{prod} && $pointer_groups{dev}, '  (the admin sees them all)';

# ---- a group name that is no group name is refused before a pattern meets it ----
($r, $j) = $s->api('GET', "$base/policy_groups/dev%2F..%2Fprod", undef, $token{ci});
is $r->{status}, 400, 'GET policy_groups/dev%2F..%2Fprod: 400';
($r, $j) = admin('POST', "$base/users", { username => 'ci', roles => ['operator'], policy_groups => { operator => [ map { 'g' x 250 . $_ } 1 .. 20 ] } });
is $r->{status}, 400, 'patterns over 4096 characters in all: 400';
like PurserStack::error_message($j), qr/Field 'policy_groups\.operator' invalid: at most 4096 characters/, '  naming the field';

# ---- the policy file: a role's policy_groups are checked when it loads ----
{
    my $bad = $s->dir . '/bad-policy.yaml';
    open my $in, '<', PurserStack::root() . '/policies/default.yaml' or die;
    my $text = do { local $/; <$in> };
    $text =~ s/      - prod-\*\n/      - prod\/x\n/ or die 'the release role changed';
    open my $out, '>', $bad or die;
    print $out $text;
    close $out;
    my $conf = $s->dir . '/bad.yaml';
    open my $cin, '<', $s->dir . '/purser.yaml' or die;
    my $c = do { local $/; <$cin> };
    $c =~ s/^(\s*policy_file:).*$/$1 $bad/m or $c .= "auth:\n  policy_file: $bad\n";
    open my $cout, '>', $conf or die;
    print $cout $c;
    close $cout;
    my $out_text = `'@{[PurserStack::build()]}/purser' -c '$conf' check-config 2>&1`;
    isnt $?, 0, 'check-config refuses a role whose policy_groups has a bad pattern';
    like $out_text, qr/policy\.roles\.release\.policy_groups\[1\]: 'prod\/x' is not a policy group name or pattern/, '  naming it';
}

# ---- export carries the limits ----
($r) = admin('POST', "$base/users", { username => 'ci', roles => ['operator'], policy_groups => { operator => ['dev*', 'staging'] } });
$r = $s->request('GET', "$base/export", { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') } });
like $r->{content}, qr/kind: Member\n(?:(?!---).*\n)*?\s+name: ci\n(?:(?!---).*\n)*?\s+policy_groups:\n\s+operator:\n\s+- dev\*\n\s+- staging/,
    "the export's Member ci carries its policy_groups";

PurserStack::finish();

#!/usr/bin/perl
# 4011: a limit binds the roles its holder grants (issue 49). A member manager limited to dev*
# grants no role that reaches further than it: a role granted without policy_groups is limited
# to the manager's groups (validator, node, reader, operator, cluster: whether or not the role
# holds a policy group action), and so is a role held before on every group; one held on fewer
# keeps its limit; a limit given must be within the manager's, null (lifting it) is refused, and
# a role whose own groups (release: prod, prod-*, production) have none in common with the
# manager's is 403 naming the role, with nothing written. Each grantee's credentials are used as
# they would be (its token, and the client a validator so made registers, signed) and reach dev
# and not prod. An unlimited admin and a server admin grant as before.
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
my $json = JSON::PP->new->canonical;

sub lock_for { PurserStack::lock_for(@_) }
sub admin { $s->api(@_) }
sub status_of { ($s->api(@_))[0]{status} }
sub err { PurserStack::error_message(@_) }
sub keyfile { $s->key_file(@_) }
sub signed { $s->signed(@_) }
sub as_signed { my ($name, $file) = @_; return sub { signed($name, $file, @_) } }
sub as_bearer { my ($t) = @_; return sub { my ($res, $data) = $s->api(@_[0 .. 2], $t); ($res->{status}, $data) } }
# The member's limits as the member list shows them: {role: [patterns]}.
sub limits_of {
    my ($user) = @_;
    my ($r, $j) = admin('GET', "$base/users");
    my ($m) = grep { $_->{user}{username} eq $user } @$j;
    return $m ? ($m->{user}{policy_groups} // {}) : undef;
}
sub roles_of {
    my ($user) = @_;
    my ($r, $j) = admin('GET', "$base/users");
    my ($m) = grep { $_->{user}{username} eq $user } @$j;
    return $m ? $m->{user}{roles} : [];
}
my %token;
sub user {
    my ($name) = @_;
    my ($r, $j) = admin('POST', '/users', { username => $name });
    die "user $name: $r->{status}\n" unless $r->{status} == 201;
    ($r, $j) = admin('POST', "/users/$name/tokens", {});
    $token{$name} = $j->{token};
}
# What a credential reaches: dev's lock and not prod's.
sub reach {
    my ($label, $request) = @_;
    my ($code, $body) = $request->('GET', "$base/policy_groups/dev/policies/web");
    is $code, 200, "$label: fetches dev's lock";
    ($code, $body) = $request->('GET', "$base/policy_groups/prod/policies/web");
    is $code, 403, "$label: not prod's";
}

is status_of('PUT', "$base/policy_groups/dev/policies/web", lock_for('d1')), 201, 'dev points web at d1';
is status_of('PUT', "$base/policy_groups/prod/policies/web", lock_for('p1')), 201, 'prod points web at p1';

user('la');
my ($r, $j) = admin('POST', "$base/users", { username => 'la', roles => ['admin'], policy_groups => { admin => ['dev*'] } });
is $r->{status}, 201, 'la: admin limited to dev*';
user('ua');
is status_of('POST', "$base/users", { username => 'ua', roles => ['admin'] }), 201, 'ua: an unlimited admin';

# ---- every role la grants without a limit reaches dev* only ----
for my $role (qw(validator node reader operator cluster)) {
    my $who = "g-$role";
    user($who);
    ($r, $j) = $s->api('POST', "$base/users", { username => $who, roles => [$role] }, $token{la});
    is $r->{status}, 201, "la grants $role to $who without policy_groups";
    is_deeply $j->{user}{policy_groups}, { $role => ['dev*'] }, '  the answer shows it limited to dev*';
    is_deeply limits_of($who), { $role => ['dev*'] }, '  and so does the member list';
}
($r, $j) = $s->api('POST', "$base/clients", { name => 'via-granted' }, $token{'g-validator'});
is $r->{status}, 201, 'the validator la granted registers a client with its token';
my $via = keyfile('via-granted', $j->{private_key});
reach('  the client, signed', as_signed('via-granted', $via));
my ($st, $d) = signed('via-granted', $via, 'GET', "$base/permissions");
is_deeply $d->{policy_groups}{read_policy_group}, ['dev*'], "  its node role holds dev* only";
($r, $j) = $s->api('POST', "$base/clients", { name => 'via-granted-v', validator => JSON::PP::true }, $token{'g-validator'});
is $r->{status}, 201, '  and registers a validator';
my $via_v = keyfile('via-granted-v', $j->{private_key});
($st, $d) = signed('via-granted-v', $via_v, 'POST', "$base/clients", { name => 'via-via' });
is $st, 201, '  which registers a client in turn';
reach('  that client, signed', as_signed('via-via', keyfile('via-via', $d->{private_key})));
reach('a node la granted, its token', as_bearer($token{'g-node'}));
reach('a reader la granted, its token', as_bearer($token{'g-reader'}));
reach('an operator la granted, its token', as_bearer($token{'g-operator'}));
is status_of('POST', "$base/nodes", { name => 'op-prod', policy_name => 'web', policy_group => 'prod' }, $token{'g-operator'}), 403,
    '  which creates no node in prod';
reach('a cluster credential la granted, its token', as_bearer($token{'g-cluster'}));

# ---- a role held on more is narrowed; one held on less keeps its limit ----
user('wide');
is status_of('POST', "$base/users", { username => 'wide', roles => ['validator'] }), 201, 'the admin grants wide an unlimited validator';
($r, $j) = $s->api('POST', "$base/users", { username => 'wide', roles => ['validator'] }, $token{la});
is $r->{status}, 201, '  la grants it again';
is_deeply limits_of('wide'), { validator => ['dev*'] }, '  now limited to dev*';
user('narrow');
is status_of('POST', "$base/users", { username => 'narrow', roles => ['validator'], policy_groups => { validator => ['dev-1', 'prod'] } }), 201,
    'the admin grants narrow a validator on dev-1 and prod';
($r, $j) = $s->api('POST', "$base/users", { username => 'narrow', roles => ['validator'] }, $token{la});
is $r->{status}, 201, '  la grants it again';
is_deeply limits_of('narrow'), { validator => ['dev-1'] }, '  now dev-1 only (what both reach)';

# ---- refused: a limit lifted, one beyond, a role with nothing in common ----
user('other');
my $before = $json->encode(limits_of('wide'));
($r, $j) = $s->api('POST', "$base/users", { username => 'wide', roles => ['validator'], policy_groups => { validator => undef } }, $token{la});
is $r->{status}, 403, 'la may not lift a limit (policy_groups: {validator: null})';
like err($j), qr/policy_groups\.validator.*reaches only policy groups dev\*.*may not be lifted/, '  saying why';
is $json->encode(limits_of('wide')), $before, '  and the grant is unchanged';
($r, $j) = $s->api('POST', "$base/users", { username => 'other', roles => ['validator'], policy_groups => { validator => ['prod'] } }, $token{la});
is $r->{status}, 403, 'nor grant a validator on prod';
like err($j), qr/'prod' is beyond your own policy groups \(dev\*\)/, '  naming the pattern';
($r, $j) = $s->api('POST', "$base/users", { username => 'other', roles => ['reader', 'release'] }, $token{la});
is $r->{status}, 403, 'nor release (its own groups prod, prod-*, production), even beside reader';
like err($j), qr/release/, '  naming the role';
like err($j), qr/none in common/, '  and why';
is_deeply roles_of('other'), [], '  and other is no member: nothing was written';
ok scalar(grep { /access denied/ && /"principal":"la"/ && /"action":"write_members"/ } $s->log_lines('purser-fcgi.log')),
    '  the refusal is logged';

# ---- an unlimited admin and a server admin grant what they ask ----
user('free1');
($r, $j) = $s->api('POST', "$base/users", { username => 'free1', roles => ['validator'] }, $token{ua});
is $r->{status}, 201, 'the unlimited admin ua grants a validator';
ok !exists $j->{user}{policy_groups}, '  without a limit';
is_deeply limits_of('free1'), {}, '  as the member list shows';
($r, $j) = $s->api('POST', "$base/clients", { name => 'free-client' }, $token{free1});
my $free = keyfile('free-client', $j->{private_key});
($st) = signed('free-client', $free, 'GET', "$base/policy_groups/prod/policies/web");
is $st, 200, "  and the client it registers reads prod's lock";
user('free2');
($r, $j) = admin('POST', "$base/users", { username => 'free2', roles => ['release'] });
is $r->{status}, 201, 'the server admin grants release';
is_deeply limits_of('free2'), {}, '  with the role its own groups, none on the membership';

PurserStack::finish();

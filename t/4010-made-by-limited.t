#!/usr/bin/perl
# 4010: a limit binds what its holder makes (issue 49 item 2). Every credential a member limited
# to dev* can make reaches no further than its maker: a key added to a client (refused for a
# client that reaches further: an unlimited node client, a validator, a client with a node in
# prod), a new client (its node or validator role limited to dev*, and what that validator makes
# too), a cluster's bootstrap token (made or reset: the credential its redemption makes holds the
# cluster role on dev* only), the member's own token, and nodes. Each is used as it would be: a
# bearer token, a Chef-signed request, git (a cluster's catalog) and the event feed, and each
# reaches dev and not prod. And a reader limited to dev* sees in the nodes list no prod node's
# revision_id (issue 49 item 3): the node is listed (read_node is not limited to groups), what
# prod points at is not. What an operator sees of it: a client's limits (its GET, beyond Chef's
# fields when it has some), its roles and limits (its envelope's status), neither changed by a
# PATCH or PUT of it, and a cluster's bootstrap token's limit in the cluster's status.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use JSON::PP;
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org";
my $url = $s->url;
my $work = tempdir('purser-made-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new->canonical;

sub lock_for { PurserStack::lock_for(@_) }
sub admin { $s->api(@_) }
sub status_of { ($s->api(@_))[0]{status} }
sub err { PurserStack::error_message(@_) }
sub keyfile { $s->key_file(@_) }
sub signed { $s->signed(@_) }
sub node { my ($name, $group) = @_; return { name => $name, policy_name => 'web', policy_group => $group } }

# dev and prod point web at different revisions; a node of an unlimited client runs in prod.
is status_of('PUT', "$base/policy_groups/dev/policies/web", lock_for('d1')), 201, 'dev points web at d1';
is status_of('PUT', "$base/policy_groups/prod/policies/web", lock_for('p1')), 201, 'prod points web at p1';
my ($r, $j) = admin('POST', "$base/clients", { name => 'prod-web1' });
is $r->{status}, 201, 'an unlimited node client prod-web1 (as knife bootstrap makes one)';
my $prod_web1_key = keyfile('prod-web1', $j->{private_key});
my ($st, $d) = signed('prod-web1', $prod_web1_key, 'POST', "$base/nodes", node('prod-web1', 'prod'));
is $st, 201, '  which registers its node in prod';
is status_of('POST', "$base/clusters", { metadata => { name => 'c-prod' }, spec => { git_repo => { type => 'auto' } } }), 201,
    "the admin's cluster c-prod";

# ---- the limited members ----
my (%token, %key);
sub member {
    my ($name, $role) = @_;
    my ($res, $data) = admin('POST', '/users', { username => $name });
    die "user $name: $res->{status}\n" unless $res->{status} == 201;
    $key{$name} = keyfile($name, $data->{private_key});
    ($res) = admin('POST', "$base/users", { username => $name, roles => [$role], policy_groups => { $role => ['dev*'] } });
    is $res->{status}, 201, "$name: $role limited to dev*";
    ($res, $data) = admin('POST', "/users/$name/tokens", {});
    $token{$name} = $data->{token};
}
member('la', 'admin');
member('lo', 'operator');
member('lr', 'reader');

# What a credential reaches: the dev lock and not prod's, dev nodes and not prod ones.
# reach(LABEL, REQUEST) with REQUEST->(METHOD, PATH, BODY) answering (status, body).
my $nodes = 0;
sub reach {
    my ($label, $request, %o) = @_;
    my ($code, $body) = $request->('GET', "$base/policy_groups/dev/policies/web");
    is $code, 200, "$label: fetches dev's lock";
    ($code, $body) = $request->('GET', "$base/policy_groups/prod/policies/web");
    is $code, 403, "$label: not prod's";
    is_deeply $body, { error => ['missing read permission'] }, "  in Chef's words";
    return unless $o{nodes};
    my $name = 'n' . ++$nodes;
    ($code) = $request->('POST', "$base/nodes", node($name, 'prod'));
    is $code, 403, "$label: creates no node in prod";
    ($code) = $request->('POST', "$base/nodes", node($name, 'dev'));
    is $code, 201, "$label: creates one in dev";
    ($code) = $request->('PUT', "$base/nodes/$name", node($name, 'prod'));
    is $code, 403, "$label: may not move its own node to prod";
    is +(admin('GET', "$base/nodes/$name"))[1]{policy_group}, 'dev', '  which stays in dev';
    ($code) = $request->('PUT', "$base/nodes/$name", node($name, 'dev-2'));
    is $code, 200, "$label: moves it within dev*";
}
sub as_signed { my ($name, $file) = @_; return sub { signed($name, $file, @_) } }
sub as_bearer { my ($t) = @_; return sub { my ($res, $data) = $s->api(@_[0 .. 2], $t); ($res->{status}, $data) } }

# ---- 1. a key on a client ----
($r, $j) = admin('GET', "$base/clients/prod-web1/keys");
my $keys_before = $json->encode($j);
($r, $j) = $s->api('POST', "$base/clients/prod-web1/keys", { name => 'extra', create_key => JSON::PP::true, expiration_date => 'infinity' }, $token{la});
is $r->{status}, 403, 'la may not add a key to the unlimited node client prod-web1 (bearer)';
like err($j), qr/client 'prod-web1' reaches further than you: its role node holds every policy group/, '  saying why';
($st, $d) = signed('la', $key{la}, 'POST', "$base/clients/prod-web1/keys", { name => 'extra', create_key => JSON::PP::true, expiration_date => 'infinity' });
is $st, 403, '  nor signed as la';
($st, $d) = signed('la', $key{la}, 'PUT', "$base/clients/prod-web1/keys/default", { name => 'default', expiration_date => 'infinity', public_key => do {
    my ($res, $data) = admin('GET', "$base/clients/prod-web1/keys/default"); $data->{public_key} } });
is $st, 403, '  nor replace its key';
is $json->encode((admin('GET', "$base/clients/prod-web1/keys"))[1]), $keys_before, "  and prod-web1's keys are unchanged";
is +(admin('GET', "$base/nodes/prod-web1"))[1]{policy_group}, 'prod', '  and its node stays in prod';
($r, $j) = admin('POST', "$base/clients", { name => 'org-validator2', validator => JSON::PP::true });
($r, $j) = $s->api('POST', "$base/clients/org-validator2/keys", { name => 'extra', create_key => JSON::PP::true, expiration_date => 'infinity' }, $token{la});
is $r->{status}, 403, 'nor to an unlimited validator (what it registers would be unlimited)';
like err($j), qr/its role validator holds every policy group/, '  saying why';

# ---- 2. a new client ----
($r, $j) = $s->api('POST', "$base/clients", { name => 'dev-web1' }, $token{la});
is $r->{status}, 201, 'la creates the client dev-web1';
my $dev_web1 = keyfile('dev-web1', $j->{private_key});
($st, $d) = signed('dev-web1', $dev_web1, 'GET', "$base/permissions");
is_deeply $d->{policy_groups}{read_policy_group}, ['dev*'], "  its node role is limited to la's dev*";
# what an operator sees of it: its limited roles (GET), its roles and their limits (the envelope's status)
($r, $j) = admin('GET', "$base/clients/dev-web1");
is_deeply $j->{policy_groups}, { node => ['dev*'] }, "  GET .../clients/dev-web1 shows its limited role and la's limit";
is $j->{json_class}, 'Chef::ApiClient', "  in Chef's client (whose tools ignore what they do not know)";
($r, $j) = admin('GET', "$base/clients/prod-web1");
is_deeply [ sort keys %$j ], [qw(chef_type clientname json_class name orgname validator)], "  an unlimited client: Chef's shape, nothing more";
($r, $j) = admin('GET', "$base/clients?page_size=100");
my %client_item = map { $_->{metadata}{name} => $_ } @{ $j->{items} };
is_deeply $client_item{'dev-web1'}{status}, { roles => ['node'], policy_groups => { node => ['dev*'] } }, '  and so does the page of Client envelopes, in status';
is_deeply $client_item{'prod-web1'}{status}, { roles => ['node'], policy_groups => {} }, '  (prod-web1: none)';
($r, $j) = admin('GET', "$base/clients/dev-web1");
my $client_etag = $r->{headers}{etag};
($r, $j) = $s->api('PATCH', "$base/clients/dev-web1", { policy_groups => undef });
is $r->{status}, 400, '  a merge patch may not lift the limit it shows';
like err($j), qr/Field 'policy_groups' cannot be changed/, '  naming the field';
($r, $j) = $s->api('PATCH', "$base/clients/dev-web1", { roles => ['validator'] });
is $r->{status}, 400, '  nor change its roles';
($r, $j) = admin('GET', "$base/clients/dev-web1");
is_deeply [ $r->{headers}{etag}, $j->{policy_groups} ], [ $client_etag, { node => ['dev*'] } ], '  and the client is unchanged';
($r, $j) = $s->api('PATCH', "$base/clients/dev-web1", { labels => { tier => 'web' } });
is $r->{status}, 200, '  a merge patch of its labels is accepted (what GET showed of roles is left as it was)';
($r, $j) = $s->api('PUT', "$base/clients/dev-web1", { name => 'dev-web1', validator => JSON::PP::false, roles => ['admin'], policy_groups => undef });
is $r->{status}, 200, "  a PUT of Chef's client (as knife edit sends back what it read) is accepted";
is_deeply $j->{policy_groups}, { node => ['dev*'] }, '  and the limit is not its to change';
reach('a client la made, signed', as_signed('dev-web1', $dev_web1), nodes => 1);
($st) = signed('dev-web1', $dev_web1, 'GET', "$base/events"); # (signed: no query)
is $st, 403, '  and it reads no event feed (the node role has no read_events)';
($r, $j) = $s->api('POST', "$base/clients/dev-web1/keys", { name => 'second', create_key => JSON::PP::true, expiration_date => 'infinity' }, $token{la});
is $r->{status}, 201, 'la adds a key to the client it made';
my $dev_web1_second = keyfile('dev-web1-second', $j->{private_key});
reach('signed with the added key', as_signed('dev-web1', $dev_web1_second));
# a client within dev* whose node was moved to prod (by the admin) could move it back out
is status_of('PUT', "$base/nodes/n1", node('n1', 'prod')), 200, "the admin moves dev-web1's node n1 to prod";
($r, $j) = $s->api('POST', "$base/clients/dev-web1/keys", { name => 'third', create_key => JSON::PP::true, expiration_date => 'infinity' }, $token{la});
is $r->{status}, 403, '  then la may not add a key to dev-web1';
like err($j), qr/client 'dev-web1' reaches further than you: it created a node in policy group 'prod'/, '  saying why';

($r, $j) = $s->api('POST', "$base/clients", { name => 'dev-validator', validator => JSON::PP::true }, $token{la});
is $r->{status}, 201, 'la creates a validator client';
my $dev_validator = keyfile('dev-validator', $j->{private_key});
($st, $d) = signed('dev-validator', $dev_validator, 'POST', "$base/clients", { name => 'via-validator' });
is $st, 201, '  which registers a client';
my $via_validator = keyfile('via-validator', $d->{private_key});
reach('a client registered by that validator, signed', as_signed('via-validator', $via_validator), nodes => 1);

# a maker whose actions are limited to groups with nothing in common makes nothing
($r) = admin('POST', '/users', { username => 'mixed' });
($r) = admin('POST', "$base/users", { username => 'mixed', roles => ['validator', 'reader'],
                                      policy_groups => { validator => ['qa'], reader => ['dev*'] } });
is $r->{status}, 201, 'mixed: validator on qa, reader on dev*';
($r, $j) = admin('POST', '/users/mixed/tokens', {});
my $mixed = $j->{token};
($r, $j) = $s->api('POST', "$base/clients", { name => 'by-mixed' }, $mixed);
is $r->{status}, 403, '  the node client it would make holds read_policy_group (dev*) and create_node (qa): 403';
like err($j), qr/none in common/, '  saying why';
is status_of('GET', "$base/clients/by-mixed"), 404, '  and no client was made';

# ---- 3. a cluster and the credential its bootstrap token makes ----
($r, $j) = $s->api('POST', "$base/clusters", { metadata => { name => 'c-dev' }, spec => { git_repo => { type => 'auto' } } }, $token{lo});
is $r->{status}, 201, 'lo registers the cluster c-dev';
is_deeply $j->{status}{bootstrap_token}{policy_groups}, ['dev*'], "  its status shows the pending token's limit (lo's)";
my $c_dev_token = $j->{bootstrap_token}{token};
($r, $j) = admin('GET', "$base/clusters/c-dev");
is_deeply $j->{status}{bootstrap_token}{policy_groups}, ['dev*'], '  so does GET .../clusters/c-dev';
($r, $j) = admin('GET', "$base/clusters/c-prod");
ok !exists $j->{status}{bootstrap_token}{policy_groups}, "  and the admin's cluster c-prod has no limit";
my ($m, $manifest) = $s->call('GET', "/install/bootstrap.json?token=$c_dev_token", undef, authorization => '');
is $m->{status}, 200, '  and redeems its bootstrap token';
($r, $j) = admin('GET', "$base/clusters/c-dev");
is_deeply [ defined $j->{status}{bootstrap_token}{redeemed_at}, $j->{status}{bootstrap_token}{policy_groups} ], [ 1, ['dev*'] ],
    '  redeemed, its status still says which groups the credential it made holds';
($r, $j) = admin('GET', "$base/clients/c-dev");
is_deeply $j->{policy_groups}, { cluster => ['dev*'] }, '  as the client c-dev shows';
reach("c-dev's credential, bearer", as_bearer($manifest->{token}));
my $c_dev_key = keyfile('c-dev', $manifest->{client}{private_key});
reach("c-dev's credential, signed", as_signed('c-dev', $c_dev_key));
($r) = $s->api('GET', "$base/events?since=0", undef, $manifest->{token});
is $r->{status}, 403, '  it reads no event feed (the cluster role has no read_events)';

$s->git_env($work);
sub git { PurserStack::git(@_) }
my ($gst, $gout) = git($manifest->{token}, 'ls-remote', "$url/git/$org/catalogs/c-dev.git");
is $gst, 0, "git: c-dev's credential fetches its own catalog" or diag $gout;
($gst, $gout) = git($manifest->{token}, 'ls-remote', "$url/git/$org/catalogs/c-prod.git");
isnt $gst, 0, "  and not c-prod's";

# a reset by the limited operator: the new credential is the operator's making
($r, $j) = $s->api('POST', "$base/clusters/c-prod/bootstrap-token", undef, $token{lo});
is $r->{status}, 201, "lo resets the admin's cluster c-prod's bootstrap token";
is_deeply $j->{status}{bootstrap_token}{policy_groups}, ['dev*'], "  its status now shows lo's limit";
($m, $manifest) = $s->call('GET', "/install/bootstrap.json?token=$j->{bootstrap_token}{token}", undef, authorization => '');
is $m->{status}, 200, '  and redeems it';
reach("c-prod's credential made by lo, bearer", as_bearer($manifest->{token}));
($r, $j) = admin('GET', "$base/clients/c-prod");
my $c_prod_etag = $r->{headers}{etag};
is_deeply $j->{policy_groups}, { cluster => ['dev*'] }, '  the client c-prod shows the limit';
($r, $j) = admin('POST', "$base/clusters/c-prod/bootstrap-token");
ok !exists $j->{status}{bootstrap_token}{policy_groups}, '  reset by the admin: no limit in its status';
($m, $manifest) = $s->call('GET', "/install/bootstrap.json?token=$j->{bootstrap_token}{token}", undef, authorization => '');
is status_of('GET', "$base/policy_groups/prod/policies/web", undef, $manifest->{token}), 200,
    "  reset and redeemed again by the admin: it reads prod's lock (the limit is its maker's)";
($r, $j) = admin('GET', "$base/clients/c-prod");
ok !exists $j->{policy_groups}, '  and the client c-prod shows none';
isnt $r->{headers}{etag}, $c_prod_etag, '  under a new ETag (a GET with the old one is not 304)';

# ---- 4. the member's own token, and its own key ----
($r, $j) = $s->api('POST', '/users/lo/tokens', { description => 'ci' }, $token{lo});
is $r->{status}, 201, 'lo makes itself a token';
my $lo_token = $j->{token};
reach("lo's new token", as_bearer($lo_token), nodes => 1);
reach("lo's key, signed", as_signed('lo', $key{lo}), nodes => 1);
($r, $j) = $s->api('GET', "$base/events?since=0&page_size=1000", undef, $lo_token);
is $r->{status}, 200, "  lo's token reads the event feed";
my %groups = map { ($_->{name} =~ m{^([^/]+)})[0] => 1 }
    grep { $_->{kind} =~ /^policy_group/ } @{ $j->{events} };
ok $groups{dev} && !$groups{prod}, "  with dev's pointer events and none of prod's";
($gst, $gout) = git($lo_token, 'ls-remote', "$url/git/$org.git");
is $gst, 0, "git: lo's token fetches the document history as lo does (documents are not limited by policy group)" or diag $gout;

# ---- 5. nodes ----
is status_of('POST', "$base/nodes", node('la-prod', 'prod'), $token{la}), 403, 'la creates no node in prod';
is status_of('POST', "$base/nodes", node('la-dev', 'dev'), $token{la}), 201, '  one in dev';
is status_of('PUT', "$base/nodes/prod-web1", node('prod-web1', 'dev'), $token{la}), 403, "  and moves no prod node to dev";

# ---- the nodes list of a reader limited to dev* ----
($r, $j) = $s->api('GET', "$base/nodes?page_size=100", undef, $token{lr});
is $r->{status}, 200, 'lr lists the nodes as pages';
my %item = map { $_->{name} => $_ } @{ $j->{items} };
ok $item{'prod-web1'}, '  prod-web1 is listed (read_node)';
ok !exists $item{'prod-web1'}{revision_id}, "  without its revision_id: what prod points at";
is $item{'la-dev'}{revision_id}, 'd1', "  a dev node with dev's revision";
($r, $j) = admin('GET', "$base/nodes?page_size=100");
%item = map { $_->{name} => $_ } @{ $j->{items} };
is $item{'prod-web1'}{revision_id}, 'p1', "  (the admin sees prod's)";

# ---- what a limited admin may not undo: an unlimited member, an export of every group ----
is status_of('POST', '/users', { username => 'boss' }), 201, 'a user boss';
is status_of('POST', "$base/users", { username => 'boss', roles => ['admin'] }), 201, '  an unlimited admin of the organization';
($r, $j) = $s->api('DELETE', "$base/users/boss", undef, $token{la});
is $r->{status}, 403, 'la removes no member who holds more than it could grant (who holds prod)';
like err($j), qr/member 'boss' reaches further than you/, '  saying why';
($r, $j) = admin('GET', "$base/users");
ok((grep { ($_->{user}{username} // '') eq 'boss' } @{ ref $j eq 'ARRAY' ? $j : [] }), '  boss is still a member')
    or diag explain $j;
is status_of('POST', '/users', { username => 'dev-hand' }), 201, 'a user dev-hand';
is status_of('POST', "$base/users", { username => 'dev-hand', roles => ['operator'], policy_groups => { operator => ['dev*'] } }), 201,
    '  an operator of dev*';
is status_of('DELETE', "$base/users/dev-hand", undef, $token{la}), 200, '  whom la may remove';
($r, $j) = $s->api('GET', "$base/export", undef, $token{la});
is $r->{status}, 403, 'la exports nothing: an export holds every group (prod\'s pointer among them)';
unlike $r->{content} // '', qr/p1/, '  nothing of prod in the refusal';
is status_of('GET', "$base/export"), 200, '  (an unlimited admin exports)';

# ---- a user keeps what a server admin set on it (its expiry, whether it is active) ----
is status_of('POST', '/users', { username => 'temp' }), 201, 'a user temp';
my (undef, $tj) = admin('POST', '/users/temp/tokens', { description => 'its own' });
my $temp = $tj->{token};
my @t = gmtime(time + 7200);
my $soon = sprintf '%04d-%02d-%02dT%02d:%02d:%02dZ', $t[5] + 1900, $t[4] + 1, @t[3, 2, 1, 0];
my %patch = ('content-type' => 'application/merge-patch+json');
($r) = $s->call('PATCH', '/users/temp', { expires => $soon }, %patch);
is $r->{status}, 200, 'the server admin makes temp expire in two hours';
for my $change ({ expires => undef }, { expires => '2099-01-01T00:00:00Z' }, { active => JSON::PP::false }) {
    my $what = $json->encode($change);
    ($r, $j) = $s->call('PATCH', '/users/temp', $change, %patch, authorization => "Bearer $temp");
    is $r->{status}, 403, "temp's own PATCH $what: 403";
    like err($j), qr/a user does not change its own; a server admin does/, '  saying who does';
}
($r, $j) = admin('GET', '/users/temp');
ok defined $j->{expires} && $j->{expires} =~ /^\Q${\ substr($soon, 0, 16)}/, '  its expiry as the admin set it' or diag explain $j;
($r) = $s->call('PATCH', '/users/temp', { display_name => 'Temp', expires => $j->{expires} }, %patch,
    authorization => "Bearer $temp");
is $r->{status}, 200, '  what is its own it still changes (the expiry given as it is)';

# ---- a refusal is logged ----
ok scalar(grep { /access denied/ && /"principal":"la"/ && /"action":"update_client"/ } $s->log_lines('purser-fcgi.log')),
    'a refused key is logged as a denial of update_client';

PurserStack::finish();

#!/usr/bin/perl
# 6011: facts you can query (issue 35 item 4): filters over clusters' dynamic facts (==, != and
# version comparisons: 1.9 < 1.29 < 1.30, a "v" and a build suffix taken in stride, a
# pre-release before its release), with labels and static facts, on keyset pages, answered from
# the facts' index (and the migration that fills it from the facts clusters already had); the
# server-wide cluster list of server admins (every organization's clusters, narrowed by
# organization, paged across organizations that reuse a name; 403 for anyone else); and the
# per-cluster spec.api_endpoint and spec.token_lifetime, validated naming the field and honoured
# by the bootstrap token (its expiry at creation and reset, its redemption) and the manifest.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;
use Time::HiRes qw(time sleep);
use Time::Local qw(timegm);

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org/clusters";

sub call { $s->call(@_) }
sub err { PurserStack::error_message(@_) }
sub esc { my ($t) = @_; $t =~ s/([^A-Za-z0-9._~-])/sprintf('%%%02X', ord $1)/ge; $t }
sub epoch { my ($t) = @_; $t =~ /^(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)Z$/ or return -1; timegm($6, $5, $4, $3, $2 - 1, $1) }

# The names a filtered list answers, every page followed (page_size 100 unless given).
sub names {
    my ($query, %o) = @_;
    my ($path, @names, %seen, $token) = ($o{path} // $base);
    for (1 .. 200) {
        my $q = $query . (defined $token ? '&page_token=' . esc($token) : '');
        my ($r, $d) = call('GET', "$path?$q", undef, %{ $o{headers} // {} });
        return "status $r->{status}: " . err($d) if $r->{status} != 200;
        push @names, map { $o{org} ? "$_->{metadata}{organization}/$_->{metadata}{name}" : $_->{metadata}{name} } @{ $d->{items} };
        return [ "page of " . scalar(@{ $d->{items} }) ] if $o{size} && @{ $d->{items} } > $o{size};
        $token = $d->{next_page_token};
        last unless length $token;
    }
    return \@names;
}
sub filtered { names('filter=' . esc($_[0]) . ($_[1] // '')) }

sub cluster {
    my ($name, $labels, $facts, $path) = @_;
    $s->must("cluster $name", 'POST', $path // $base, { metadata => { name => $name, labels => $labels // {} },
        spec => { facts => { region => $name =~ /k19|k30/ ? 'us' : 'eu' } } });
    $s->must("facts of $name", 'PUT', ($path // $base) . "/c-$name/facts", $facts) if $facts;
}
sub k8s { my ($v, %more) = @_; return { kubernetes_version => { gitVersion => $v, major => '1' }, %more } }

# ---- dynamic facts: equality, !=, versions ----
cluster('k19', { env => 'prod' }, k8s('v1.9.11', nodes => 3));
cluster('k29', { env => 'prod' }, k8s('v1.29.3+k3s1', nodes => 12, ingress => { hosts => ['shop.example.com', 'api.example.com'] }));
cluster('k29b', { env => 'dev' }, k8s('1.29.0', nodes => 5, ready => JSON::PP::true));
cluster('k30', { env => 'prod' }, k8s('v1.30.0', nodes => 40));
cluster('k30rc', { env => 'dev' }, k8s('v1.30.0-rc.1'));
cluster('text', { env => 'prod' }, k8s('unknown'));
cluster('bare', { env => 'prod' });

my $gv = 'dynamic_facts.kubernetes_version.gitVersion';
is_deeply filtered("$gv==v1.29.3+k3s1"), ['c-k29'], 'dynamic_facts.<path>==value: the cluster whose fact has that text';
is_deeply filtered("$gv==v1.29.3"), [], '  exactly that text (== compares text, not versions)';
is_deeply filtered('dynamic_facts.ingress.hosts==api.example.com'), ['c-k29'], 'a value in a list: which cluster serves this Ingress host';
is_deeply filtered('dynamic_facts.nodes==12'), ['c-k29'], 'a number, as its JSON text';
is_deeply filtered('dynamic_facts.ready==true'), ['c-k29b'], 'a boolean, as true or false';
is_deeply filtered("$gv!=v1.30.0"), [qw(c-bare c-k19 c-k29 c-k29b c-k30rc c-text)],
    '!=: every cluster but those with that value (those without the fact too, as labels\' !=)';
is_deeply filtered("$gv>=v1.29"), [qw(c-k29 c-k29b c-k30 c-k30rc)], '>=v1.29: 1.9 is not (1.9 < 1.29, numerically), text and no fact are not';
is_deeply filtered("$gv<v1.29"), ['c-k19'], '<v1.29: 1.9 only';
is_deeply filtered("$gv>=v1.29;$gv<v1.30"), [qw(c-k29 c-k29b c-k30rc)],
    '>=v1.29;<v1.30: Kubernetes 1.29 (and 1.30.0-rc.1: a pre-release before its release)';
is_deeply filtered("$gv>v1.29.3"), [qw(c-k30 c-k30rc)], '>v1.29.3: the build suffix +k3s1 does not count';
is_deeply filtered("$gv<=1.29.3"), [qw(c-k19 c-k29 c-k29b)], '<=1.29.3: without the v too';
is_deeply filtered("$gv>1.30.0-rc.1"), ['c-k30'], '>1.30.0-rc.1: the release after its pre-release';
is_deeply filtered('dynamic_facts.nodes>=10'), [qw(c-k29 c-k30)], 'an integer compares as a number (12 and 40 >= 10, 3 and 5 not)';
is_deeply filtered('dynamic_facts.kubernetes_version.major==1;dynamic_facts.nodes<10'), [qw(c-k19 c-k29b)], 'conditions AND-ed';

# with labels, static facts, sort
is_deeply names('labels=env%3Dprod&filter=' . esc("$gv>=v1.29")), [qw(c-k29 c-k30)], 'with a label selector (env=prod)';
is_deeply names('labels=env!%3Dprod&filter=' . esc("$gv>=1.29")), [qw(c-k29b c-k30rc)], 'with a negative one';
is_deeply filtered("$gv>=v1.29;facts.region==eu"), [qw(c-k29 c-k29b)], 'with a static fact (c-k30 and c-k30rc are in us)';
is_deeply filtered("$gv>=v1.29", '&sort=-name'), [qw(c-k30rc c-k30 c-k29b c-k29)], 'sorted descending';

# refused, naming the filter
for my $bad (["$gv>=not-a-version", qr/filter: 'not-a-version' is not a version/],
             ['display_name>=x', qr/filter: .*dynamic_facts/],
             ['facts.region<x', qr/filter: .*dynamic_facts/],
             ['dynamic_facts.==x', qr/filter: .*path/],
             ['dynamic_facts.a..b==x', qr/filter: .*path/]) {
    my ($r, $d) = call('GET', "$base?filter=" . esc($bad->[0]));
    is $r->{status}, 400, "filter=$bad->[0]: 400";
    like err($d), $bad->[1], '  naming the filter';
}

# a new report replaces what the old one said
$s->must('facts again', 'PUT', "$base/c-k19/facts", k8s('v1.31.0'));
is_deeply filtered("$gv<v1.29"), [], 'a new report replaces the old facts in queries';
is_deeply filtered("$gv>=v1.31"), ['c-k19'], '  and is found by its own';
$s->must('facts back', 'PUT', "$base/c-k19/facts", k8s('v1.9.11', nodes => 3));

# answered from the index: a stored status changed behind purser's back is not read per row
$s->sql("UPDATE resources SET status = JSON_SET(status, '\$.dynamic_facts.nodes', 99) WHERE name = 'c-k29b'");
is_deeply filtered('dynamic_facts.nodes==5'), ['c-k29b'], 'the filter reads the facts\' index, not each row\'s JSON';
is $s->sql("SELECT COUNT(*) FROM resource_values v JOIN resources r ON r.id = v.resource_id WHERE r.name = 'c-k29' AND v.path = 'ingress.hosts'") + 0, 2,
    '  which holds a row per value of a list';
$s->must('facts back', 'PUT', "$base/c-k29b/facts", k8s('1.29.0', nodes => 5, ready => JSON::PP::true));

# ---- the migration fills the index from the facts clusters already had ----
cluster('edgecase', {}, '{"pre":"1.2.3-rc.1+b.7","V":"V2","f":0.1,"g.h":3.5,"u":"\\u00e9t\\u00e9","long":"' . ('a' x 200)
    . '","deep":[[["x",["y"]]]],"list":[{"a":1},{"a":2,"b":null}],"neg":-3,"five":"1.2.3.4.5","zeros":"01.002","no":false,'
    . '"":{"empty":"key"},"q\\"k":"quoted","big":"12345678901.1"}');
is_deeply filtered('dynamic_facts.list.a==2;dynamic_facts.deep==y;dynamic_facts.zeros>=1.2;dynamic_facts.zeros<=1.2.0'),
    ['c-edgecase'], 'lists of objects and of lists, leading zeros';
is_deeply filtered('dynamic_facts.pre<1.2.3;dynamic_facts.pre>=1.2.3-rc.1;dynamic_facts.V>1.99'), ['c-edgecase'], 'a pre-release with a build, a capital V';
is_deeply filtered('dynamic_facts.five>=1'), [], 'five numbers are not a version';
is_deeply filtered('dynamic_facts.long!=x;dynamic_facts.neg==-3;dynamic_facts.no==false;dynamic_facts.g.h==3.5'), ['c-edgecase'], 'negative numbers, false, a key with a dot';
my $indexed = $s->sql("SELECT resource_id, path, value, COALESCE(version, '-') FROM resource_values ORDER BY 1, 2, 3");
$s->sql("DELETE FROM resource_values; DELETE FROM schema_migrations WHERE version >= 18");
is_deeply filtered("$gv<v1.29"), [], 'with the index emptied, nothing is found';
my $migrate = `'@{[PurserStack::build()]}/purser' -c '@{[$s->dir]}/purser.yaml' migrate 2>&1`;
is $?, 0, 'purser migrate applies 0018 again' or diag $migrate;
is_deeply filtered("$gv<v1.29"), ['c-k19'], '  and it indexes the facts stored before it';
is_deeply filtered("$gv>=v1.29;$gv<v1.30"), [qw(c-k29 c-k29b c-k30rc)], '  versions as the server keys them';
is_deeply filtered('dynamic_facts.ingress.hosts==shop.example.com;dynamic_facts.nodes==12;dynamic_facts.ready!=true'), ['c-k29'], '  lists, numbers and booleans too';
is $s->sql("SELECT resource_id, path, value, COALESCE(version, '-') FROM resource_values ORDER BY 1, 2, 3"), $indexed,
    '  the very rows purser wrote with each report (the SQL and the C code key versions alike)';

# ---- pages through a filtered list ----
my @expected;
for my $i (1 .. 23) {
    my $name = sprintf 'p%02d', $i;
    my $minor = 20 + $i % 12; # 1.20 .. 1.31
    cluster($name, { env => $i % 2 ? 'prod' : 'dev' }, k8s("v1.$minor.$i"));
    push @expected, "c-$name" if $minor >= 25;
}
my $all = [ sort(@expected, qw(c-k29 c-k29b c-k30 c-k30rc)) ];
is_deeply names('page_size=3&filter=' . esc("$gv>=v1.25"), size => 3), $all,
    'pages of 3 through a version filter: every match once, in order (' . scalar(@$all) . ')';
is_deeply names('page_size=2&sort=-name&filter=' . esc("$gv>=v1.25"), size => 2), [ reverse @$all ], '  and descending';
is_deeply names('page_size=2&filter=' . esc('dynamic_facts.kubernetes_version.major==1;facts.region==eu'), size => 2),
    [ sort map { "c-$_" } 'k29', 'k29b', 'text', map { sprintf 'p%02d', $_ } 1 .. 23 ], 'pages of 2 through an equality';
my @prod = grep { my $n = substr($_, 3); $n % 2 } grep { /^c-p/ } @expected;
is_deeply names('page_size=2&labels=env%3Dprod&filter=' . esc("$gv>=v1.25;$gv<v1.40"), size => 2),
    [ sort(@prod, 'c-k29', 'c-k30') ], 'pages of 2 with a label selector and two comparisons';
{   # pages while clusters come and go: none that stays is repeated or skipped
    cluster('k25x', {}, k8s('v1.25.0'));
    my ($r, $d) = call('GET', "$base?page_size=4&filter=" . esc("$gv>=v1.25"));
    my @seen = map { $_->{metadata}{name} } @{ $d->{items} };
    is $seen[0], 'c-k25x', 'a first page of 4';
    call('DELETE', "$base/c-k25x");
    cluster('a00', {}, k8s('v1.28.0'));   # sorts before the page: not seen
    cluster('zz9', {}, k8s('v1.28.0'));   # after it: seen
    my $token = $d->{next_page_token};
    while (length $token) {
        ($r, $d) = call('GET', "$base?page_size=4&page_token=" . esc($token) . '&filter=' . esc("$gv>=v1.25"));
        push @seen, map { $_->{metadata}{name} } @{ $d->{items} };
        $token = $d->{next_page_token};
    }
    is_deeply \@seen, [ 'c-k25x', @$all, 'c-zz9' ], 'keyset pages while clusters come and go: none that stays repeated or skipped';
    call('DELETE', "$base/$_") for qw(c-a00 c-zz9);
}

# ---- the server-wide list ----
$s->must('org', 'POST', '/organizations', { name => 'acme', full_name => 'Acme' });
cluster('k29', { env => 'prod' }, k8s('v1.29.1'), '/organizations/acme/clusters');
cluster('edge', { env => 'dev' }, undef, '/organizations/acme/clusters');
my ($r, $d) = call('GET', '/clusters?page_size=1000');
is $r->{status}, 200, 'GET /clusters: 200 for a server admin';
my @everywhere = map { "$_->{metadata}{organization}/$_->{metadata}{name}" } @{ $d->{items} };
ok((grep { $_ eq "acme/c-edge" } @everywhere) && (grep { $_ eq "$org/c-k30" } @everywhere),
    '  every organization\'s clusters, each naming its organization');
is scalar(@everywhere), $s->sql("SELECT COUNT(*) FROM resources WHERE kind = 'cluster'") + 0, '  all of them';
is_deeply names('organization=acme', path => '/clusters', org => 1), ['acme/c-edge', 'acme/c-k29'], 'organization=acme: that organization\'s';
is_deeply names('organization=nosuch', path => '/clusters'), [], 'an organization that does not exist: none';
is_deeply names('page_size=1&filter=' . esc("$gv>=v1.29.1;$gv<=v1.29.3"), path => '/clusters', org => 1, size => 1),
    ["$org/c-k29", "acme/c-k29"], 'pages of 1 across organizations that reuse a name (the older organization first), with a facts filter';
is_deeply names('labels=env%3Ddev&organization=acme&filter=' . esc('facts.region==eu'), path => '/clusters', org => 1),
    ['acme/c-edge'], 'with a label selector and a static fact';
is_deeply names('page_size=2&sort=-name&organization=acme,' . $org . '&filter=' . esc("$gv>=v1.29.1;$gv<=v1.30.0"), path => '/clusters', org => 1, size => 2),
    ["$org/c-p21", "$org/c-p09", "$org/c-k30rc", "$org/c-k30", "acme/c-k29", "$org/c-k29"], 'two organizations, descending, pages of 2';
($r, $d) = call('GET', '/clusters?sort=color');
is $r->{status}, 400, 'a bad sort: 400';
$s->must('user', 'POST', '/users', { username => 'orgadmin' });
$s->must('member', 'POST', "/organizations/$org/users", { username => 'orgadmin', roles => ['admin'] });
my $t = $s->must('token', 'POST', '/users/orgadmin/tokens', {})->{token};
($r, $d) = call('GET', '/clusters', undef, authorization => "Bearer $t");
is $r->{status}, 403, 'an organization\'s admin who is no server admin: 403';
like err($d), qr/list_all_clusters/, '  naming the action';
($r) = call('GET', $base, undef, authorization => "Bearer $t");
is $r->{status}, 200, '  (its own organization\'s list answers)';

# ---- spec.api_endpoint and spec.token_lifetime: validated ----
my $count = $s->sql("SELECT COUNT(*) FROM resources WHERE kind = 'cluster'") + 0;
for my $bad (
    [{ api_endpoint => 'ftp://purser.example' }, qr/spec\.api_endpoint must be/],
    [{ api_endpoint => 'purser.example' }, qr/spec\.api_endpoint must be/],
    [{ api_endpoint => 'https://' }, qr/spec\.api_endpoint must be/],
    [{ api_endpoint => 'https://purser.example/a b' }, qr/spec\.api_endpoint must be/],
    [{ api_endpoint => 'https://user@purser.example' }, qr/spec\.api_endpoint must be/],
    [{ api_endpoint => 'https://purser.example/' . ('a' x 2100) }, qr/spec\.api_endpoint must be/],
    [{ api_endpoint => 7 }, qr/spec\.api_endpoint must be/],
    [{ token_lifetime => 0 }, qr/spec\.token_lifetime must be/],
    [{ token_lifetime => -60 }, qr/spec\.token_lifetime must be/],
    [{ token_lifetime => 2592001 }, qr/spec\.token_lifetime must be/],
    [{ token_lifetime => 1.5 }, qr/spec\.token_lifetime must be/],
    [{ token_lifetime => '31d' }, qr/spec\.token_lifetime must be/],
    [{ token_lifetime => '4 hours' }, qr/spec\.token_lifetime must be/],
    [{ token_lifetime => 'h' }, qr/spec\.token_lifetime must be/],
    [{ token_lifetime => '' }, qr/spec\.token_lifetime must be/],
    [{ token_lifetime => JSON::PP::true }, qr/spec\.token_lifetime must be/],
) {
    my ($r, $d) = call('POST', $base, { metadata => { name => 'bad' }, spec => $bad->[0] });
    my ($k, $v) = %{ $bad->[0] };
    is $r->{status}, 400, "spec.$k " . (ref $v ? 'true' : length $v > 40 ? 'too long' : "'$v'") . ': 400';
    like err($d), $bad->[1], '  naming the field';
}
is $s->sql("SELECT COUNT(*) FROM resources WHERE kind = 'cluster'") + 0, $count, 'none was stored';
my $kept = $s->must('endpoint', 'POST', $base, { metadata => { name => 'kept' }, spec => { api_endpoint => 'https://kept.example' } });
($r, $d) = call('PATCH', "$base/c-kept", { spec => { api_endpoint => 'gopher://x', token_lifetime => '1h' } },
    'content-type' => 'application/merge-patch+json', 'if-match' => '*');
is $r->{status}, 400, 'a patch with a bad api_endpoint: 400';
is $s->must('get', 'GET', "$base/c-kept")->{metadata}{revision}, $kept->{metadata}{revision}, '  the cluster unchanged';

# ---- honoured by the bootstrap token and the manifest ----
sub near { my ($at, $want, $what) = @_; ok abs(epoch($at) - $want) <= 3, "$what (expires_at $at, want " . (int($want) - int(time)) . ' s from now)' }
my $t0 = time;
($r, $d) = call('POST', $base, { metadata => { name => 'hour' }, spec => { token_lifetime => 3600, api_endpoint => 'https://purser.site-a.example:8443/api' } });
is $r->{status}, 201, 'a cluster with token_lifetime 3600 and an api_endpoint: 201';
is $d->{spec}{token_lifetime}, 3600, '  its spec as written';
near($d->{bootstrap_token}{expires_at}, $t0 + 3600, '  its token expires after its lifetime');
is $d->{status}{bootstrap_token}{expires_at}, $d->{bootstrap_token}{expires_at}, '  as its status says';
my $redeem = $d->{bootstrap_token}{token};
($r, $d) = call('POST', $base, { metadata => { name => 'four' }, spec => { token_lifetime => '4h' } });
near($d->{bootstrap_token}{expires_at}, time + 4 * 3600, 'token_lifetime "4h": 4 hours');
($r, $d) = call('POST', $base, { metadata => { name => 'mixed' }, spec => { token_lifetime => '1h30m15s' } });
near($d->{bootstrap_token}{expires_at}, time + 5415, 'token_lifetime "1h30m15s"');
($r, $d) = call('POST', $base, { metadata => { name => 'default' } });
near($d->{bootstrap_token}{expires_at}, time + 1800, 'without it: inventory.bootstrap_ttl (1800)');
my $at = $s->sql("SELECT DATE_FORMAT(b.expires_at, '%Y-%m-%dT%H:%i:%sZ') FROM bootstrap_tokens b JOIN resources r ON r.id = b.resource_id WHERE r.name = 'c-four'");
chomp $at;
near($at, time + 4 * 3600, 'the stored token expires then too');

($r, $d) = call('PATCH', "$base/c-four", { spec => { token_lifetime => '2m' } }, 'content-type' => 'application/merge-patch+json', 'if-match' => '*');
is $r->{status}, 200, 'token_lifetime changed to 2m';
($r, $d) = call('POST', "$base/c-four/bootstrap-token");
is $r->{status}, 201, 'a reset';
near($d->{bootstrap_token}{expires_at}, time + 120, '  expires after the new lifetime');
($r, $d) = call('POST', "$base/c-default/bootstrap-token");
near($d->{bootstrap_token}{expires_at}, time + 1800, '  and without one, after inventory.bootstrap_ttl');

($r, $d) = call('GET', "/install/bootstrap.json?token=$redeem", undef, authorization => '');
is $r->{status}, 200, 'redeemed';
is $d->{api_url}, 'https://purser.site-a.example:8443/api', '  the manifest\'s api_url is the cluster\'s api_endpoint';
($r, $d) = call('POST', "$base/c-default/bootstrap-token");
($r, $d) = call('GET', "/install/bootstrap.json?token=$d->{bootstrap_token}{token}", undef, authorization => '');
is $d->{api_url}, $s->url, '  and without one, the URL it was asked at';

($r, $d) = call('POST', $base, { metadata => { name => 'brief' }, spec => { token_lifetime => 1 } });
my $brief = $d->{bootstrap_token}{token};
sleep 2.2; # time itself: the token's lifetime passes
($r, $d) = call('GET', "/install/bootstrap.json?token=$brief", undef, authorization => '');
is $r->{status}, 401, 'a token past its cluster\'s lifetime of 1 s: 401';
is err($d), 'token already used or expired', '  "token already used or expired"';

PurserStack::finish();

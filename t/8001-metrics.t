# 8001: GET /metrics. Prometheus' own promtool accepts the text; the counters move as
# requests are made, whichever worker answers the scrape (they share one set of counters);
# routes are labelled by template, never by the raw path; authentication failures, RBAC
# denials, cache lookups, database reconnects and worker restarts are counted; a worker that
# is killed leaves its counts behind. (t/4003 holds the route to read_metrics when loopback
# clients are not let in.)
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

# workers retire after 40 to 50 requests: the counts must outlive them
my $s = PurserStack->new(workers => 2, max_requests => 50);
my $org = $s->env('PURSER_ORG');

sub scrape {
    my $r = $s->request('GET', '/metrics');
    die "GET /metrics: $r->{status} $r->{content}\n" unless $r->{status} == 200;
    return $r;
}

# value(TEXT, NAME, LABELS): the sample's value, labels given as a hash (all must match), or 0
sub value {
    my ($text, $name, %labels) = @_;
    for my $line (split /\n/, $text) {
        next unless $line =~ /^\Q$name\E(?:\{(.*)\})? (\S+)$/;
        my ($set, $v) = ($1 // '', $2);
        my %have = $set =~ /(\w+)="((?:[^"\\]|\\.)*)"/g;
        next if grep { ($have{$_} // "\0") ne $labels{$_} } keys %labels;
        next if keys %have != keys %labels;
        return $v;
    }
    return 0;
}

my $r = scrape();
like $r->{headers}{'content-type'}, qr{^text/plain; version=0\.0\.4}, 'the text format, version 0.0.4';
{
    my $file = $s->dir . '/metrics.txt';
    open my $out, '>', $file or die;
    print $out $r->{content};
    close $out;
    my $check = `promtool check metrics < '$file' 2>&1`;
    is $?, 0, "promtool check metrics accepts it" or diag $check;
}
like $r->{content}, qr/^purser_build_info\{version="[^"]+"\} 1$/m, 'build information';
is value($r->{content}, 'purser_workers'), 2, 'two workers alive';
my $text;

# ---- the database: connections killed under the workers are made again ----
$s->api('GET', "/organizations/$org/nodes") for 1 .. 4; # the workers connect
my $reconnects = value(scrape()->{content}, 'purser_db_reconnects_total');
my $errors = value(scrape()->{content}, 'purser_db_errors_total', kind => 'connection');
my $kill = $s->sql("SELECT GROUP_CONCAT(CONCAT('KILL ', id, ';') SEPARATOR ' ') FROM information_schema.processlist WHERE user = 'purser'");
like $kill, qr/KILL \d+/, "the workers' database connections, killed";
$s->sql($kill);
my @statuses;
# until a worker whose connection died has served a request (either may answer a given one)
PurserStack::wait_for(20, sub {
    push @statuses, ($s->api('GET', "/organizations/$org/nodes"))[0]{status};
    value(scrape()->{content}, 'purser_db_reconnects_total') > $reconnects });
is_deeply [ grep { $_ != 200 } @statuses ], [], 'after their connections were killed, the workers answer (' . @statuses . ' requests)';
$text = scrape()->{content};
ok value($text, 'purser_db_reconnects_total') > $reconnects, 'the reconnects are counted';
ok value($text, 'purser_db_errors_total', kind => 'connection') > $errors, '  and the lost connections as errors';


# ---- requests by route template, method and status; the latency histogram ----
my %nodes = (route => '/organizations/{org}/nodes', method => 'GET', status => '200');
my $before = value(scrape()->{content}, 'purser_http_requests_total', %nodes);
$s->must('a node', 'POST', "/organizations/$org/nodes", { name => 'metrics-node' });
for (1 .. 7) {
    my ($n) = $s->api('GET', "/organizations/$org/nodes");
    die "nodes: $n->{status}\n" unless $n->{status} == 200;
}
my ($missing) = $s->api('GET', "/organizations/no-such-org-xyz/nodes/zzz-raw-path");
my @seen = map { value(scrape()->{content}, 'purser_http_requests_total', %nodes) } 1 .. 6;
is_deeply \@seen, [ ($before + 7) x 6 ], 'seven more GETs of the node list, the same total in six scrapes through either worker';
$text = scrape()->{content};
is value($text, 'purser_http_requests_total', route => '/organizations/{org}/nodes', method => 'POST', status => '201'), 1,
    'the POST counted under its method and status';
ok value($text, 'purser_http_requests_total', route => '/organizations/{org}/nodes/{node}', method => 'GET',
    status => $missing->{status}) >= 1, "a request for a raw path counted under its template ($missing->{status})";
unlike $text, qr/no-such-org-xyz|zzz-raw-path/, 'no raw path in any label';
my $count = value($text, 'purser_http_request_duration_seconds_count', route => '/organizations/{org}/nodes', method => 'GET');
is $count, $before + 7, 'the histogram counts the same requests';
is value($text, 'purser_http_request_duration_seconds_bucket', route => '/organizations/{org}/nodes', method => 'GET', le => '+Inf'),
    $count, '  its +Inf bucket is the count';
ok value($text, 'purser_http_request_duration_seconds_sum', route => '/organizations/{org}/nodes', method => 'GET') > 0,
    '  and the sum of their seconds is above 0';
$s->request('GET', '/no/such/route');
ok value(scrape()->{content}, 'purser_http_requests_total', route => 'none', method => '-', status => '404') >= 1,
    'a path no route matches: route="none"';

# ---- authentication failures by reason, RBAC denials ----
my %auth = map { $_ => value(scrape()->{content}, 'purser_auth_failures_total', reason => $_) } qw(missing token chef_headers);
my $denied = value(scrape()->{content}, 'purser_rbac_denials_total');
$s->api('GET', "/organizations/$org/nodes", undef, '');
$s->api('GET', "/organizations/$org/nodes", undef, 'purser_not-a-token') for 1 .. 2;
$s->request('GET', "/organizations/$org/nodes", { headers => { 'X-Ops-UserId' => 'admin' } });
$s->must('an outsider', 'POST', '/users', { username => 'metrics-outsider' });
my $outsider = $s->must('its token', 'POST', '/users/metrics-outsider/tokens', {})->{token};
($r) = $s->api('GET', "/organizations/$org/nodes", undef, $outsider);
is $r->{status}, 403, 'an outsider is denied';
$text = scrape()->{content};
is value($text, 'purser_auth_failures_total', reason => 'missing'), $auth{missing} + 1, 'no credentials: reason="missing"';
is value($text, 'purser_auth_failures_total', reason => 'token'), $auth{token} + 2, 'a token that is not one, twice: reason="token"';
is value($text, 'purser_auth_failures_total', reason => 'chef_headers'), $auth{chef_headers} + 1, 'signed headers incomplete: reason="chef_headers"';
is value($text, 'purser_rbac_denials_total'), $denied + 1, 'the denial counted';

# every 401 and 403 is counted, not only those of the authentication and the RBAC check
{
    my $bootstrap = value($text, 'purser_auth_failures_total', reason => 'bootstrap_token') // 0;
    ($r) = $s->request('GET', '/install/bootstrap.json?token=' . ('0' x 64));
    is $r->{status}, 401, 'an unknown bootstrap token: 401';
    my $mine = $s->must('a cluster', 'POST', "/organizations/$org/clusters", { metadata => { name => 'm1' } });
    $s->must('another', 'POST', "/organizations/$org/clusters", { metadata => { name => 'm2' } });
    my ($res) = $s->request('GET', "/install/bootstrap.json?token=$mine->{bootstrap_token}{token}");
    my $cred = JSON::PP->new->decode($res->{content})->{token};
    my $before = value(scrape()->{content}, 'purser_rbac_denials_total');
    ($r) = $s->api('PUT', "/organizations/$org/clusters/c-m2/facts", { x => 1 }, $cred);
    is $r->{status}, 403, "a cluster's credential on another cluster's facts: 403 (the handler's check)";
    $text = scrape()->{content};
    is value($text, 'purser_auth_failures_total', reason => 'bootstrap_token'), $bootstrap + 1,
        '  the 401 counted: reason="bootstrap_token"';
    is value($text, 'purser_rbac_denials_total'), $before + 1, "  the handler's 403 counted";
}

# ---- caches ----
my $hits = value($text, 'purser_cache_hits_total', cache => 'auth');
$s->api('GET', "/organizations/$org/nodes") for 1 .. 6;
ok value(scrape()->{content}, 'purser_cache_hits_total', cache => 'auth') > $hits, "the same token again: the auth cache's hits grow";
ok value($text, 'purser_cache_misses_total', cache => 'auth') > 0, '  it missed before it hit';

# ---- a worker killed: replaced, counted, and the totals stay ----
$text = scrape()->{content};
my $total = value($text, 'purser_http_requests_total', %nodes);
my $crashed = value($text, 'purser_worker_restarts_total', cause => 'crashed');
my ($victim) = $s->worker_pids;
kill 'KILL', $victim;
ok PurserStack::wait_for(10, sub { my @w = $s->worker_pids; @w == 2 && !grep { $_ == $victim } @w }), 'the killed worker is replaced';
$text = scrape()->{content};
is value($text, 'purser_worker_restarts_total', cause => 'crashed'), $crashed + 1, 'restarts: cause="crashed" counts it';
is value($text, 'purser_workers'), 2, 'two workers alive again';
is value($text, 'purser_http_requests_total', %nodes), $total, "the killed worker's requests are still in the totals";
$s->get('/healthz') for 1 .. 120; # past every worker's fcgi.max_requests
$text = scrape()->{content};
ok value($text, 'purser_worker_restarts_total', cause => 'retired') >= 1,
    'workers that served fcgi.max_requests: cause="retired" (' . value($text, 'purser_worker_restarts_total', cause => 'retired') . ')';

# ---- a reload replaces both workers ----
my $reloads = value($text, 'purser_worker_restarts_total', cause => 'reload');
my @old = $s->worker_pids;
kill 'HUP', $s->master_pid;
ok PurserStack::wait_for(15, sub { my %was = map { $_ => 1 } @old; my @w = $s->worker_pids; @w == 2 && !grep { $was{$_} } @w }),
    'SIGHUP: both workers replaced';
ok PurserStack::wait_for(5, sub { value(scrape()->{content}, 'purser_worker_restarts_total', cause => 'reload') >= $reloads + 2 }),
    'restarts: cause="reload" counts both';
is value(scrape()->{content}, 'purser_http_requests_total', %nodes), $total, '  and the totals stay';

$s->stop;
done_testing;

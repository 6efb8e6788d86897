# 3001: health endpoints, the error format for 404/405/413, HTTPS redirect, request logging.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

my $s = PurserStack->new(max_body => 1048576);

my $r = $s->get('/healthz');
is $r->{status}, 200, 'GET /healthz is 200';
is $r->{content}, "ok\n", 'and says ok';
like $r->{headers}{'content-type'}, qr{^text/plain}, 'as text';
like $r->{headers}{'x-request-id'}, qr/^[0-9a-f]{16}$/, 'every response has a request id';

$r = $s->request('HEAD', '/healthz');
is $r->{status}, 200, 'HEAD /healthz is 200';
is $r->{content} // '', '', 'with no body';
is $r->{headers}{'content-length'}, 3, 'and the length GET would have';

is $s->get('/healthz/')->{status}, 200, 'a trailing slash is the same path';

# The newest migration this build carries, from the files themselves.
my ($latest) = sort { $b <=> $a } map { m{/0*(\d+)_[^/]+\.sql$} ? $1 : () } glob(PurserStack::root() . '/sql/*.sql');
$r = $s->get('/healthz/deep');
is $r->{status}, 200, 'GET /healthz/deep is 200';
my $deep = PurserStack::json($r);
is $deep->{status}, 'ok', 'deep health says ok';
is $deep->{database}, 'ok', 'the database answered';
is $deep->{schema_version}, $latest, "schema at the newest migration ($latest)";
is $deep->{build_schema}, $latest, 'the schema this build was made for, the same';

$r = $s->get('/no/such/thing');
is $r->{status}, 404, 'unknown path is 404';
like $r->{headers}{'content-type'}, qr{^application/json}, 'as JSON';
my $e = PurserStack::json($r);
is $e->{error}{code}, 'not_found', 'error code not_found';
like $e->{error}{message}, qr{/no/such/thing}, 'the message names the path';

$r = $s->request('POST', '/healthz', { content => 'x' });
is $r->{status}, 405, 'POST on a GET-only path is 405';
is $r->{headers}{allow}, 'GET, HEAD', 'Allow lists the methods';
$e = PurserStack::json($r);
is $e->{error}{code}, 'method_not_allowed', 'error code method_not_allowed';
like $e->{error}{message}, qr{POST}, 'the message names the method';
is $s->request('DELETE', '/healthz/deep')->{status}, 405, 'DELETE /healthz/deep is 405';

# Just over the service's limit: purser-fcgi answers; far over it: nginx does. Same format.
for my $case ([1048577, 'just over the limit'], [3 * 1048576, 'far over the limit']) {
    my ($size, $what) = @$case;
    $r = $s->request('POST', '/healthz', { content => 'A' x $size, headers => { 'content-type' => 'application/json' } });
    is $r->{status}, 413, "a body $what is 413";
    $e = PurserStack::json($r);
    is $e && $e->{error}{code}, 'too_large', "in the error format ($what)";
}

# Plain HTTP goes to HTTPS, path and query kept.
my $plain = HTTP::Tiny->new(max_redirect => 0);
$r = $plain->get($s->env('PURSER_HTTP_URL') . '/healthz?x=1');
is $r->{status}, 301, 'plain HTTP is redirected';
is $r->{headers}{location}, $s->url . '/healthz?x=1', 'to the same path over HTTPS';

# An unknown query parameter on purser's own routes is 400 naming it and what the route takes
# (issue 50: limit=2 answered a full page); Chef's and Deckhand's routes keep their leniency.
{
    my $org = $s->env('PURSER_ORG');
    my ($q, $d) = $s->call('GET', "/organizations/$org/clusters?limit=2");
    is $q->{status}, 400, 'GET clusters?limit=2: 400, not a full page';
    like PurserStack::error_message($d),
        qr/unknown query parameter 'limit'.*page_size, page_token, labels, filter, sort/,
        '  naming limit and the parameters the route takes';
    is +($s->call('GET', "/organizations/$org/clusters?page_size=2&sort=name"))[0]{status}, 200,
        '  the parameters it takes are answered';
    ($q, $d) = $s->call('GET', "/organizations/$org/events?since=0&bogus");
    like PurserStack::error_message($d), qr/'bogus'.*since, kinds, actor, page_size, wait, last/,
        '  a name without a value too (events)';
    ($q, $d) = $s->call('GET', "/organizations/$org/permissions?x=1");
    like PurserStack::error_message($d), qr/'x'.* takes none/, '  a route that takes none says so';
    is +($s->call('GET', "/organizations?limit=2"))[0]{status}, 200, "Chef's routes stay lenient";
    is +($s->call('GET', "/api/v1.0/revisions?bogus=1"))[0]{status}, 200, "  and Deckhand's";
}

# One JSON log line per request, without the query string or the body (a refused one too).
my $secret = 'tok' . int(rand(1e9));
$r = $s->get("/healthz?token=$secret");
is $r->{status}, 400, '/healthz takes no token';
unlike $r->{content}, qr/\Q$secret\E/, '  and its refusal does not repeat the value';
my $id = $r->{headers}{'x-request-id'};
my @lines = $s->log_lines('purser-fcgi.log');
my @mine = grep { index($_, $id) >= 0 } @lines;
is scalar(@mine), 1, 'exactly one log line for the request';
my $line = eval { JSON::PP->new->decode($mine[0]) } // {};
is $line->{method}, 'GET', 'log line: method';
is $line->{path}, '/healthz', 'log line: path without the query';
is $line->{status}, 400, 'log line: status';
is $line->{bytes}, length $r->{content}, 'log line: bytes';
ok defined $line->{ms} && $line->{ms} >= 0, 'log line: duration';
is $line->{principal}, '-', 'log line: principal (none yet)';
my $all = join '', @lines;
unlike $all, qr/\Q$secret\E/, 'the query string never reaches the log';
unlike $all, qr/AAAAAAAA/, 'request bodies never reach the log';
my @bad = grep { !eval { JSON::PP->new->decode($_); 1 } } @lines;
is scalar(@bad), 0, 'every log line is JSON';

# var/stack.env exports what it sets (issue 34): a shell that sources it hands the stack to
# the programs it starts, and purser finds its configuration and itself on the PATH.
{
    my $env = $s->dir . '/stack.env';
    open my $fh, '<', $env or die;
    my @lines = grep { /\S/ } <$fh>;
    is_deeply [ grep { !/^export \w+=/ } @lines ], [], 'every line of stack.env is an export';
    local $ENV{PURSER_CONFIG};
    delete $ENV{PURSER_CONFIG};
    my $out = `env -u PURSER_CONFIG bash -c '. "\$0"; bash -c "echo org=\\\$PURSER_ORG"; purser check-config' '$env' 2>&1`;
    is $?, 0, 'a shell that sources it runs purser check-config without -c' or diag $out;
    like $out, qr/^org=\Q@{[ $s->env('PURSER_ORG') ]}\E$/m, '  and its children see PURSER_ORG';
}

PurserStack::finish();

# 3008: bytes that are not UTF-8 text, wherever the router and authentication read them (issue
# 17 item 5): in every path parameter of every route (walked from the route table as /docs
# publishes it), in query parameter names and values, in the Chef and API version headers.
# Each is a 4xx in the route's usual error form, naming what was wrong, and never a 5xx; the
# store is unchanged and the workers are alive.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use YAML::XS ();
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $token = $s->env('PURSER_ADMIN_TOKEN');
my @tables = qw(organizations principals nodes policies policy_revisions doc_revisions);
sub counts { join ',', map { my $n = $s->sql("SELECT COUNT(*) FROM $_"); chomp $n; $n } @tables }
my $before = counts();
my @pids = $s->worker_pids;

sub call {
    my ($method, $path, %headers) = @_;
    my $res = $s->request($method, $path, { headers => { authorization => "Bearer $token", %headers },
                                            ($method eq 'POST' || $method eq 'PUT') ? (content => '') : () });
    my $type = $res->{headers}{'content-type'} // '';
    my $message = '';
    if ($type eq 'application/x-yaml') {
        my ($doc) = eval { YAML::XS::Load($res->{content}) };
        $message = $doc->{message} // '' if ref $doc eq 'HASH';
    } elsif ($type eq 'application/json') {
        my $j = eval { JSON::PP->new->decode($res->{content}) } // {};
        my $e = $j->{error};
        $message = ref $e eq 'ARRAY' ? $e->[0] : ref $e eq 'HASH' ? $e->{message} : ($j->{message} // $e // '');
    }
    return ($res, $type, $message);
}

my (undef, $docs) = $s->api('GET', '/docs', undef, '');
my ($routes, $wrong) = (0, 0);
for my $path (sort keys %{ $docs->{paths} }) {
    my @params = $path =~ /\{(\w+)\}/g;
    next unless @params;
    for my $method (sort keys %{ $docs->{paths}{$path} }) {
        my $yaml = $path =~ m{/api/v1\.0/};
        for my $bad (@params) {
            (my $url = $path) =~ s/\{(\w+)\}/$1 eq $bad ? '%ff' : ($1 eq 'org' ? $org : $1 =~ m{^(id|other|entry)$} ? '1' : 'x')/ge;
            my ($res, $type, $message) = call(uc $method, $url);
            $routes++;
            my $ok = $res->{status} == 400 && $message =~ /path parameter '\Q$bad\E' is not UTF-8/
                && $type eq ($yaml ? 'application/x-yaml' : 'application/json');
            unless ($ok) {
                $wrong++;
                diag uc($method) . " $url: $res->{status} $type '$message'";
            }
        }
    }
}
ok $routes > 100, "$routes route and parameter pairs tried with %ff";
is $wrong, 0, 'each is 400 naming the parameter, in the route\'s error form';

# A raw byte (not percent-encoded) in a path, and a NUL.
my ($res, $type, $message) = call('GET', "/organizations/$org/nodes/a%00b");
is $res->{status}, 400, 'a %00 in a path segment is 400';

# Query parameters: names and values, malformed escapes, truncated sequences.
for my $q ('order=%ff', 'limit=%C3', 'sort=%ED%A0%80', '%ff=1', 'limit=%zz', 'limit=%') {
    ($res, $type, $message) = call('GET', "/api/v1.0/revisions?$q");
    is $res->{status}, 400, "query '$q' is 400";
    like $message, qr/query parameter|malformed/, "  saying what: $message";
    is $type, 'application/x-yaml', '  as a YAML Status';
}
($res, $type, $message) = call('GET', "/organizations/$org/nodes?x=%ff");
is $res->{status}, 400, 'also on Chef routes';
like $message, qr/query parameter 'x' is not UTF-8/, "  naming it: $message";
($res) = call('GET', "/api/v1.0/revisions?order=asc&sort=id");
is $res->{status}, 200, 'well-formed queries still work';
($res) = call('GET', "/api/v1.0/revisions?metadata.name=caf%C3%A9");
is $res->{status}, 200, 'and UTF-8 in them';

# Headers: a Chef user id, an API version, a timestamp that are not UTF-8 (sent with curl:
# HTTP::Tiny refuses such header values itself).
sub raw {
    my ($path, %headers) = @_;
    open my $fh, '-|', 'curl', '-s', '--cacert', $s->env('PURSER_CA'), '-w', "\n%{http_code}",
        (map { ('-H', "$_: $headers{$_}") } sort keys %headers), $s->url . $path or die "curl: $!";
    local $/;
    my $out = <$fh>;
    close $fh;
    my ($body, $status) = $out =~ /\A(.*)\n(\d+)\z/s;
    return ($status // 0, $body // '');
}
my %chef = ('X-Ops-Sign' => 'algorithm=sha256;version=1.3', 'X-Ops-Timestamp' => '2026-01-01T00:00:00Z',
            'X-Ops-Content-Hash' => 'x', 'X-Ops-Authorization-1' => 'x');
my ($status, $body) = raw("/organizations/$org", %chef, 'X-Ops-UserId' => "\xff\xfe");
is $status, 401, 'an X-Ops-UserId that is not UTF-8 is 401';
my $j = eval { JSON::PP->new->decode($body) } // {};
like $j->{error}[0] // '', qr/Failed to authenticate as \\xff\\xfe/, '  quoting it escaped, in JSON';
($status, $body) = raw("/organizations/$org", Authorization => "Bearer $token", 'X-Ops-Server-API-Version' => "\xff");
is $status, 406, 'an X-Ops-Server-API-Version that is not UTF-8 is 406';
$j = eval { JSON::PP->new->decode($body) } // {};
is $j->{message}, 'Specified version \\xff not supported', '  quoting it escaped, in JSON';
($status, $body) = raw("/organizations/$org", %chef, 'X-Ops-UserId' => 'admin', 'X-Ops-Timestamp' => "\xff");
is $status, 401, 'an X-Ops-Timestamp that is not UTF-8 is 401 (Chef\'s clock answer)';
($status, $body) = raw("/api/v1.0/revisions", %chef, 'X-Ops-UserId' => "\xc3");
is $status, 401, 'and on a document route';

is counts(), $before, 'the store is unchanged';
my ($alive) = $s->api('GET', '/healthz', undef, '');
is $alive->{status}, 200, 'purser answers';
is_deeply [ sort $s->worker_pids ], [ sort @pids ], 'with the same workers: none died';
ok !grep({ /"level":"error"/ } $s->log_lines('purser-fcgi.log')), 'and nothing was logged as an internal error';

PurserStack::finish();

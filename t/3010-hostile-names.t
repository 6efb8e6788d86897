#!/usr/bin/perl
# 3010: hostile names on every route that names something new (issue 17, "Also"): empty, over
# the 255-character limit, far over it, with a space, a tab, a newline, a slash, a control
# character, a NUL. Each is refused with a 4xx whose message names the field or parameter, or,
# where the kind allows such a name, stored and found under exactly those bytes; never a 5xx.
# The store is unchanged by every refusal and the workers stay alive.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my @pids = $s->worker_pids;
sub esc { my ($t) = @_; $t =~ s/([^A-Za-z0-9_.~-])/sprintf('%%%02X', ord $1)/ge; $t }
sub message {
    my ($res) = @_;
    my $c = $res->{content} // '';
    my $j = eval { JSON::PP->new->decode($c) };
    if ($j) {
        my $e = $j->{error};
        return ref $e eq 'ARRAY' ? $e->[0] : ref $e eq 'HASH' ? $e->{message} : ($j->{message} // $e // '');
    }
    return $1 if $c =~ /^message: (.*)$/m; # a Deckhand Status in YAML
    return $c;
}
my $lock = sub {
    my ($name) = @_;
    return { name => $name, revision_id => 'a' x 40, run_list => [], cookbook_locks => {} };
};
my $serial = 0;
my $doc = sub {
    $serial++;
    return "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: d$serial\n"
        . "  layeringDefinition: {abstract: false, layer: site}\ndata: 1\n";
};
# A revision for the tag and validation routes.
my ($res) = $s->yaml('PUT', '/api/v1.0/buckets/seed/documents', $doc->('x'));
is $res->{status}, 200, 'a revision to tag';
my ($rev) = $res->{content} =~ /revision: (\d+)/;

my @tables = qw(organizations principals principal_keys api_tokens nodes policies policy_revisions
                policy_groups cookbook_artifacts doc_revisions doc_buckets doc_tags doc_validations);
my $count_sql = 'SELECT CONCAT_WS(",", ' . join(', ', map { "(SELECT COUNT(*) FROM $_)" } @tables) . ')';
sub counts { my $n = $s->sql($count_sql); chomp $n; $n }

# [route, field named in the message, method, path of N, body of N, yaml?, reader of N (the
# document API allows any character but control characters: such a name is stored and read
# back under exactly its bytes)]
my @routes = (
    ['create an organization', 'name', 'POST', sub { '/organizations' }, sub { { name => $_[0], full_name => 'X' } }],
    ['create a user', 'username', 'POST', sub { '/users' }, sub { { username => $_[0], display_name => 'X', email => 'x@example.com' } }],
    ['create a client', 'name', 'POST', sub { "/organizations/$org/clients" }, sub { { name => $_[0] } }],
    ['create a node', 'name', 'POST', sub { "/organizations/$org/nodes" }, sub { { name => $_[0], chef_environment => '_default' } }],
    ['put a node', 'name', 'PUT', sub { "/organizations/$org/nodes/" . esc($_[0]) }, sub { { name => $_[0], chef_environment => '_default' } }],
    ['a policy group', 'group', 'PUT', sub { "/organizations/$org/policy_groups/" . esc($_[0]) . '/policies/app' }, sub { $lock->('app') }],
    ['a policy', 'name', 'PUT', sub { "/organizations/$org/policy_groups/g/policies/" . esc($_[0]) }, sub { $lock->($_[0]) }],
    ['a cookbook artifact', 'name', 'PUT', sub { "/organizations/$org/cookbook_artifacts/" . esc($_[0]) . '/' . ('b' x 40) }, sub { { name => $_[0], identifier => 'b' x 40, version => '1.0.0', metadata => {} } }],
    ['a bucket', 'bucket name', 'PUT', sub { '/api/v1.0/buckets/' . esc($_[0]) . '/documents' }, sub { $doc->() }, 1,
     sub { my ($r) = $s->yaml('GET', '/api/v1.0/revisions/' . latest() . '/documents?status.bucket=' . esc($_[0])); $r->{status} == 200 && $r->{content} =~ /name: d$serial\b/ }],
    ['a tag', 'tag', 'POST', sub { "/api/v1.0/revisions/$rev/tags/" . esc($_[0]) }, sub { undef }, 1,
     sub { my ($r) = $s->yaml('GET', "/api/v1.0/revisions/$rev/tags/" . esc($_[0])); $r->{status} == 200 }],
    ['a validation', 'validation name', 'POST', sub { "/api/v1.0/revisions/$rev/validations/" . esc($_[0]) }, sub { "status: success\nvalidator: {name: x, version: '1'}\n" }, 1,
     sub { my ($r) = $s->yaml('GET', "/api/v1.0/revisions/$rev/validations/" . esc($_[0])); $r->{status} == 200 }],
);
my %names = ('empty' => '', '256 characters' => 'n' x 256, '10,000 characters' => 'n' x 10_000,
             'a space' => 'a b', 'a tab' => "a\tb", 'a newline' => "a\nb", 'a slash' => 'a/b',
             'a control character' => "a\x01b", 'a NUL' => "a\x00b", 'a DEL' => "a\x7fb");
sub latest { my $n = $s->sql('SELECT MAX(id) FROM doc_revisions'); chomp $n; $n }
my ($refused, $changed) = (0, 0);
for my $route (@routes) {
    my ($what, $field, $method, $path, $body, $yaml, $reader) = @$route;
    for my $kind (sort keys %names) {
        my $name = $names{$kind};
        my $p = $path->($name);
        my $b = $body->($name);
        my %headers = (authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN'));
        my $content;
        if ($yaml) { $headers{'content-type'} = 'application/x-yaml'; $content = $b // '' }
        else { $headers{'content-type'} = 'application/json'; $headers{accept} = 'application/json'; $content = JSON::PP->new->canonical->encode($b) }
        my $before = counts();
        $res = $s->request($method, $p, { headers => \%headers, content => $content });
        my $m = message($res);
        if ($reader && ($kind eq 'a space' || $kind eq 'a slash')) {
            ok $res->{status} =~ /^20[01]$/ && $reader->($name), "$what with $kind: stored ($res->{status}) and found under exactly its bytes";
            next;
        }
        # a name in a path: an empty segment matches no route, one over nginx's line is 414
        # and a NUL is refused by JSON and by nginx in a path before the name is looked at
        my $named = length($name) == 0 || length($name) > 8000 ? qr/./
                  : $kind eq 'a NUL' ? qr/\\u0000 is not allowed|malformed/ : qr/\Q$field\E/i;
        ok $res->{status} >= 400 && $res->{status} < 500 && $m =~ $named,
            "$what with $kind: $res->{status} '" . substr($m, 0, 120) . "'";
        $refused++;
        $changed++ if counts() ne $before;
    }
}
ok $refused > 80, "$refused refusals";

# Over-long values in every header and query parameter the router and authentication read:
# 7,000 bytes (within nginx's 8 KB header buffer, so purser sees them) each gets its 4xx with a
# message; a header past nginx's buffer gets nginx's refusal in purser's error form.
my $long = 'x' x 7000;
use POSIX qw(strftime);
my %chef = ('X-Ops-Sign' => 'algorithm=sha256;version=1.3', 'X-Ops-Timestamp' => strftime('%Y-%m-%dT%H:%M:%SZ', gmtime),
            'X-Ops-Content-Hash' => 'x', 'X-Ops-Authorization-1' => 'x', 'X-Ops-UserId' => 'admin');
my $bearer = 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN');
for my $case (
    ['Authorization', { Authorization => "Bearer $long" }, 401, qr/token/i],
    ['X-Ops-UserId', { %chef, 'X-Ops-UserId' => $long }, 401, qr/Failed to authenticate as 'x{64}\.\.\.'/],
    ['X-Ops-Timestamp', { %chef, 'X-Ops-Timestamp' => $long }, 401, qr/timestamp|clock|time/i],
    ['X-Ops-Sign', { %chef, 'X-Ops-Sign' => $long }, 400, qr/sign|version|algorithm/i], # Chef's 400 for a malformed signing header
    ['X-Ops-Content-Hash', { %chef, 'X-Ops-Content-Hash' => $long }, 401, qr/./],
    ['X-Ops-Authorization-N', { %chef, map { ("X-Ops-Authorization-$_" => 'x' x 60) } 1 .. 100 }, 401, qr/./],
    ['X-Ops-Server-API-Version', { Authorization => $bearer, 'X-Ops-Server-API-Version' => $long }, 406, qr/Specified version x{64}\.\.\. not supported/],
    ['Accept', { Authorization => $bearer, Accept => $long }, 200, undef],
    ['a header past nginx\'s buffer', { Authorization => $bearer, 'X-Junk' => 'y' x 9000 }, 400, qr/header is longer than the server accepts/],
) {
    my ($what, $headers, $status, $pattern) = @$case;
    my $before = counts();
    $res = $s->request('GET', "/organizations/$org/nodes", { headers => $headers });
    my $m = message($res);
    is $res->{status}, $status, "a 7,000-byte $what: $res->{status}";
    if ($pattern) { # (Accept is answered: nothing to quote)
        like $m, $pattern, '  with a message: ' . substr($m, 0, 100);
        ok length($m) < 2048, '  that quotes at most a bounded part of it';
    }
    is counts(), $before, '  the store is unchanged';
}
for my $q ("limit=" . ('9' x 7000), "order=" . $long, "metadata.label=" . $long, "metadata.layeringDefinition.abstract=" . $long) {
    $res = $s->request('GET', "/api/v1.0/revisions/$rev/documents?$q", { headers => { Authorization => $bearer } });
    my $m = message($res);
    ok $res->{status} >= 400 && $res->{status} < 500 && length $m && length $m < 2048,
        'a 7,000-byte query ' . substr($q, 0, 8) . "...: $res->{status} '" . substr($m, 0, 100) . "'";
}
is $changed, 0, 'the store is unchanged by every one of them';
is_deeply [ sort $s->worker_pids ], [ sort @pids ], 'and the workers are the same: none died';
ok !grep({ /"level":"error"/ } $s->log_lines('purser-fcgi.log')), 'nothing was logged as an internal error';

PurserStack::finish();

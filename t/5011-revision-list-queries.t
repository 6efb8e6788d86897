#!/usr/bin/perl
# 5011: the revision list reads a fixed number of queries whatever the number of revisions,
# and pages by key with limit and page_token (issue 18, item 1): the statements the server executes for one GET /revisions (counted by
# MariaDB's own Questions) are the same with 6 revisions and with 60, and the list still
# carries each revision's tags and ValidationPolicy status (the same as each revision's own
# GET, which reads them one by one).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

# every render reads; the principal stays cached between the two GETs of a measure
my $s = PurserStack->new(workers => 1, cache_rendered => 0, auth_ttl => 300);
my $api = '/api/v1.0';
my $n = 0;
sub write_revision {
    $n++;
    $s->yaml_call('PUT', "$api/buckets/b/documents", <<"YAML");
---
schema: deckhand/LayeringPolicy/v1
metadata: {schema: metadata/Control/v1, name: layering}
data: {layerOrder: [site]}
---
schema: deckhand/ValidationPolicy/v1
metadata: {schema: metadata/Control/v1, name: site-policy}
data:
  validations:
    - name: promenade-site-validation
    - name: armada-validation
      expiresAfter: P1D
---
schema: example/Kind/v1
metadata: {schema: metadata/Document/v1, name: d, layeringDefinition: {abstract: false, layer: site}}
data: {n: $n}
YAML
}
sub tag_and_validate {
    my ($rev) = @_;
    $s->yaml_call('POST', "$api/revisions/$rev/tags/t$rev", "at: $rev\n") if $rev % 2;
    $s->yaml_call('POST', "$api/revisions/$rev/validations/promenade-site-validation",
        "status: " . ($rev % 3 ? 'success' : 'failure') . "\nvalidator: {name: p, version: '1'}\n");
    $s->yaml_call('POST', "$api/revisions/$rev/validations/armada-validation",
        "status: success\nvalidator: {name: a, version: '1'}\n") if $rev % 5;
}
sub questions {
    my ($out) = $s->sql("SHOW GLOBAL STATUS LIKE 'Questions'") =~ /(\d+)/;
    return $out;
}
# The fewest statements of three runs of code (which returns a count): a worker also reads the
# newest auth_changes row once a second (docs/operator/identity.md, "When access ends"), which may fall inside one
# request; it only ever adds.
sub fewest {
    my ($code) = @_;
    my ($least, @rest);
    for (1 .. 3) {
        my ($n, @more) = $code->();
        ($least, @rest) = ($n, @more) if !defined $least || ($n =~ /^\d+$/ && $n < $least);
    }
    return wantarray ? ($least, @rest) : $least;
}
# statements for one list, measured after a first one (the worker's caches warm)
sub list_cost { fewest(\&list_cost_once) }
sub list_cost_once {
    my $get = sub { $s->request('GET', "$api/revisions", { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN'), accept => 'application/json' } }) };
    $get->();
    my $before = questions();
    my $r = $get->();
    my $after = questions();
    my $before2 = questions();
    my $idle = questions() - $before2; # what asking for the count costs by itself
    return ($after - $before - $idle, decode_json($r->{content}));
}

for (1 .. 6) { my $d = write_revision(); tag_and_validate($d->[0]{status}{revision}) }
my ($small, $list6) = list_cost();
is $list6->{count}, 6, '6 revisions listed';
for (7 .. 60) { my $d = write_revision(); tag_and_validate($d->[0]{status}{revision}) }
my ($big, $list60) = list_cost();
is $list60->{count}, 60, '60 revisions listed';
is $big, $small, "the same number of statements for 6 and for 60 revisions ($small)";
ok $small <= 10, '  a handful';

# the list says what each revision's own GET says
my $agree = 0;
for my $r (@{ $list60->{results} }) {
    my $one = $s->yaml_call('GET', "$api/revisions/$r->{id}");
    $agree++ if JSON::PP->new->canonical->encode([ $r->{status}, $r->{validationPolicies}, [ sort keys %{ $one->{tags} } ] ])
             eq JSON::PP->new->canonical->encode([ $one->{status}, $one->{validationPolicies}, $r->{tags} ]);
}
is $agree, 60, "each revision's tags and validation status agree with its own GET";
my %by_id = map { $_->{id} => $_ } @{ $list60->{results} };
is_deeply $by_id{3}{tags}, ['t3'], 'a tagged revision lists its tag';
is_deeply $by_id{4}{tags}, [], 'an untagged one none';
is $by_id{3}{status}, 'failed', 'a revision with a failed validation: failed';
is $by_id{4}{status}, 'succeeded', 'one with all validations passed: succeeded';
is $by_id{5}{validationPolicies}{'site-policy'}{validations}[1]{status}, 'missing', 'a validation never reported: missing';

# ---- keyset pages (limit, page_token) ----
sub walk {
    my ($order) = @_;
    my (@ids, $token, $pages);
    do {
        my $q = "limit=7&order=$order" . (length($token // '') ? "&page_token=$token" : '');
        my $d = $s->yaml_call('GET', "$api/revisions?$q");
        push @ids, map { $_->{id} } @{ $d->{results} };
        $token = $d->{next_page_token};
        $pages++;
    } while (length $token && $pages < 50);
    return ($pages, @ids);
}
my ($pages, @asc) = walk('asc');
is_deeply \@asc, [ 1 .. 60 ], 'pages of 7, oldest first: every revision once, in order';
is $pages, 9, '  in 9 pages, the last one ending the walk';
my (undef, @desc) = walk('desc');
is_deeply \@desc, [ reverse 1 .. 60 ], 'newest first too';
my $page = $s->yaml_call('GET', "$api/revisions?limit=7");
is_deeply [ map { [ $_->{id}, $_->{status}, $_->{tags} ] } @{ $page->{results} } ],
    [ map { [ $_->{id}, $_->{status}, $_->{tags} ] } @{ $list60->{results} }[0 .. 6] ], 'a page says what the whole list says';
my ($r, $d) = $s->call('GET', "$api/revisions?limit=7&page_token=bm9wZQ");
is $r->{status}, 400, 'a page token that is not one: 400';
like PurserStack::error_message($d), qr/^page_token: /, '  naming page_token';
($r, $d) = $s->call('GET', "$api/revisions?limit=1001");
is $r->{status}, 400, 'limit over 1000: 400';
like PurserStack::error_message($d), qr/^limit: /, '  naming limit';
ok !exists $list60->{next_page_token}, "without limit, Deckhand's whole list as before";

# ---- every other read whose answer grows: the same statements for a small and a big one ----
# Revision 60 is small: 3 documents in 1 bucket, a policy of 2 validations, no tag. The big
# one has 20 more buckets, 60 more documents, a policy of 40 validations with 20 reported,
# and 30 tags.
sub cost { my ($path) = @_; fewest(sub { cost_once($path) }) }
sub cost_once {
    my ($path) = @_;
    my $get = sub { $s->request('GET', "$api$path", { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN'), accept => 'application/json' } }) };
    my $first = $get->();
    my $before = questions();
    my $r = $get->();
    my $after = questions();
    my $before2 = questions();
    my $idle = questions() - $before2;
    return $r->{status} == 200 && $first->{status} == 200 ? $after - $before - $idle : "status $r->{status}";
}
my @routes = ('/revisions/%s', '/revisions/%s/documents', '/revisions/%s/rendered-documents',
    '/revisions/%s/tags', '/revisions/%s/validations', '/revisions/%s/validations/detail',
    '/revisions/%s/diff/%s', '/revisions/%s/deepdiff/%s');
no warnings 'redundant'; # a route with one id takes the first of the two given
my %small_cost = map { $_ => cost(sprintf $_, 60, 59) } @routes;
my $big_rev;
for my $b (1 .. 20) {
    $big_rev = $s->yaml_call('PUT', "$api/buckets/m$b/documents",
        "---\nschema: example/Kind/v1\nmetadata: {schema: metadata/Document/v1, name: m$b, layeringDefinition: {abstract: false, layer: site}}\ndata: {b: $b}\n");
}
$big_rev = $s->yaml_call('PUT', "$api/buckets/many/documents", join '',
    "---\nschema: deckhand/ValidationPolicy/v1\nmetadata: {schema: metadata/Control/v1, name: big-policy}\ndata:\n  validations:\n",
    (map { "    - name: v$_\n" } 1 .. 40),
    map { "---\nschema: example/Kind/v1\nmetadata: {schema: metadata/Document/v1, name: many-$_, layeringDefinition: {abstract: false, layer: site}}\ndata: {n: $_}\n" } 1 .. 60);
$big_rev = $big_rev->[0]{status}{revision};
$s->yaml_call('POST', "$api/revisions/$big_rev/tags/tag-$_", "n: $_\n") for 1 .. 30;
$s->yaml_call('POST', "$api/revisions/$big_rev/validations/v$_", "status: success\nvalidator: {name: v, version: '1'}\n") for 1 .. 20;
my $one = $s->yaml_call('GET', "$api/revisions/$big_rev");
is scalar(keys %{ $one->{tags} }), 30, 'the big revision has 30 tags';
is scalar(@{ $one->{validationPolicies}{'big-policy'}{validations} }), 40, '  and a policy of 40 validations';
is_deeply [ map { $_->{status} } @{ $one->{validationPolicies}{'big-policy'}{validations} }[0, 39] ],
    [ 'succeeded', 'missing' ], '  reported ones succeeded, the rest missing';
for my $route (@routes) {
    my $big_cost = cost(sprintf $route, $big_rev, 1);
    my $name = sprintf $route, 'N', 'M';
    ok $small_cost{$route} =~ /^\d+$/ && $big_cost eq $small_cost{$route},
        "GET $name: $small_cost{$route} statements for the small answer, $big_cost for the big one";
}

$s->stop;
done_testing;

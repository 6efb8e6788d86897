#!/usr/bin/perl
# 9999: the OpenAPI document (issue 33). It validates against the OpenAPI 3.0 specification's
# schema; every operation of GET /docs has a schema for its success answer (or answers no
# body) and for its errors; every operation that takes a body has a request schema; every
# query and header parameter has a type; /docs.yaml is the same
# document; Redocly's linter (npm, the lockfile in t/browser) with its recommended rules finds
# no error. It runs last: it adds up what the suite's other files checked against the document
# (build/test-output/openapi/, written by t/lib/PurserOpenAPI.pm and t/lib/purser_openapi.py).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use YAML::XS ();
use PurserStack;

my $s = PurserStack->new(workers => 1);
my $docs = $s->request('GET', '/docs');
is $docs->{status}, 200, 'GET /docs';
my $doc = JSON::PP->new->decode($docs->{content});

# The operations that take no body: what they act on is in the path.
my %no_body = map { $_ => 1 } (
    'POST /organizations/{org}/clusters/{id}/bootstrap-token',
    'PUT /organizations/{org}/policy_groups/{group}/policies/{name}/revision/{rev}',
    'POST /api/v1.0/rollback/{id}', 'POST /organizations/{org}/api/v1.0/rollback/{id}',
    'POST /auth/sso/sign-out', 'POST /auth/sso/{provider}/device',
);
my (@ops, @no_answer, @no_request, @untyped, @renamed);
for my $path (sort keys %{ $doc->{paths} }) {
    for my $method (sort keys %{ $doc->{paths}{$path} }) {
        my $op = $doc->{paths}{$path}{$method};
        my $name = uc($method) . " $path";
        push @ops, $name;
        # a redirect (the sign-in's steps through the provider, 302) answers with no body
        my @ok = grep { /^2/ || /^30[12378]$/ } keys %{ $op->{responses} };
        push @no_answer, $name unless @ok && !grep {
            $_ ne '204' && !/^3/ && !(values %{ $op->{responses}{$_}{content} // {} })[0]{schema} } @ok;
        push @no_answer, "$name (errors)" unless $op->{responses}{'4XX'}{content};
        push @no_request, $name if $method =~ /^(put|post|patch)$/ && !$op->{requestBody}
            && !$no_body{$name};
        for my $p (@{ $op->{parameters} }) {
            my $param = $p->{'$ref'} ? $doc->{components}{parameters}{ $p->{'$ref'} =~ s{.*/}{}r } : $p;
            push @untyped, "$name: " . ($p->{'$ref'} // $p->{name})
                unless $param && $param->{schema} && ($param->{schema}{type} // '');
            # purser's own routes refuse a parameter their row's .query does not name: each
            # of those names is the parameter's own (Chef's and Deckhand's routes are lenient)
            push @renamed, "$name: $p->{'$ref'}" if $p->{'$ref'} && $param && ($param->{in} // '') eq 'query'
                && ($op->{responses}{'4XX'}{content}{'application/json'}{schema}{'$ref'} // '') =~ m{/Error$}
                && $param->{name} ne ($p->{'$ref'} =~ s{.*/}{}r);
        }
    }
}
ok @ops > 120, scalar(@ops) . ' operations';

# The OpenAPI 3.0 specification's own schema (what openapi-spec-validator checks; JSON::Validator
# ships the schema, and the Python tool is not packaged for Debian bookworm)
{
    require JSON::Validator::Schema::OpenAPIv3;
    my @errors = @{ JSON::Validator::Schema::OpenAPIv3->new($doc)->errors };
    is_deeply [ map {"$_"} @errors ], [], 'the document validates against the OpenAPI 3.0 schema';
    my $broken = JSON::PP->new->decode($docs->{content});
    $broken->{paths}{'/healthz'}{get}{bogus} = 1;
    ok scalar @{ JSON::Validator::Schema::OpenAPIv3->new($broken)->errors },
        '  (which a document with an unknown field fails)';
}
is_deeply \@no_answer, [], 'every operation has a schema for its success answer and its errors';
is_deeply \@no_request, [], 'every operation that takes a body has its request schema';
is_deeply \@untyped, [], 'every parameter has a type';
is_deeply \@renamed, [], "on purser's own routes each query parameter is named as the route table names it";
my $with_request = grep { my ($m, $p) = split / /; $doc->{paths}{$p}{ lc $m }{requestBody} } @ops;

my $yaml = $s->request('GET', '/docs.yaml');
is $yaml->{headers}{'content-type'}, 'application/x-yaml', '/docs.yaml is YAML';
{
    local $YAML::XS::Boolean = 'JSON::PP';
    my $same = YAML::XS::Load($yaml->{content});
    is_deeply $same, $doc, '  the same document'
        or diag explain [ grep { !exists $same->{paths}{$_} } keys %{ $doc->{paths} } ];
}

# Redocly's recommended rules: no error (its warnings are noted). @redocly/cli needs Node 20.19
# or later; Debian bookworm's own nodejs is 18 (README, Dependencies).
my $redocly = PurserStack::root() . '/t/browser/node_modules/.bin/redocly';
my ($major, $minor) = (`node --version 2>/dev/null` // '') =~ /^v(\d+)\.(\d+)/;
SKIP: {
    skip 'npm ci in t/browser has not run (tools/deps does it)', 1 unless -x $redocly;
    skip "node " . ($major // "?") . "." . ($minor // "?") . ": \@redocly/cli needs 20.19 or later", 1
        unless $major && ($major > 20 || ($major == 20 && $minor >= 19));
    my $file = $s->dir . '/openapi.json';
    { open my $fh, '>', $file or die; print $fh $docs->{content}; }
    my $out = `'$redocly' lint --format=summary '$file' 2>&1`;
    is $? >> 8, 0, 'redocly lint: no error' or diag $out;
    my @warnings = $out =~ /^warning\s+(\S+: \d+)/mg;
    diag 'redocly lint warnings: ' . (join(', ', @warnings) || 'none');
}

# What the suite checked: every answer of every other test file, against this document
my %total;
for my $f (glob PurserStack::build() . '/test-output/openapi/*.tsv') {
    open my $fh, '<', $f or next;
    while (<$fh>) { $total{$1} += $2 while /(\w+)=(\d+)/g }
}
diag sprintf 'OpenAPI: %d operations, %d with a request schema; the suite checked %d answers '
    . 'and %d accepted request bodies against it, %d mismatches, %d exchanges outside /docs',
    scalar @ops, $with_request, map { $total{$_} // 0 } qw(answers requests mismatches unmatched);
is $total{mismatches} // 0, 0, 'no exchange of the suite differed from the document';

# What the suite sent outside /docs: probes of what is not there (404, 405, 401 before routing)
# and what nginx serves without purser (/ sent on to the admin pages, the admin pages, the API
# reference page's files under /docs/, the manual under /manual/, git's smart HTTP, the install script). An answer of purser's own outside the document would be a route /docs does not
# describe.
my (%outside, @undescribed);
for my $f (glob PurserStack::build() . '/test-output/openapi/*.outside') {
    open my $fh, '<', $f or next;
    while (<$fh>) { chomp; $outside{$_}++ }
}
my $served_by_nginx = qr{^/(?:$|admin(?:/|$)|docs/|manual(?:/|$)|git/|install/(?!bootstrap\.json)|favicon\.ico$)};
for (sort keys %outside) {
    my ($status, $method, $path) = split / /, $_, 3;
    push @undescribed, $_ unless $status =~ /^(?:400|401|403|404|405|406|411|413|414|415|501|599)$/
        || $path =~ $served_by_nginx;
}
is_deeply \@undescribed, [], 'every exchange outside /docs was refused as not there, or served by nginx alone ('
    . scalar(keys %outside) . ' kinds)';
diag 'outside /docs by status: ' . join ', ', map { my $st = $_; "$st " . scalar(grep { /^$st / } keys %outside) }
    sort { $a <=> $b } keys %{ { map { (split / /)[0] => 1 } keys %outside } };

PurserStack::finish();

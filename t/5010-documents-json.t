#!/usr/bin/perl
# 5010: the document API in JSON (issue 14, item 2). With `Accept: application/json` every
# document route answers the same content as its YAML (the default, as Deckhand's clients
# expect): a stream as a list, one document as itself, and errors as the same Status
# document. Asked for each kind of answer: a write, the documents of a revision, rendered
# documents, the revision list and one revision, diff and deepdiff, tags, validations, and
# errors (404, 400, 409).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use YAML::XS ();
use PurserStack;

my $s = PurserStack->new;
my $api = "/organizations/" . $s->env('PURSER_ORG') . "/api/v1.0";
my $auth = 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN');

sub both {
    my ($method, $path, $body) = @_;
    my %h = (authorization => $auth);
    $h{'content-type'} = 'application/x-yaml' if defined $body;
    my $y = $s->request($method, $path, { headers => { %h }, defined $body ? (content => $body) : () });
    my $j = $s->request($method, $path, { headers => { %h, accept => 'application/json' }, defined $body ? (content => $body) : () });
    return ($y, $j);
}
# both read booleans as JSON::PP's; compared as 1 and 0
$YAML::XS::Boolean = 'JSON::PP';
sub normalize {
    my ($v) = @_;
    return [ map { normalize($_) } @$v ] if ref $v eq 'ARRAY';
    return { map { ($_ => normalize($v->{$_})) } keys %$v } if ref $v eq 'HASH';
    return $v ? 1 : 0 if JSON::PP::is_bool($v);
    return $v;
}
sub same {
    my ($y, $j, $what, $stream) = @_;
    is $j->{status}, $y->{status}, "$what: the same status ($y->{status})";
    is $j->{headers}{'content-type'}, 'application/json', '  JSON when asked';
    like $y->{headers}{'content-type'}, qr{^application/x-yaml}, '  YAML by default';
    my @docs = YAML::XS::Load($y->{content});
    my $yv = $stream ? \@docs : $docs[0];
    my $jv = eval { decode_json($j->{content}) };
    is_deeply normalize($jv), normalize($yv), '  the same content' or diag $j->{content};
    return $jv;
}

my $bundle = <<'YAML';
---
schema: deckhand/LayeringPolicy/v1
metadata: {schema: metadata/Control/v1, name: layering-policy}
data: {layerOrder: [global, site]}
---
schema: example/Kind/v1
metadata:
  schema: metadata/Document/v1
  name: parent
  labels: {app: web}
  layeringDefinition: {abstract: false, layer: global}
data: {a: 1, flag: true, list: [1, 2.5, "x"], none: null}
---
schema: example/Kind/v1
metadata:
  schema: metadata/Document/v1
  name: child
  layeringDefinition: {abstract: false, layer: site, parentSelector: {app: web}, actions: [{method: merge, path: .}]}
data: {b: 2}
YAML
my ($y, $j) = both('PUT', "$api/buckets/one/documents", $bundle);
is $y->{status}, 200, 'a write';
# (the second request wrote nothing new: the same documents, so the same answer)
my $written = same($y, $j, 'PUT a bucket', 1);
is scalar(@$written), 3, '  three documents written, as a list';
my $rev = $written->[0]{status}{revision};
same(both('GET', "$api/revisions/$rev/documents"), 'the documents of a revision', 1);
same(both('GET', "$api/revisions/$rev/documents?metadata.name=parent"), '  filtered', 1);
same(both('GET', "$api/revisions/$rev/rendered-documents"), 'rendered documents', 1);
same(both('GET', "$api/revisions"), 'the revision list');
same(both('GET', "$api/revisions/$rev"), 'one revision');
($y) = both('PUT', "$api/buckets/one/documents", $bundle =~ s/b: 2/b: 3/r);
my $rev2 = $rev + 1;
same(both('GET', "$api/revisions/$rev/diff/$rev2"), 'diff');
same(both('GET', "$api/revisions/$rev/deepdiff/$rev2"), 'deepdiff');
($y, $j) = both('POST', "$api/revisions/$rev2/tags/golden", "note: x\n");
is $y->{status}, 201, 'a tag';
same(both('GET', "$api/revisions/$rev2/tags"), 'the tags');
($y, $j) = both('POST', "$api/revisions/$rev2/validations/v1", "status: success\nvalidator: {name: x, version: '1'}\n");
same(both('GET', "$api/revisions/$rev2/validations"), 'validations');

# ---- errors: the same Status document ----
my $st = same(both('GET', "$api/revisions/9999/documents"), 'a revision that does not exist');
is $st->{kind}, 'Status', '  Deckhand\'s Status document';
is $st->{code}, '404 Not Found', '  with its code';
$st = same(both('PUT', "$api/buckets/two/documents", "---\nschema: x\n"), 'a malformed document');
is $st->{status}, 'Failure', '  a failure';
ok $st->{details}{errorCount} >= 1, '  with its messages';
$st = same(both('PUT', "$api/buckets/two/documents", $bundle), 'documents of another bucket');
is $st->{code}, '409 Conflict', '  a conflict';

# ---- non-document routes are unchanged, and YAML stays the default for unknown Accept ----
my $r = $s->request('GET', "$api/revisions", { headers => { authorization => $auth, accept => 'text/html, */*' } });
like $r->{headers}{'content-type'}, qr{^application/x-yaml}, 'another Accept: YAML';

$s->stop;
done_testing;

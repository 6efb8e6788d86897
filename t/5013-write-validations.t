#!/usr/bin/perl
# 5013: Deckhand's own validations, recorded when documents are written (issue 35, item 1):
# deckhand-schema-validation (each concrete document, layered and substituted, against its
# DataSchema or the built-in schema of Deckhand's kinds) and deckhand-policy-validation (each
# document's layer in the LayeringPolicy's layerOrder), each entry 0 of the new revision with
# Deckhand's error entries; the write lands all the same. The revision's status and a
# ValidationPolicy naming them see the outcome; rollbacks and writes of many batches record
# the same; the reserved names (DataSchemas under deckhand/ and metadata/, validations named
# deckhand...) are refused.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use PurserStack;
use Test::More;

my $s = PurserStack->new;
my $api = '/api/v1.0';

sub policy {
    my (@layers) = @_;
    return "---\nschema: deckhand/LayeringPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n"
        . "  name: layering-policy\ndata:\n  layerOrder: [" . join(', ', @layers) . "]\n";
}
sub dataschema {
    my ($name, $body) = @_;
    return "---\nschema: deckhand/DataSchema/v1\nmetadata:\n  schema: metadata/Control/v1\n"
        . "  name: $name\ndata:\n$body";
}
my $strict = dataschema('example/Strict/v1', "  \$schema: http://json-schema.org/draft-04/schema#\n"
    . "  type: object\n  properties:\n    a: {type: integer}\n    b: {type: integer}\n"
    . "  required: [a]\n  additionalProperties: false\n");
sub doc {
    my ($schema, $name, $data, %o) = @_;
    return "---\nschema: $schema\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . ($o{encrypted} ? "  storagePolicy: encrypted\n" : '')
        . ($o{labels} ? "  labels: {$o{labels}}\n" : '')
        . "  layeringDefinition:\n    abstract: " . ($o{abstract} ? 'true' : 'false')
        . "\n    layer: " . ($o{layer} // 'site') . "\n"
        . ($o{parent} ? "    parentSelector: {$o{parent}}\n    actions: [{method: merge, path: .}]\n" : '')
        . ($o{subs} // '') . "data: $data\n";
}
sub validation_policy {
    my ($name, @names) = @_;
    return "---\nschema: deckhand/ValidationPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n"
        . "  name: $name\ndata:\n  validations:\n" . join('', map { "    - name: $_\n" } @names);
}
sub put {
    my ($bucket, $text) = @_;
    my ($r, $d) = $s->yaml('PUT', "$api/buckets/$bucket/documents", $text);
    die "PUT $bucket: $r->{status} $r->{content}\n" unless $r->{status} == 200;
    return $d->[0]{status}{revision};
}
# {name: status} of a revision's validations
sub listed {
    my ($rev) = @_;
    my ($r, $d) = $s->yaml('GET', "$api/revisions/$rev/validations");
    return { map { $_->{name} => $_->{status} } @{ $d->[0]{results} // [] } };
}
sub entry {
    my ($rev, $name) = @_;
    my ($r, $d) = $s->yaml('GET', "$api/revisions/$rev/validations/$name/entries/0");
    return $r->{status} == 200 ? $d->[0] : { http => $r->{status} };
}
sub revision_status {
    my ($rev) = @_;
    my ($r, $d) = $s->yaml('GET', "$api/revisions/$rev");
    return $d->[0]{status};
}
sub listed_status {
    my ($rev) = @_;
    my ($r, $d) = $s->yaml('GET', "$api/revisions");
    my ($one) = grep { $_->{id} == $rev } @{ $d->[0]{results} };
    return $one->{status};
}
sub revisions_count {
    my ($r, $d) = $s->yaml('GET', "$api/revisions");
    return $d->[0]{count};
}

# ---- a document that fails its DataSchema: recorded, and the write lands ----
my ($r, $d) = $s->yaml('PUT', "$api/buckets/strict/documents", policy('site') . $strict
    . doc('example/Strict/v1', 'strict-doc', "{a: not an integer, extra: 1}"));
is $r->{status}, 200, 'a document failing its DataSchema: the write lands (200), as in Deckhand';
my $bad = $d->[0]{status}{revision};
($r, $d) = $s->yaml('GET', "$api/revisions/$bad/documents?metadata.name=strict-doc");
is $d->[0]{data}{a}, 'not an integer', '  the document is stored as written';
my $v = listed($bad);
is $v->{'deckhand-schema-validation'}, 'failure', 'GET validations: deckhand-schema-validation failure';
is $v->{'deckhand-policy-validation'}, 'success', '  deckhand-policy-validation success (every layer is in layerOrder)';
($r, $d) = $s->yaml('GET', "$api/revisions/$bad/validations/deckhand-schema-validation");
is_deeply [ map { [ $_->{id}, $_->{status} ] } @{ $d->[0]{results} } ], [ [ 0, 'failure' ] ],
    '  its entries: one, entry 0, failure';
my $e = entry($bad, 'deckhand-schema-validation');
is $e->{status}, 'failure', 'entries/0: status failure';
is_deeply $e->{validator}, { name => 'deckhand', version => '1.0' }, '  validator deckhand 1.0';
my @errors = @{ $e->{errors} // [] };
is scalar(@errors), 2, '  two errors: the wrong type and the extra key' or diag explain \@errors;
my ($type) = grep { ($_->{path} // '') eq '.data.a' } @errors;
ok $type, '  one at .data.a, naming the field' or diag explain \@errors;
is $type->{schema}, 'example/Strict/v1', '  its document schema';
is $type->{name}, 'strict-doc', '  its document name';
is $type->{layer}, 'site', '  its layer';
is $type->{schema_path}, '.properties.a.type', '  the schema path of the rule it broke';
is_deeply $type->{validation_schema}{required}, ['a'], '  and the schema it was checked against (validation_schema)';
like $type->{message}, qr/type/, '  a message';
my ($extra) = grep { ($_->{message} // '') =~ /extra/ } @errors;
ok $extra && $extra->{path} eq '.data' && $extra->{schema_path} eq '.additionalProperties',
    '  the other names the extra key, at .data, under additionalProperties' or diag explain \@errors;
is revision_status($bad), 'failed', 'GET revisions/{id}: status failed';
is listed_status($bad), 'failed', 'GET revisions lists it failed too';

# the same document fixed: success
my $good = put('strict', policy('site') . $strict . doc('example/Strict/v1', 'strict-doc', '{a: 1}'));
$v = listed($good);
is_deeply $v, { 'deckhand-schema-validation' => 'success', 'deckhand-policy-validation' => 'success' },
    'the document fixed: both succeed' or diag explain $v;
is_deeply entry($good, 'deckhand-schema-validation')->{errors}, [], '  with no errors';
is revision_status($good), 'succeeded', '  and the revision succeeded';

# a DataSchema in another bucket applies; a document is checked as rendered (layered), so a
# required key its parent gives is no failure, and abstract documents are not checked
my $layered = put('layered', doc('example/Strict/v1', 'parent', '{a: 1}', abstract => 1, layer => 'global', labels => 'k: v')
    . doc('example/Strict/v1', 'child', '{b: 2}', parent => 'k: v')
    . doc('example/Strict/v1', 'plain-bad', '{b: 1}'));
is_deeply listed($layered), { 'deckhand-schema-validation' => 'failure', 'deckhand-policy-validation' => 'failure' },
    'layerOrder [site] lacks global: the revision does not render, so the child cannot pass';
@errors = @{ entry($layered, 'deckhand-schema-validation')->{errors} // [] };
like $errors[0]{message}, qr/does not render.*global/, '  the schema validation says why';
is_deeply [ map { "$_->{name} $_->{path} $_->{schema_path}" } grep { $_->{name} } @errors ],
    ['plain-bad .data .required'], '  and still checks the documents that need no rendering';
put('strict', policy('global', 'site') . $strict);
$layered = put('layered', doc('example/Strict/v1', 'parent', '{a: 1}', abstract => 1, layer => 'global', labels => 'k: v')
    . doc('example/Strict/v1', 'child', '{b: 2}', parent => 'k: v')
    . doc('example/Strict/v1', 'abstract-bad', '{a: text}', abstract => 1, layer => 'global'));
is_deeply listed($layered), { 'deckhand-schema-validation' => 'success', 'deckhand-policy-validation' => 'success' },
    'a child missing a required key its parent gives: success (checked after layering); an abstract one is not checked';
my $child_bad = put('layered', doc('example/Strict/v1', 'parent', '{a: 1}', abstract => 1, layer => 'global', labels => 'k: v')
    . doc('example/Strict/v1', 'child', '{b: not a number}', parent => 'k: v'));
@errors = @{ entry($child_bad, 'deckhand-schema-validation')->{errors} // [] };
is_deeply [ map { "$_->{name} $_->{path}" } @errors ], ['child .data.b'],
    'the child failing after layering: one error, naming it and the field';

# ---- a layer missing from layerOrder: deckhand-policy-validation ----
put('layered', '');
my $region = put('regional', doc('example/Kind/v1', 'in-region', '{x: 1}', layer => 'region'));
$v = listed($region);
is $v->{'deckhand-policy-validation'}, 'failure', "a document's layer not in layerOrder: deckhand-policy-validation failure";
is $v->{'deckhand-schema-validation'}, 'success', '  deckhand-schema-validation is not concerned';
$e = entry($region, 'deckhand-policy-validation');
is $e->{status}, 'failure', '  entries/0: failure';
is scalar(@{ $e->{errors} }), 1, '  one error' or diag explain $e;
is_deeply [ @{ $e->{errors}[0] }{qw(schema name layer path)} ],
    [ 'example/Kind/v1', 'in-region', 'region', '.metadata.layeringDefinition.layer' ],
    '  naming the document, its layer and the field';
like $e->{errors}[0]{message}, qr/region.*layerOrder/, '  and saying the layer is not in layerOrder';
is revision_status($region), 'failed', '  the revision failed';
($r, $d) = $s->yaml('GET', "$api/revisions/$region/rendered-documents");
is $r->{status}, 400, '  (rendering it is a 400, as before)';
my $fixed = put('strict', policy('global', 'region', 'site') . $strict);
is listed($fixed)->{'deckhand-policy-validation'}, 'success',
    'a new LayeringPolicy with that layer (in another bucket): success again';

# ---- a ValidationPolicy naming both: success when fine, failure when not ----
my $vp = validation_policy('site-ready', 'deckhand-schema-validation', 'deckhand-policy-validation');
my $fine = put('policy', $vp);
($r, $d) = $s->yaml('GET', "$api/revisions/$fine");
my $p = $d->[0]{validationPolicies}{'site-ready'};
is_deeply { map { $_->{name} => $_->{status} } @{ $p->{validations} // [] } },
    { 'deckhand-schema-validation' => 'succeeded', 'deckhand-policy-validation' => 'succeeded' },
    'a ValidationPolicy naming both built-ins sees them succeeded, not missing' or diag explain $p;
is $p->{status}, 'succeeded', '  the policy succeeded';
is $d->[0]{status}, 'succeeded', '  and the revision';
my $failing = put('policy', $vp . doc('example/Strict/v1', 'no-a', '{b: 1}') . doc('example/Kind/v1', 'lost', '{x: 1}', layer => 'nowhere'));
($r, $d) = $s->yaml('GET', "$api/revisions/$failing");
$p = $d->[0]{validationPolicies}{'site-ready'};
is_deeply { map { $_->{name} => $_->{status} } @{ $p->{validations} // [] } },
    { 'deckhand-schema-validation' => 'failed', 'deckhand-policy-validation' => 'failed' },
    'with a document missing a required key and one in no layer: both failed' or diag explain $p;
is $p->{status}, 'failed', '  the policy failed';
is $d->[0]{status}, 'failed', '  and the revision';
@errors = @{ entry($failing, 'deckhand-schema-validation')->{errors} // [] };
is_deeply [ map { "$_->{name} $_->{path} $_->{schema_path}" } @errors ], ['no-a .data .required'],
    '  the document that fails its schema is named (checked as it is: it needs no rendering)';
($r, $d) = $s->yaml('GET', "$api/revisions");
my ($in_list) = grep { $_->{id} == $failing } @{ $d->[0]{results} };
is $in_list->{validationPolicies}{'site-ready'}{status}, 'failed', '  the listing shows it too';

# ---- rollback: the new revision records its own validations ----
($r, $d) = $s->yaml('POST', "$api/rollback/$bad");
is $r->{status}, 201, 'a rollback to the revision whose document failed';
my $back = $d->[0]{id};
is $d->[0]{status}, 'failed', '  its answer says failed';
$v = listed($back);
is_deeply $v, { 'deckhand-schema-validation' => 'failure', 'deckhand-policy-validation' => 'success' },
    '  it records the same outcome' or diag explain $v;
is_deeply [ sort map { $_->{path} } @{ entry($back, 'deckhand-schema-validation')->{errors} } ], [ '.data', '.data.a' ],
    '  with the same errors';
($r, $d) = $s->yaml('POST', "$api/rollback/$good");
is_deeply listed($d->[0]{id}), { 'deckhand-schema-validation' => 'success', 'deckhand-policy-validation' => 'success' },
    'a rollback to a good revision: success';

# ---- built-in schemas of Deckhand's kinds, and secrets in what is recorded ----
my $secret = sprintf 'write-check-secret-%08x', int rand 0xffffffff;
my $secret_site = put('secrets', doc('deckhand/Passphrase/v1', 'pass', $secret, encrypted => 1)
    . doc('deckhand/Passphrase/v1', 'not-a-string', "{hidden: $secret-2}")
    . dataschema('example/Url/v1', "  type: object\n  properties:\n    url: {type: string, pattern: '^https://'}\n")
    . doc('example/Url/v1', 'app', "{url: 'http://PASSWORD\@host'}",
        subs => "  substitutions:\n    - src: {schema: deckhand/Passphrase/v1, name: pass, path: .}\n"
            . "      dest: {path: .url, pattern: PASSWORD}\n"));
$e = entry($secret_site, 'deckhand-schema-validation');
is_deeply [ sort map { "$_->{name} $_->{path} $_->{schema_path}" } @{ $e->{errors} // [] } ],
    [ 'app .data.url .properties.url.pattern', 'not-a-string .data .type' ],
    'a Passphrase that is no string fails its built-in schema; a substituted secret is checked where it lands'
    or diag explain $e;
($r) = $s->yaml('GET', "$api/revisions/$secret_site/validations/detail");
unlike $r->{content}, qr/\Q$secret\E/, '  no secret is in what is recorded';
put('secrets', '');

# ---- reserved names ----
my $count = revisions_count();
for my $name ('deckhand/Custom/v1', 'metadata/Custom/v1') {
    ($r, $d) = $s->yaml('PUT', "$api/buckets/reserved/documents", dataschema($name, "  type: object\n"));
    is $r->{status}, 400, "a DataSchema named $name: 400";
    like $d->[0]{details}{messageList}[0]{message}, qr/metadata\.name .*reserved/, '  naming metadata.name'
        or diag explain $d;
}
is revisions_count(), $count, '  no revision was made';
($r, $d) = $s->yaml('PUT', "$api/buckets/reserved/documents", dataschema('deckhand/Passphrase/v1', "  type: string\n"));
is $r->{status}, 200, "a DataSchema named for Deckhand's own kind (as Deckhand's own suite writes): 200";
$count = revisions_count();
for my $name ('deckhand-schema-validation', 'deckhand-policy-validation', 'deckhand-anything') {
    ($r, $d) = $s->yaml('POST', "$api/revisions/$good/validations/$name",
        "status: success\nvalidator: {name: someone, version: '1'}\n");
    is $r->{status}, 400, "POST a validation named $name: 400";
    like $d->[0]{message}, qr/validation name .*reserved/, '  naming the validation name';
}
is_deeply [ map { $_->{status} } @{ ($s->yaml('GET', "$api/revisions/$bad/validations/deckhand-schema-validation"))[1][0]{results} } ],
    ['failure'], '  the recorded entries are unchanged';
($r) = $s->yaml('POST', "$api/revisions/$good/validations/site-deckhand-validation",
    "status: success\nvalidator: {name: someone, version: '1'}\n");
is $r->{status}, 201, 'a name with deckhand further in: 201';

# ---- a write of many batches (the threaded feed) records the same ----
my $many = join('', map { doc('example/Strict/v1', "many-$_", '{a: ' . $_ . '}') } 1 .. 299)
    . doc('example/Strict/v1', 'many-last', '{a: last}');
my $big = put('many', $many);
$e = entry($big, 'deckhand-schema-validation');
is_deeply [ map { "$_->{name} $_->{path}" } @{ $e->{errors} // [] } ], ['many-last .data.a'],
    'a write of 300 documents in many batches: the last one fails, recorded' or diag explain $e;
put('many', '');

# ---- a valid site: everything succeeds ----
# (few of its documents have a schema: those are read first, and one of them needs its parent,
# so the revision is rendered after all)
put('strict', policy('global', 'region', 'site') . $strict);
my $site = put('site', validation_policy('ready', 'deckhand-schema-validation')
    . doc('example/Strict/v1', 'base', '{a: 1}', abstract => 1, layer => 'global', labels => 'app: x')
    . doc('example/Strict/v1', 'regional', '{b: 2}', layer => 'region', parent => 'app: x')
    . doc('deckhand/Passphrase/v1', 'pw', 'a-password', encrypted => 1)
    . join('', map { doc('example/Kind/v1', "unchecked-$_", '{n: 1}') } 1 .. 6));
is_deeply listed($site), { 'deckhand-schema-validation' => 'success', 'deckhand-policy-validation' => 'success' },
    'a valid site: both succeed (its document that takes a required key from its parent too)';
is revision_status($site), 'succeeded', '  the revision succeeded';
($r, $d) = $s->yaml('GET', "$api/revisions/$site/rendered-documents");
is $r->{status}, 200, '  and renders';

PurserStack::finish();

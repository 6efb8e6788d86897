#!/usr/bin/perl
# 5002: the document store beyond Deckhand's own suite: the seed's POST documents and
# tombstones, DELETE documents/{schema}/{name}, no-op writes, the organization-scoped paths,
# bad input that leaves the store unchanged, and RBAC denials.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use PurserStack;
use Test::More;

my $s = PurserStack->new;
my $org = $s->env('PURSER_ORG');

sub doc {
    my ($name, %o) = @_;
    my $schema = $o{schema} // 'example/Kind/v1';
    my $layer = $o{layer} // 'site';
    my $data = $o{data} // "  value: $name";
    my $labels = $o{labels} ? "  labels:\n" . join('', map { "    $_\n" } @{ $o{labels} }) : '';
    return "---\nschema: $schema\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . $labels . "  layeringDefinition:\n    abstract: false\n    layer: $layer\ndata:\n$data\n";
}

sub tombstone {
    my ($name, $schema) = @_;
    return "---\nschema: " . ($schema // 'example/Kind/v1')
        . "\nmetadata:\n  schema: metadata/Tombstone/v1\n  name: $name\n";
}

sub revisions_count {
    my ($r, $d) = $s->yaml('GET', '/api/v1.0/revisions');
    return $d->[0]{count};
}

sub names_at {
    my ($rev, $query) = @_;
    my ($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/documents?sort=metadata.name" . ($query // ''));
    return [ map { $_->{metadata}{name} } @$d ];
}

my ($r, $d) = $s->yaml('DELETE', '/api/v1.0/revisions');
is $r->{status}, 204, 'purge';

# ---- POST documents: the seed's write, into ?bucket= (default "default") ----
($r, $d) = $s->yaml('POST', '/api/v1.0/documents', doc('a') . doc('b'));
is $r->{status}, 200, 'POST documents';
is $d->[0]{status}{bucket}, 'default', 'the default bucket';
my $rev1 = $d->[0]{status}{revision};
is $rev1, 1, 'revision ids start at 1 after a purge';
is $d->[0]{metadata}{storagePolicy}, 'cleartext', 'storagePolicy defaults to cleartext';
ok defined $d->[0]{metadata}{replacement} && !$d->[0]{metadata}{replacement}, 'replacement defaults to false';

($r, $d) = $s->yaml('POST', '/api/v1.0/documents?bucket=other', doc('c'));
my $rev2 = $d->[0]{status}{revision};
is $rev2, 2, 'a second POST is revision 2';
is_deeply names_at($rev2), [qw(a b c)], 'POST adds: earlier documents stay';
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev2/documents?metadata.name=a");
is $d->[0]{status}{revision}, $rev1, 'status.revision: where that content first appeared';
is $d->[0]{status}{bucket}, 'default', 'status.bucket';

# ---- no-op writes make no revision ----
($r, $d) = $s->yaml('POST', '/api/v1.0/documents', doc('a') . doc('b'));
is $r->{status}, 200, 'the same POST again';
is $d->[0]{status}{revision}, $rev2, 'answers the latest revision';
is revisions_count(), 2, 'and makes none';
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/default/documents', doc('b') . doc('a'));
is revisions_count(), 2, 'a PUT of the same content in another order makes none either';

# ---- tombstones ----
($r, $d) = $s->yaml('POST', '/api/v1.0/documents', tombstone('a'));
is $r->{status}, 200, 'a tombstone';
my $rev3 = revisions_count();
is $rev3, 3, 'makes a revision';
is_deeply names_at($rev3), [qw(b c)], 'which no longer holds the document';
is_deeply names_at($rev2), [qw(a b c)], 'the revision before is unchanged';
($r, $d) = $s->yaml('POST', '/api/v1.0/documents', tombstone('a'));
is revisions_count(), 3, 'a tombstone for what is gone changes nothing';
($r, $d) = $s->yaml('POST', '/api/v1.0/documents', tombstone('c'));
is $r->{status}, 409, 'a tombstone for a document of another bucket: 409';
like $d->[0]{message}, qr/bucket: other/, 'naming the bucket that owns it';

# ---- DELETE documents/{schema}/{name} ----
($r, $d) = $s->yaml('DELETE', '/api/v1.0/documents/example/Kind/v1/c');
is $r->{status}, 200, 'DELETE documents/{schema}/{name}';
is $d->[0]{status}{bucket}, 'other', 'answers the bucket it was in';
is_deeply names_at(revisions_count()), [qw(b)], 'the document is gone';
($r, $d) = $s->yaml('DELETE', '/api/v1.0/documents/example/Kind/v1/c');
is $r->{status}, 404, 'deleting it again: 404';
is $d->[0]{kind}, 'Status', "Deckhand's Status body";
is $d->[0]{code}, '404 Not Found', 'with the status line as code';
($r, $d) = $s->yaml('POST', '/api/v1.0/documents', doc('with/slash'));
($r, $d) = $s->yaml('DELETE', '/api/v1.0/documents/example/Kind/v1/with%2Fslash');
is $r->{status}, 200, 'a name with a slash, percent-encoded';

# ---- the organization-scoped paths are the same store ----
my ($ra, $da) = $s->yaml('GET', '/api/v1.0/revisions');
my ($rb, $db) = $s->yaml('GET', "/organizations/$org/api/v1.0/revisions");
is $rb->{status}, 200, "/organizations/$org/api/v1.0/revisions";
is_deeply [ map { $_->{id} } @{ $db->[0]{results} } ], [ map { $_->{id} } @{ $da->[0]{results} } ],
    'lists the default organization\'s revisions';
($r, $d) = $s->yaml('GET', '/organizations/no-such-org/api/v1.0/revisions');
is $r->{status}, 404, 'an unknown organization: 404';

# ---- bad input: 4xx naming the field, store unchanged ----
my $before = revisions_count();
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/bad/documents', "---\nschema: a/B/v1\nmetadata: [unclosed\n");
is $r->{status}, 400, 'malformed YAML: 400';
like $d->[0]{message}, qr/line \d+, column \d+/, 'with line and column';
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/bad/documents', doc('x'), undef, 'application/json');
is $r->{status}, 415, 'a body that is not application/x-yaml: 415';
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/bad/documents', doc('x') . doc('x'));
is $r->{status}, 409, 'the same identity twice in a payload: 409';
like $d->[0]{message}, qr/\[example\/Kind\/v1, site\] x/, 'naming it';
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/bad/documents', doc('b'));
is $r->{status}, 409, 'a document another bucket owns: 409';
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/bad/documents',
    "---\nschema: not-a-schema\nmetadata:\n  schema: metadata/Document/v1\n  name: y\n"
    . "  layeringDefinition:\n    abstract: maybe\n    layer: site\n  storagePolicy: sometimes\ndata: {}\n");
is $r->{status}, 400, 'schema violations: 400';
my @list = @{ $d->[0]{details}{messageList} // [] };
is scalar(@list), 3, 'one D001 entry per fault';
ok !(grep { $_->{name} ne 'D001' } @list), 'each named D001';
ok((grep { $_->{message} =~ /metadata\.layeringDefinition\.abstract/ } @list), 'naming the field (abstract)');
ok((grep { $_->{message} =~ /metadata\.storagePolicy/ } @list), 'naming the field (storagePolicy)');
is $list[0]{documents}[0]{name}, 'y', 'and the document';
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/bad/documents', "---\nschema: a/B/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: z\nstatus: {}\n");
is $r->{status}, 400, 'an unknown top-level key: 400';
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/bad/documents',
    "---\nschema: deckhand/LayeringPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n  name: lp1\ndata:\n  layerOrder: [site]\n"
    . "---\nschema: deckhand/LayeringPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n  name: lp2\ndata:\n  layerOrder: [site]\n");
is $r->{status}, 409, 'two LayeringPolicies: 409';
is revisions_count(), $before, 'no bad request made a revision';
is_deeply names_at($before), [qw(b)], 'and the documents are as they were';
($r, $d) = $s->yaml('GET', '/api/v1.0/revisions/999/documents');
is $r->{status}, 404, 'an unknown revision: 404';
($r, $d) = $s->yaml('GET', '/api/v1.0/revisions/abc/documents');
is $r->{status}, 400, 'a revision id that is no number: 400';
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$before/documents?metadata.layeringDefinition.abstract=perhaps");
is $r->{status}, 400, 'abstract=perhaps: 400';
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$before/documents?order=sideways");
is $r->{status}, 400, 'order=sideways: 400';
($r, $d) = $s->yaml('POST', "/api/v1.0/revisions/$before/tags/t1", "- a list\n");
is $r->{status}, 400, 'tag data that is not a mapping: 400';

# ---- labels AND-ed ----
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/labels/documents',
    doc('l1', labels => ['a: x', 'b: y']) . doc('l2', labels => ['a: x']) . doc('l3', labels => ['rack: 72']));
my $rl = $d->[0]{status}{revision};
is_deeply names_at($rl, '&metadata.label=a=x'), [qw(l1 l2)], 'one label';
is_deeply names_at($rl, '&metadata.label=a=x&metadata.label=b=y'), [qw(l1)], 'two labels AND-ed';
is_deeply names_at($rl, '&metadata.label=rack=72'), [qw(l3)], 'a number label matches its text';
is_deeply names_at($rl, '&status.bucket=labels&limit=2&order=desc'), [qw(l3 l2)], 'bucket, order and limit';
# a label is matched whole, key and value: a value holding '=' or ',' is one value
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/labels2/documents',
    doc('m1', labels => ['a: "b=c"']) . doc('m2', labels => ['"a=b": c']) . doc('m3', labels => ['a: b'])
    . doc('m4', labels => ["a: \"x,y\\u00e9\""]));
my $rm = $d->[0]{status}{revision};
is_deeply names_at($rm, '&metadata.label=a=b=c'), [qw(m1)], 'a value holding =: only the key a';
is_deeply names_at($rm, '&metadata.label=a=b'), [qw(m3)], '  a shorter value matches itself only';
is_deeply names_at($rm, '&metadata.label=a=x%2Cy%C3%A9'), [qw(m4)], 'a value holding , and UTF-8';
is_deeply names_at($rm, '&metadata.label=a=x'), [qw(l1 l2)], '  and not a label that starts it';

# ---- migration 0015: labels a content held in the doc_labels table move into its row ----
{
    my $purser = PurserStack::build() . '/purser';
    my $config = $s->dir . '/purser.yaml';
    my ($id) = $s->sql("SELECT id FROM doc_contents WHERE name = 'l1'") =~ /(\d+)/;
    $s->sql('CREATE TABLE doc_labels (content_id BIGINT NOT NULL, label_key VARCHAR(255) NOT NULL,'
        . ' label_value VARCHAR(1024) NOT NULL, PRIMARY KEY (content_id, label_key))'
        . ' DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin');
    $s->sql("INSERT INTO doc_labels VALUES ($id, 'a', 'x'), ($id, 'b', 'y'), ($id, 'kind', 'b=c,d')");
    $s->sql("UPDATE doc_contents SET labels = NULL WHERE id = $id");
    # the database as it was at version 14: later migrations undone, to be run again
    $s->sql('ALTER TABLE memberships DROP COLUMN policy_groups');
    $s->sql('DELETE FROM schema_migrations WHERE version >= 15');
    my $out = `'$purser' -c '$config' migrate 2>&1`;
    is $?, 0, 'migration 0015 run over a label table' or diag $out;
    is_deeply names_at($rl, '&metadata.label=kind=b%3Dc%2Cd'), [qw(l1)], '  its labels are in the row';
    is_deeply names_at($rl, '&metadata.label=a=x&metadata.label=b=y'), [qw(l1)],
        '  every one of them';
    is $s->sql("SHOW TABLES LIKE 'doc_labels'"), '', '  and the table is gone';
}

# ---- validations: entries ----
($r, $d) = $s->yaml('POST', "/api/v1.0/revisions/$rl/validations/promenade-site-validation",
    "status: failure\nvalidator:\n  name: promenade\n  version: 1.1.2\nerrors:\n  - message: bad\n");
is $r->{status}, 201, 'a validation result';
is $d->[0]{id}, 0, 'entry 0';
($r, $d) = $s->yaml('POST', "/api/v1.0/revisions/$rl/validations/promenade-site-validation", "status: success\n");
is $d->[0]{id}, 1, 'entry 1';
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rl/validations");
my ($v) = grep { $_->{name} eq 'promenade-site-validation' } @{ $d->[0]{results} };
is $v->{status}, 'success', 'the list shows the latest entry';
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rl/validations/promenade-site-validation/entries/0");
is $d->[0]{errors}[0]{message}, 'bad', 'an entry in full';
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rl/validations/promenade-site-validation/entries/7");
is $r->{status}, 404, 'an unknown entry: 404';
($r, $d) = $s->yaml('POST', "/api/v1.0/revisions/$rl/validations/x", "status: splendid\n");
is $r->{status}, 400, 'an unknown status: 400';

# ---- a key given twice (issue 17 item 3): refused when the values differ, naming the key, the
# document and the line; taken once when they are equal (Deckhand's own samples do that) ----
{
    my $count = revisions_count();
    my $dup_data = doc('dup1') . doc('dup2', data => "  a: 1\n  b: 2\n  a: 3");
    ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/dups/documents', $dup_data);
    is $r->{status}, 400, 'a key twice in data with different values: 400';
    like $d->[0]{message}, qr/duplicate key 'a' in document 2/, '  naming the key and the document';
    like $d->[0]{message}, qr/line 2[0-9]/, '  and the line';
    (my $dup_meta = doc('dupname')) =~ s/  name: dupname\n/  name: a\n  name: b\n/;
    ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/dups/documents', $dup_meta);
    is $r->{status}, 400, 'metadata name: a, name: b: 400';
    like $d->[0]{message}, qr/duplicate key 'name' in document 1/, '  naming it';
    is revisions_count(), $count, 'no revision was made';
    (my $same = doc('same')) =~ s/  layeringDefinition:/  storagePolicy: cleartext\n  layeringDefinition:/;
    $same =~ s/\ndata:/\n  storagePolicy: cleartext\ndata:/;
    ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/dups/documents', $same);
    is $r->{status}, 200, 'the same key twice with the same value is accepted';
}

# ---- large payloads: the store writes each batch while the next is parsed; a payload that
# fails late (a fault, an identity twice, bad YAML, another bucket's document, all past the
# first batches) is rolled back whole ----
{
    my $big = join '', map { doc("big-$_", labels => ["n: \"$_\""]) } 1 .. 600;
    my $latest = sub {
        my ($r, $d) = $s->yaml('GET', '/api/v1.0/revisions');
        my @ids = map { $_->{id} } @{ $d->[0]{results} };
        return $ids[-1];
    };
    my $held = sub { scalar @{ names_at($latest->()) } };
    my $before = $held->();
    ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/big/documents', $big);
    is $r->{status}, 200, 'PUT of 600 documents';
    is scalar @$d, 600, '  answers all 600';
    is $d->[599]{metadata}{name}, 'big-600', '  in the order sent';
    my $rev = $d->[0]{status}{revision};
    is $held->(), $before + 600, '  the revision holds them';
    ($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/documents?metadata.label=n=577");
    is_deeply [ map { $_->{metadata}{name} } @$d ], ['big-577'], '  their labels are stored';
    my $count = revisions_count();
    ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/big/documents', $big);
    is $r->{status}, 200, 'the same 600 again';
    is $d->[0]{status}{revision}, $rev, '  no new revision';
    is revisions_count(), $count, '  none was made';

    my $late = sub { # the 600 documents, each changed, with $_[0] done to the list
        my @docs = map { doc("big-$_", data => "  value: changed-$_") } 1 .. 600;
        $_[0]->(\@docs);
        return join '', @docs;
    };
    my @cases = (
        ['a fault in document 590', 400, qr/schema must look like/,
         sub { $_[0][589] =~ s/schema: example\/Kind\/v1/schema: nonsense/ }],
        ['document 550 given twice', 409, qr/\[example\/Kind\/v1, site\] big-5 appears more than once/,
         sub { $_[0][549] = doc('big-5') }],
        ['bad YAML at the end', 400, qr/line \d{4}/, sub { push @{ $_[0] }, "---\n[unclosed\n" }],
    );
    for my $c (@cases) {
        my ($what, $status, $message, $change) = @$c;
        ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/big/documents', $late->($change));
        is $r->{status}, $status, "$what: $status";
        like $d->[0]{message}, $message, '  naming it';
        is revisions_count(), $count, '  no revision was made';
    }
    ($r, $d) = $s->yaml('POST', '/api/v1.0/documents?bucket=big2',
                        join('', map { doc("big2-$_") } 1 .. 400) . doc('big-300'));
    is $r->{status}, 409, "a POST whose last document is another bucket's: 409";
    like $d->[0]{message}, qr/big-300 already exists in bucket: big/, '  naming it';
    is revisions_count(), $count, '  no revision was made';
    is $held->(), $before + 600, '  the latest revision holds what it held';
    ($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/documents?metadata.name=big-590");
    is $d->[0]{data}{value}, 'big-590', '  the documents as they were';
}

# ---- RBAC: a reader reads but cannot write or purge; an outsider cannot read ----
my %token;
for my $u (['reader-u', 'reader'], ['outsider-u', undef]) {
    my ($name, $role) = @$u;
    $s->api('POST', '/users', { username => $name });
    $s->api('POST', "/organizations/$org/users", { username => $name, roles => [$role] }) if $role;
    my (undef, $j) = $s->api('POST', "/users/$name/tokens", {});
    $token{$name} = $j->{token};
}
($r, $d) = $s->yaml('GET', '/api/v1.0/revisions', undef, $token{'reader-u'});
is $r->{status}, 200, 'a reader lists revisions';
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/r/documents', doc('r'), $token{'reader-u'});
is $r->{status}, 403, 'a reader cannot write';
like $d->[0]{message}, qr/write_cleartext_document/, 'naming the action';
($r, $d) = $s->yaml('DELETE', '/api/v1.0/revisions', undef, $token{'reader-u'});
is $r->{status}, 403, 'nor purge';
($r, $d) = $s->yaml('GET', '/api/v1.0/revisions', undef, $token{'outsider-u'});
is $r->{status}, 403, 'an outsider cannot read';
($r, $d) = $s->yaml('GET', '/api/v1.0/revisions', undef, '');
is $r->{status}, 401, 'no credentials: 401';

PurserStack::finish();

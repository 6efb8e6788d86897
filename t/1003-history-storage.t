#!/usr/bin/perl
# 1003: the document history costs what changed (issue 36): a revision changing one document
# of a 500-document site adds one row, old revisions still read as they were, and migration
# 0019 converts a history stored one row per document per revision (the previous layout) in
# place, every revision's documents, diffs and the revision list the same before and after.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use PurserStack;
use Test::More;

my $s = PurserStack->new;

sub doc {
    my ($name, $value) = @_;
    return "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . "  layeringDefinition:\n    abstract: false\n    layer: site\ndata:\n  value: $value\n";
}

sub put {
    my ($bucket, @docs) = @_;
    my ($r) = $s->yaml('PUT', "/api/v1.0/buckets/$bucket/documents", join('', @docs));
    is $r->{status}, 200, "PUT $bucket (" . scalar(@docs) . ' documents)';
}

sub rows { ($s->sql('SELECT COUNT(*) FROM doc_revision_documents') =~ /(\d+)/)[0] }

sub latest {
    my ($r, $d) = $s->yaml('GET', '/api/v1.0/revisions');
    return $d->[0]{results}[-1]{id};
}

sub values_at {
    my ($rev, $query) = @_;
    my ($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/documents?sort=metadata.name" . ($query // ''));
    return join ' ', map { "$_->{metadata}{name}=$_->{data}{value}\@$_->{status}{revision}" } @$d;
}

# ---- storage grows with the change, not with the site ----
my @site = map { doc(sprintf('d%03d', $_), 1) } 1 .. 500;
put('site', @site);
my $first = latest();
my $before = rows();
is $before, 500, 'the first revision of 500 documents: 500 rows';
$site[7] = doc('d008', 2);
put('site', @site);
my $second = latest();
is $second, $first + 1, 'a second revision';
is rows() - $before, 1, 'changing one document of 500 adds one row';
put('site', @site[0 .. 498]);
is rows() - $before, 1, 'deleting one adds none';
put('other', doc('x', 1));
is rows() - $before, 2, 'a document in another bucket: one row more';
my $n = latest();
like values_at($first, '&metadata.name=d008'), qr/^d008=1\@$first$/, 'the first revision still holds the old d008';
like values_at($second, '&metadata.name=d008'), qr/^d008=2\@$second$/, 'the second the new one';
my ($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$second/documents");
is scalar(@$d), 500, 'the second revision holds 500 documents';
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$n/documents");
is scalar(@$d), 500, 'the newest 499 + 1';
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$n/documents?status.bucket=site&metadata.name=d500");
is scalar(@$d), 0, '  without d500';

# ---- a history with deletions, re-additions, buckets and a rollback ----
$s->yaml('DELETE', '/api/v1.0/revisions');
put('a', map { doc("a$_", 1) } 1 .. 5);                   # 1
put('a', doc('a1', 2), map { doc("a$_", 1) } 2 .. 5);     # 2
put('a', doc('a1', 2), map { doc("a$_", 1) } 3 .. 5);     # 3: a2 gone
put('a', doc('a1', 2), map { doc("a$_", 1) } 2 .. 5);     # 4: a2 back, same content
put('b', doc('b1', 1));                                    # 5
($r) = $s->yaml('POST', '/api/v1.0/rollback/2');           # 6
is $r->{status}, 201, 'a rollback to revision 2';
put('a', doc('a1', 2), doc('a2', 1), doc('a3', 3), doc('a4', 1), doc('a5', 1)); # 7
put('b', doc('b1', 1), doc('b2', 1));                      # 8
my $last = latest();
is $last, 8, 'eight revisions';
my %seen;
for my $rev (1 .. $last) {
    for my $q ('', '&metadata.name=a2', '&status.bucket=b') {
        my ($res) = $s->request('GET', "/api/v1.0/revisions/$rev/documents?sort=metadata.name$q",
            { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') } });
        $seen{"$rev$q"} = $res->{content};
    }
    $seen{"diff$rev"} = $s->request('GET', "/api/v1.0/revisions/$rev/diff/$last",
        { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') } })->{content};
}
$seen{list} = $s->request('GET', '/api/v1.0/revisions',
    { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') } })->{content};
is values_at(3), 'a1=2@2 a3=1@1 a4=1@1 a5=1@1', 'revision 3 without a2';
is values_at(4), 'a1=2@2 a2=1@4 a3=1@1 a4=1@1 a5=1@1', 'revision 4: a2 back since 4';
is values_at(6), 'a1=2@2 a2=1@4 a3=1@1 a4=1@1 a5=1@1', 'the rollback: revision 2\'s documents, b gone';
is values_at(8), 'a1=2@2 a2=1@4 a3=3@7 a4=1@1 a5=1@1 b1=1@8 b2=1@8', 'revision 8';
my $interval_rows = rows();

# the same history as the previous layout stored it: one row per document per revision
$s->sql(<<'SQL');
CREATE TABLE old_rows AS SELECT m.org_id, r.id AS revision_id, m.content_id, m.bucket_id,
  m.since_revision, m.schema_name, m.layer, m.name, m.abstract, m.encrypted
  FROM doc_revision_documents m JOIN doc_revisions r ON r.org_id = m.org_id
   AND r.id >= m.revision_id AND r.id < m.until_revision;
DELETE FROM doc_revision_documents;
ALTER TABLE doc_revision_documents DROP PRIMARY KEY, ADD PRIMARY KEY (org_id, revision_id, content_id),
  DROP INDEX doc_rd_schema, ADD KEY doc_rd_schema (org_id, revision_id, schema_name, name),
  ADD KEY doc_rd_org_schema (org_id, schema_name, revision_id);
ALTER TABLE doc_revision_documents DROP INDEX doc_rd_revision, DROP COLUMN until_revision;
INSERT INTO doc_revision_documents (org_id, revision_id, content_id, bucket_id, since_revision,
  schema_name, layer, name, abstract, encrypted) SELECT * FROM old_rows;
DROP TABLE old_rows;
DELETE FROM schema_migrations WHERE version >= 19;
SQL
is rows(), 5 + 5 + 4 + 5 + 6 + 5 + 5 + 7, 'the previous layout: a row per document per revision';
my $purser = PurserStack::build() . '/purser';
my $config = $s->dir . '/purser.yaml';
# a conversion interrupted at revision 4 (a trigger makes recording it done fail)
$s->sql('CREATE TABLE doc_rd_converted (org_id BIGINT NOT NULL PRIMARY KEY, revision_id BIGINT NOT NULL)');
$s->sql('CREATE TRIGGER doc_rd_stop BEFORE INSERT ON doc_rd_converted FOR EACH ROW'
    . ' SET NEW.revision_id = IF(NEW.revision_id = 4, NULL, NEW.revision_id)');
my $out = `'$purser' -c '$config' migrate 2>&1`;
isnt $?, 0, 'a conversion stopped half-way fails' or diag $out;
like $out, qr/0019_document_intervals\.sql failed: .*revision_id/, '  with the reason';
like $out, qr/documents of 3 of 8 revisions converted\n/, '  after three revisions';
is $s->sql('SELECT revision_id FROM doc_rd_converted'), "3\n", '  the first three recorded, the fourth rolled back';
$s->sql('DROP TRIGGER doc_rd_stop');
$out = `'$purser' -c '$config' migrate 2>&1`;
is $?, 0, 'migration 0019 over the previous layout, run again' or diag $out;
like $out, qr/0019_document_intervals/, '  named as it runs';
like $out, qr/0019_document_intervals\.sql: documents of 1 of 5 revisions converted\n.*documents of 5 of 5 revisions converted\n/s,
    '  going on from revision 4, with its progress';
is $s->sql("SHOW TABLES LIKE 'doc_rd_converted'"), '', '  its record of progress gone at the end';
is rows(), $interval_rows, '  the history is intervals again';
for my $rev (1 .. $last) {
    for my $q ('', '&metadata.name=a2', '&status.bucket=b') {
        my ($res) = $s->request('GET', "/api/v1.0/revisions/$rev/documents?sort=metadata.name$q",
            { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') } });
        is $res->{content}, $seen{"$rev$q"}, "  revision $rev$q reads as before";
    }
    is $s->request('GET', "/api/v1.0/revisions/$rev/diff/$last",
        { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') } })->{content},
        $seen{"diff$rev"}, "  the diff $rev..$last as before";
}
is $s->request('GET', '/api/v1.0/revisions',
    { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN') } })->{content},
    $seen{list}, '  the revision list as before';
$out = `'$purser' -c '$config' migrate 2>&1`;
like $out, qr/\(0 applied\)/, 'migrate again: nothing to do';
put('b', doc('b1', 1), doc('b2', 2));
is values_at(9), 'a1=2@2 a2=1@4 a3=3@7 a4=1@1 a5=1@1 b1=1@8 b2=2@9', 'a write after the migration';
is values_at(8), 'a1=2@2 a2=1@4 a3=3@7 a4=1@1 a5=1@1 b1=1@8 b2=1@8', '  revision 8 unchanged';
is rows(), $interval_rows + 1, '  one row more';

PurserStack::finish();

# 3009: names are exact (issue 17 item 6): a name is found under exactly its bytes, trailing
# spaces included, on Chef and document routes alike; a NUL is refused, never stored cut; a
# name's length limit is in characters, as the columns count them.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use PurserStack;

my $s = PurserStack->new;
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org";

is $s->sql("SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = 'purser'"
           . " AND collation_name IS NOT NULL AND collation_name <> 'utf8mb4_nopad_bin'"
           . " AND table_name <> 'schema_migrations'"), "0\n",
    'every text column compares byte for byte (NO PAD)';

my ($r) = $s->api('POST', "$base/nodes", { name => 'p2-pad' });
is $r->{status}, 201, 'node p2-pad';
for my $method (qw(GET DELETE)) {
    ($r) = $s->api($method, "$base/nodes/p2-pad%20");
    is $r->{status}, 404, "$method nodes/p2-pad%20 is 404: not p2-pad";
}
($r) = $s->api('GET', "$base/nodes/p2-pad");
is $r->{status}, 200, 'p2-pad is still there';
($r) = $s->api('POST', '/users', { username => 'padded' });
($r) = $s->api('GET', '/users/padded%20');
is $r->{status}, 404, 'users/padded%20 is not user padded';
($r) = $s->api('GET', "/organizations/$org%20");
is $r->{status}, 404, 'an organization name with a trailing space is another name';

sub doc {
    my ($name) = @_;
    return "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . "  layeringDefinition:\n    abstract: false\n    layer: site\ndata:\n  v: 1\n";
}
my ($res, $d) = $s->yaml('PUT', '/api/v1.0/buckets/names/documents', doc('"pad"') . doc('"pad "'));
is $res->{status}, 200, "documents 'pad' and 'pad ' are two documents";
my $rev = $d->[0]{status}{revision};
($res, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/documents?metadata.name=pad%20");
is_deeply [ map { $_->{metadata}{name} } @$d ], ['pad '], "filtering by 'pad ' finds 'pad ' only";
my $count = $s->sql('SELECT COUNT(*) FROM doc_revisions');
($res, $d) = $s->yaml('PUT', '/api/v1.0/buckets/names/documents', doc('"x\\0y"'));
is $res->{status}, 400, 'a name with a NUL is 400';
like $d->[0]{message}, qr/metadata\.name must not contain a NUL/, '  naming the rule';
my $long = "\x{e9}" x 255;
utf8::encode(my $long_bytes = $long);
($res, $d) = $s->yaml('PUT', '/api/v1.0/buckets/names/documents', doc($long_bytes));
is $res->{status}, 200, 'a name of 255 two-byte characters is stored';
($res, $d) = $s->yaml('GET', "/api/v1.0/revisions/" . $d->[0]{status}{revision} . "/documents?metadata.name=" . ('%C3%A9' x 255));
is scalar(@$d), 1, '  and found under exactly that name';
$count = $s->sql('SELECT COUNT(*) FROM doc_revisions');
utf8::encode(my $longer = "\x{e9}" x 256);
($res, $d) = $s->yaml('PUT', '/api/v1.0/buckets/names/documents', doc($longer));
is $res->{status}, 400, 'a name of 256 characters is 400';
my $detail = join ' ', map { $_->{message} // '' } @{ $d->[0]{details}{messageList} // [] };
like $detail, qr/metadata\.name is longer than 255 characters/, '  naming the limit in characters';
unlike $d->[0]{message}, qr/\\x[0-9a-f]{2}|\x{fffd}/, '  and the summary quotes whole characters only';
is $s->sql('SELECT COUNT(*) FROM doc_revisions'), $count, 'no revision was made by a refusal';

PurserStack::finish();

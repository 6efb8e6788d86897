#!/usr/bin/perl
# 5005: GET revisions/{id}/rendered-documents beyond Deckhand's suite: secrets substituted in
# memory only for principals who may read them, cleartext-secrets=false, a render that needs
# what a reader may not see, D002 schema failures that name the schema path and quote no
# value, the LayeringPolicy of an earlier revision, and a render cache that never outlives a
# purge.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use PurserStack;
use Test::More;

my $s = PurserStack->new;
my $org = $s->env('PURSER_ORG');

my $policy = "---\nschema: deckhand/LayeringPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n"
    . "  name: layering-policy\ndata:\n  layerOrder: [global, site]\n";
sub doc {
    my ($schema, $name, $data, %o) = @_;
    return "---\nschema: $schema\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . ($o{encrypted} ? "  storagePolicy: encrypted\n" : '')
        . "  layeringDefinition: {abstract: false, layer: site}\n"
        . ($o{subs} // '') . "data: $data\n";
}
my $secret = sprintf 'rendered-secret-%08x', int rand 0xffffffff;
my $subs = "  substitutions:\n    - src: {schema: deckhand/Passphrase/v1, name: db-pass, path: .}\n"
    . "      dest: {path: .url, pattern: PASSWORD}\n";

my ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/site/documents',
    $policy . doc('deckhand/Passphrase/v1', 'db-pass', $secret, encrypted => 1)
    . doc('example/App/v1', 'app', "{url: 'postgres://app:PASSWORD\@db'}", subs => $subs)
    . doc('example/Plain/v1', 'plain', '{a: 1}'));
is $r->{status}, 200, 'a site with an encrypted source';
my $rev = $d->[0]{status}{revision};

sub rendered {
    my ($query, $token) = @_;
    return $s->yaml('GET', "/api/v1.0/revisions/$rev/rendered-documents$query", undef, $token);
}
($r, $d) = rendered('?metadata.name=app');
is $r->{status}, 200, 'rendered';
is $d->[0]{data}{url}, "postgres://app:$secret\@db", 'the secret is substituted for an admin';
is $d->[0]{status}{bucket}, 'site', 'rendered documents keep their status';
($r, $d) = rendered('?cleartext-secrets=false&sort=metadata.name');
my %by = map { $_->{metadata}{name} => $_ } @$d;
is $by{app}{data}{url}, '[redacted]', 'cleartext-secrets=false redacts what came from a secret';
is $by{'db-pass'}{data}, '[redacted]', 'and the encrypted document itself';
is $by{plain}{data}{a}, 1, 'and leaves the rest';
unlike $r->{content}, qr/\Q$secret\E/, 'the secret is nowhere in that answer';
($r, $d) = rendered('?schema=example&sort=schema');
is_deeply [ map { $_->{schema} } @$d ], [qw(example/App/v1 example/Plain/v1)], 'filters and sort apply after rendering';

$s->api('POST', '/users', { username => 'reader-u' });
$s->api('POST', "/organizations/$org/users", { username => 'reader-u', roles => ['reader'] });
my (undef, $tok) = $s->api('POST', '/users/reader-u/tokens', {});
($r, $d) = rendered('', $tok->{token});
is $r->{status}, 409, 'a reader cannot render what needs a secret it may not see';
like $d->[0]{message}, qr/db-pass was not found/, 'the source is missing for it, as in Deckhand';
unlike $r->{content}, qr/\Q$secret\E/, 'and learns nothing of it';

my $logs = join '', $s->log_lines('purser-fcgi.log');
unlike $logs, qr/\Q$secret\E/, 'the secret is in no log';

# Schema validation: a DataSchema, and a built-in one for an encrypted Passphrase.
my $dataschema = "---\nschema: deckhand/DataSchema/v1\nmetadata:\n  schema: metadata/Control/v1\n"
    . "  name: example/Typed/v1\ndata:\n  type: object\n  properties:\n    port: {type: integer, maximum: 65535}\n"
    . "  required: [port]\n";
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/typed/documents',
    $dataschema . doc('example/Typed/v1', 'bad-port', '{port: 99999}')
    . doc('deckhand/Passphrase/v1', 'not-a-string', "{hidden: $secret-2}", encrypted => 1));
my $bad = $d->[0]{status}{revision};
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$bad/rendered-documents");
is $r->{status}, 400, 'documents that fail their schemas: 400';
my @list = @{ $d->[0]{details}{messageList} // [] };
ok((grep { $_->{name} eq 'D002' && $_->{message} =~ m{#/properties/port/maximum} } @list),
    'a D002 entry names the schema path') or diag explain \@list;
ok((grep { $_->{documents}[0]{name} eq 'not-a-string' && $_->{message} =~ m{#/type} } @list),
    'the encrypted document fails the built-in Passphrase schema');
unlike $r->{content}, qr/\Q$secret\E|99999/, 'no value is quoted';

# A revision without a LayeringPolicy renders with the latest earlier one.
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/typed/documents', '');
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/site/documents',
    doc('deckhand/Passphrase/v1', 'db-pass', $secret, encrypted => 1)
    . doc('example/App/v1', 'app', "{url: 'postgres://app:PASSWORD\@db'}", subs => $subs));
my $without = $d->[0]{status}{revision};
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$without/documents?schema=deckhand/LayeringPolicy");
is scalar(@$d), 0, 'the newest revision holds no LayeringPolicy';
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$without/rendered-documents?metadata.name=app");
is $r->{status}, 200, 'it renders with the one of an earlier revision';
is $d->[0]{data}{url}, "postgres://app:$secret\@db", 'substituted';

# The render cache never outlives a purge: revision 1 again, other content.
($r, $d) = $s->yaml('GET', '/api/v1.0/revisions/1/rendered-documents?metadata.name=plain');
is $d->[0]{data}{a}, 1, 'revision 1 rendered (and cached)';
$s->yaml('DELETE', '/api/v1.0/revisions');
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/site/documents', $policy . doc('example/Plain/v1', 'plain', '{a: 2}'));
is $d->[0]{status}{revision}, 1, 'after a purge the new content is revision 1 again';
for (1 .. 4) { # every worker answers at least once
    ($r, $d) = $s->yaml('GET', '/api/v1.0/revisions/1/rendered-documents?metadata.name=plain');
    is $d->[0]{data}{a}, 2, "the new revision 1 renders anew (request $_)";
}

# Documents with equal parts share them while the revision is read (base/json_intern.h):
# layering, a substitution and a redaction into one must leave the others as they were.
{
    my $same = "{config: {url: none, port: 1}, list: [a, b]}";
    my $to_url = "  substitutions:\n    - src: {schema: deckhand/Passphrase/v1, name: twin-pass, path: .}\n"
        . "      dest: {path: .config.url}\n";
    my $layered = sub {
        my ($name) = @_;
        return "---\nschema: example/Twin/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
            . "  labels: {twin: child}\n  layeringDefinition:\n    abstract: false\n    layer: site\n"
            . "    parentSelector: {twin: parent}\n    actions: [{method: merge, path: .config}]\n"
            . "data: {config: {port: 2}}\n";
    };
    ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/twins/documents',
        doc('deckhand/Passphrase/v1', 'twin-pass', $secret, encrypted => 1)
        . "---\nschema: example/Twin/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: parent\n"
        . "  labels: {twin: parent}\n  layeringDefinition: {abstract: false, layer: global}\ndata: $same\n"
        . doc('example/Twin/v1', 'plain-a', $same) . doc('example/Twin/v1', 'plain-b', $same)
        . doc('example/Twin/v1', 'substituted', $same, subs => $to_url)
        . $layered->('layered-a') . $layered->('layered-b'));
    is $r->{status}, 200, 'documents with equal data, metadata parts and status: stored';
    my $twins = $d->[0]{status}{revision};
    for my $query ('?schema=example/Twin', '?schema=example/Twin&cleartext-secrets=false') {
        ($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$twins/rendered-documents$query");
        my %twin = map { $_->{metadata}{name} => $_->{data} } @$d;
        my $url = $query =~ /cleartext/ ? '[redacted]' : $secret;
        is_deeply $twin{substituted}, { config => { url => $url, port => 1 }, list => [qw(a b)] },
            "$query: the substituted one has the value";
        is_deeply $twin{$_}, { config => { url => 'none', port => 2 }, list => [qw(a b)] },
            "$query: $_ has its parent's data merged with its own"
            for 'layered-a', 'layered-b';
        is_deeply $twin{$_}, { config => { url => 'none', port => 1 }, list => [qw(a b)] },
            "$query: $_ is as stored"
            for 'plain-a', 'plain-b', 'parent';
    }
    ($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$twins/documents?schema=example/Twin&metadata.name=plain-a");
    is_deeply $d->[0]{data}, { config => { url => 'none', port => 1 }, list => [qw(a b)] },
        'and the stored document after rendering is unchanged';
}

# A DataSchema that is no valid schema: 400 naming it.
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/bad-schema/documents',
    "---\nschema: deckhand/DataSchema/v1\nmetadata:\n  schema: metadata/Control/v1\n  name: example/Bad/v1\n"
    . "data:\n  type: string\n  pattern: '('\n" . doc('example/Bad/v1', 'bad', 'text'));
my $bad_schema = $d->[0]{status}{revision};
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$bad_schema/rendered-documents");
is $r->{status}, 400, 'a DataSchema that does not compile: 400';
like $d->[0]{message}, qr{the DataSchema for example/Bad/v1: schema #: a pattern}, 'naming it and the fault';

PurserStack::finish();

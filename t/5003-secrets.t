#!/usr/bin/perl
# 5003: encrypted documents (SPEC §7): sealed at rest with AES-256-GCM under the keyring,
# bound to their owner, shown only to principals with read_encrypted_document, redacted on
# request, absent from database dumps and logs; and key rotation with purser rotate-keys
# while the service keeps serving.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use PurserStack;
use Test::More;

my $s = PurserStack->new;
my $org = $s->env('PURSER_ORG');
my $dir = $s->dir;
my $purser = PurserStack::build() . '/purser';
my $config = $s->env('PURSER_CONFIG');

sub sql { my $out = $s->sql($_[0]); chomp $out; return $out }

sub cli { my $out = `'$purser' -c '$config' @_ 2>&1`; return ($? >> 8, $out) }

sub secret_doc {
    my ($name, $value) = @_;
    return "---\nschema: deckhand/Passphrase/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . "  storagePolicy: encrypted\n  layeringDefinition:\n    abstract: false\n    layer: site\ndata: $value\n";
}

sub plain_doc {
    my ($name) = @_;
    return "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . "  layeringDefinition:\n    abstract: false\n    layer: site\ndata:\n  public: yes\n";
}

sub data_of {
    my ($rev, $name, $token, $query) = @_;
    my ($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/documents?metadata.name=$name" . ($query // ''), undef, $token);
    return $r->{status} == 200 ? ($d->[0] ? $d->[0]{data} : undef) : "status $r->{status}";
}

my $mode = (stat("$dir/secrets/keyring"))[2] & 07777;
is sprintf('%o', $mode), '600', 'make run made the keyring, readable by its owner only';

my @secrets = map { sprintf 'purser-secret-%d-%08x', $_, int rand 0xffffffff } 1 .. 3;
my ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/secrets/documents',
    secret_doc('db-password', $secrets[0]) . secret_doc('api-key', $secrets[1]) . plain_doc('public'));
is $r->{status}, 200, 'PUT encrypted documents';
my $rev = $d->[0]{status}{revision};
unlike $r->{content}, qr/purser-secret/, 'the answer does not echo the secrets';

is data_of($rev, 'db-password'), $secrets[0], 'an admin reads the secret back';
is data_of($rev, 'db-password', undef, '&cleartext-secrets=false'), '[redacted]', 'cleartext-secrets=false redacts';
is data_of($rev, 'public', undef, '&cleartext-secrets=false')->{public}, 1, 'and leaves cleartext alone';

# A reader may read cleartext documents but not encrypted ones: it never sees them.
$s->api('POST', '/users', { username => 'reader-u' });
$s->api('POST', "/organizations/$org/users", { username => 'reader-u', roles => ['reader'] });
my (undef, $tok) = $s->api('POST', '/users/reader-u/tokens', {});
my $reader = $tok->{token};
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/documents", undef, $reader);
is_deeply [ map { $_->{metadata}{name} } @$d ], ['public'], 'a reader sees only the cleartext document';
unlike $r->{content}, qr/purser-secret/, 'and no secret';
# ... unless it asks for them redacted (issue 38 item 6): then it sees that they exist, never
# their values, in YAML and in JSON.
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/documents?cleartext-secrets=false", undef, $reader);
is_deeply [ sort map { "$_->{metadata}{name}:" . (ref $_->{data} ? 'object' : $_->{data}) } @$d ],
    ['api-key:[redacted]', 'db-password:[redacted]', 'public:object'], 'a reader asking cleartext-secrets=false: the encrypted ones listed, redacted';
is_deeply [ sort map { $_->{metadata}{storagePolicy} // 'cleartext' } @$d ], ['cleartext', 'encrypted', 'encrypted'], '  marked encrypted';
unlike $r->{content}, qr/purser-secret/, '  and no secret';
($r) = $s->request('GET', "/organizations/$org/api/v1.0/revisions/$rev/documents?cleartext-secrets=false",
    { headers => { authorization => "Bearer $reader", accept => 'application/json' } });
is $r->{status}, 200, '  as JSON too';
unlike $r->{content}, qr/purser-secret/, '  without a secret';
like $r->{content}, qr/"db-password".*\[redacted\]|\[redacted\].*"db-password"/s, '  redacted';

# Unchanged secrets are recognised (by opening them): no new revision.
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/secrets/documents',
    secret_doc('db-password', $secrets[0]) . secret_doc('api-key', $secrets[1]) . plain_doc('public'));
is $d->[0]{status}{revision}, $rev, 'the same secrets again make no revision';

# At rest: ciphertext only, sealed under slot 1, in no dump and no log.
is sql("SELECT COUNT(*) FROM doc_contents WHERE encrypted = 1 AND key_id = 1"), 2, 'two records sealed under slot 1';
my $dump = `mariadb-dump --no-defaults --socket='$dir/run/mariadb.sock' -uroot --hex-blob=0 purser 2>&1`;
ok length($dump) > 1000 && $dump =~ /doc_contents/, 'mariadb-dump dumps the store';
ok !(grep { index($dump, $_) >= 0 } @secrets[0, 1]), 'the dump holds no secret in plaintext';
my $logs = join "\n", map { $s->log_lines($_) } qw(purser-fcgi.log nginx-access.log nginx-error.log);
ok !(grep { index($logs, $_) >= 0 } @secrets[0, 1]), 'nor do the logs';

# The associated data binds a sealed value to its document: moved onto another, it does not open.
my $saved = sql("SELECT HEX(data) FROM doc_contents WHERE name = 'api-key'");
sql("UPDATE doc_contents c, doc_contents o SET c.data = o.data WHERE c.name = 'api-key' AND o.name = 'db-password'");
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/documents?metadata.name=api-key");
is $r->{status}, 500, "another document's ciphertext does not open";
unlike $r->{content}, qr/purser-secret/, 'and nothing leaks';
sql("UPDATE doc_contents SET data = UNHEX('$saved') WHERE name = 'api-key'");
is data_of($rev, 'api-key'), $secrets[1], 'restored, it opens again';

# ---- rotation ----
my ($rc, $out) = cli('remove-key', 1);
isnt $rc, 0, 'removing a slot that still seals records is refused';
like $out, qr/still seals 2 record/, 'saying how many';
($rc, $out) = cli('add-key');
is $rc, 0, 'add-key' or diag $out;
like $out, qr/added slot 2/, 'slot 2';
my $master = $s->master_pid;
my @old = $s->worker_pids;
kill 'HUP', $master;
ok PurserStack::wait_for(20, sub { my @now = $s->worker_pids; @now && !grep { my $o = $_; grep { $_ == $o } @now } @old }),
    'SIGHUP: the workers reload the keyring';
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/secrets2/documents', secret_doc('new-one', $secrets[2]));
is $r->{status}, 200, 'a new secret';
is sql("SELECT key_id FROM doc_contents WHERE name = 'new-one'"), 2, 'is sealed under the newest slot';
is data_of($rev, 'db-password'), $secrets[0], 'old records still open under slot 1';

($rc, $out) = cli('rotate-keys', '--batch', 1);
is $rc, 0, 'rotate-keys' or diag $out;
my @progress = $out =~ /^re-sealed (\d+) record\(s\) under slot 2; (\d+) left$/mg;
ok @progress >= 4, 'reports progress batch by batch' or diag $out;
is $progress[-1], 0, 'until none is left';
is sql("SELECT COUNT(*) FROM doc_contents WHERE encrypted = 1 AND key_id <> 2"), 0, 'every record is under slot 2';
is data_of($rev, 'db-password'), $secrets[0], 'the service reads the re-sealed records';
is data_of($rev + 1, 'new-one'), $secrets[2], 'and the new one';
($rc, $out) = cli('rotate-keys');
like $out, qr/re-sealed 0 record\(s\).*0 left/, 'a second run finds nothing to do (resumable)';
($rc, $out) = cli('remove-key', 1);
is $rc, 0, 'slot 1 can go now' or diag $out;
kill 'HUP', $master;
@old = $s->worker_pids;
PurserStack::wait_for(20, sub { my @now = $s->worker_pids; @now && !grep { my $o = $_; grep { $_ == $o } @now } @old });
is data_of($rev, 'api-key'), $secrets[1], 'without slot 1 every secret still opens';
$dump = `mariadb-dump --no-defaults --socket='$dir/run/mariadb.sock' -uroot purser 2>&1`;
ok !(grep { index($dump, $_) >= 0 } @secrets), 'after rotation the dump still holds no secret';

PurserStack::finish();

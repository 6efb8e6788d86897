# 1001: migrations are applied in order and recorded; running again is a no-op; a failing
# migration stops with its error and start-up refuses to go on.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Time::HiRes qw(sleep);
use PurserStack;

my $s = PurserStack->new(workers => 1);
my $purser = PurserStack::build() . '/purser';
my $config = $s->dir . '/purser.yaml';

my @files = sort map { m{/([^/]+\.sql)$} } glob(PurserStack::root() . '/sql/*.sql');
my @versions = map { /^0*(\d+)_/ ? $1 : () } @files;
ok scalar(@files) >= 1, 'there are migrations in sql/';

my $rows = $s->sql('SELECT version, name FROM schema_migrations ORDER BY version');
my @recorded = map { [split /\t/] } split /\n/, $rows;
is_deeply [ map { $_->[0] } @recorded ], \@versions, 'every migration is recorded, in order';
is_deeply [ map { $_->[1] } @recorded ], \@files, 'under its file name';
my $stamps = $s->sql('SELECT applied_at FROM schema_migrations ORDER BY version');

my $out = `'$purser' -c '$config' migrate 2>&1`;
is $?, 0, 'migrate again succeeds';
like $out, qr/\(0 applied\)/, 'and applies nothing';
is $s->sql('SELECT applied_at FROM schema_migrations ORDER BY version'), $stamps,
    'the records are untouched';
is $s->sql('SELECT COUNT(*) FROM settings WHERE name = "instance_id"'), "1\n",
    'the data of a migration is there once';

# 0026: the statement of GET /metrics' key-expiry gauge (taken from lib/auth/key_expiry.c as it
# is) reads one entry of principal_keys_expires, not the table (t/8010 holds its value).
{
    open my $fh, '<', PurserStack::root() . '/lib/auth/key_expiry.c' or die;
    my $c = do { local $/; <$fh> };
    my ($statement) = $c =~ /store_query\(store, arena, &rows,\s*((?:"(?:[^"\\]|\\.)*"\s*)+),/;
    $statement = join '', $statement =~ /"((?:[^"\\]|\\.)*)"/g;
    like $statement, qr/MIN\(expires_at\).*FROM principal_keys WHERE expires_at >/, 'the gauge\'s statement, from key_expiry.c';
    # (a live key: with none the plan says "No matching min/max row", found in the index too)
    $s->sql("INSERT INTO principal_keys (principal_id, name, public_key, expires_at)"
        . " SELECT id, 'expiry-probe', 'x', UTC_TIMESTAMP() + INTERVAL 1 YEAR FROM principals LIMIT 1");
    my $plan = $s->sql("EXPLAIN $statement");
    like $plan, qr/Select tables optimized away/, '  reads one index entry (EXPLAIN: Select tables optimized away)' or diag $plan;
    $s->sql("DELETE FROM principal_keys WHERE name = 'expiry-probe'");
    like $s->sql('SHOW INDEX FROM principal_keys WHERE Key_name = "principal_keys_expires"'), qr/expires_at/,
        '  the index 0026 adds';
}

# A rolling upgrade (docs/operator/upgrades.md): a newer release's migrations applied while this
# build still serves. Expand-only ones (recorded with contract 0) leave it serving, its deep
# health too; one that contracts the schema (a file with `-- purser: contract`) stops it with
# 503 naming that migration, until the future rows are gone again. 0019 is recorded as one.
is $s->sql('SELECT version FROM schema_migrations WHERE contract = 1'), "19\n",
    'the migrations that contract the schema are recorded as such (0019)';
{
    my $now = $versions[-1];
    my ($expand, $contract) = ($now + 1, $now + 2);
    my $org_path = '/organizations/' . $s->env('PURSER_ORG') . '/nodes';
    $s->sql("INSERT INTO schema_migrations (version, name) VALUES ($expand, '${expand}_a_newer_expand.sql')");
    sleep 1.2; # (a worker reads the schema again at most once a second)
    is +($s->api('GET', $org_path))[0]{status}, 200, 'a newer schema that only expanded: this build still serves';
    my $h = $s->get('/healthz/deep');
    is $h->{status}, 200, '  and its deep health says so';
    $s->sql("INSERT INTO schema_migrations (version, name, contract) VALUES ($contract, '${contract}_a_newer_contract.sql', 1)");
    sleep 1.2;
    my ($r) = $s->api('GET', $org_path);
    is $r->{status}, 503, 'past a migration that contracts the schema: it refuses';
    like $r->{content}, qr/past migration $contract, which contracts/, '  naming that migration';
    is $s->get('/healthz/deep')->{status}, 503, '  and its deep health is 503';
    $s->sql("DELETE FROM schema_migrations WHERE version > $now");
    sleep 1.2;
    is +($s->api('GET', $org_path))[0]{status}, 200, 'its own schema again: it serves';
}

# Forget the records from the newest migration that creates tables on: applying it again must
# fail (its tables exist), name the migration, and leave the schema where it was. (Later
# migrations may be written to be idempotent; one that creates a table cannot be.)
my ($failing) = grep {
    open my $fh, '<', PurserStack::root() . "/sql/$files[$_]" or die; local $/; <$fh> =~ /^CREATE TABLE (?!IF NOT EXISTS)/m
} reverse 0 .. $#files;
my ($file, $version) = ($files[$failing], $versions[$failing]);
$s->sql("DELETE FROM schema_migrations WHERE version >= $version");
$out = `'$purser' -c '$config' migrate 2>&1`;
isnt $?, 0, 'a failing migration makes migrate fail';
like $out, qr/migration \Q$file\E failed/, 'the error names the migration';
like $out, qr/already exists/, "and gives the server's reason";
is $s->sql("SELECT COUNT(*) FROM schema_migrations WHERE version >= $version"), "0\n",
    'neither it nor any later one is recorded';

my $r = $s->get('/healthz/deep');
is $r->{status}, 503, 'deep health is 503 while the schema is behind';
like PurserStack::json($r)->{error}{message}, qr/schema is at version/, 'saying why';

$s->stop;
my $start = `'@{[PurserStack::tool()]}' start '@{[$s->dir]}' 2>&1`;
isnt $?, 0, 'the stack refuses to start with a failing migration';
like $start, qr/migrations failed/, 'and says so';
like $start, qr/\Q$file\E/, 'naming the migration';
$s->{stopped} = 0; # the database it started must still be stopped at the end

PurserStack::finish();

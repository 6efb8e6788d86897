# 8004: backups that restore (docs/operator/backups.md). A stack filled with every kind of
# data (t/lib/PurserFill.pm) in two organizations is backed up by `purser backup` while a
# client keeps writing to a third; a fresh stack, with a keyring of its own, refuses the backup
# without the backup's keyring and leaves its database as it was; with it, `purser restore
# --replace` loads it. The exports of the filled organizations, encrypted data opened, are then
# byte for byte those of the original; the written organization holds a prefix of the writes
# (the dump is one transaction's view); the restored stack serves, its tokens and its sealed
# secrets included. Neither the dump nor the output holds a secret or the keyring.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use POSIX ();
use MIME::Base64 ();
use Time::HiRes qw(time sleep);
use PurserStack;
use PurserFill;

my $purser = PurserStack::build() . '/purser';
my $tmp = tempdir('purser-backup-XXXXXX', TMPDIR => 1, CLEANUP => 1);
sub run_out { my $out = `@_ 2>&1`; return ($? >> 8, $out) }
sub slurp { local (@ARGV, $/) = @_; return -e $_[0] ? scalar <> : '' }
sub mode { sprintf '%o', (stat $_[0])[2] & 07777 }

my $a = PurserStack->new;
my $conf_a = $a->env('PURSER_CONFIG');
my @orgs = ('bk1', 'bk2');
PurserFill::fill($a, $_) for @orgs;
$a->must('org', 'POST', '/organizations', { name => 'busy' });

# a client writing, one node after another, each acknowledged before the next
my $count_file = "$tmp/written";
my $writer = fork // die;
if (!$writer) {
    my ($n, $failed) = (0, 0);
    while (!-e "$tmp/stop") {
        my ($r) = $a->call('POST', '/organizations/busy/nodes', { name => 'busy-' . ($n + 1), normal => { n => $n + 1 } });
        if ($r->{status} == 201) {
            $n++;
            open my $fh, '>', "$count_file.new" or POSIX::_exit(1);
            print $fh "$n $failed\n";
            close $fh;
            rename "$count_file.new", $count_file;
        } else {
            $failed++;
        }
    }
    POSIX::_exit(0);
}
sub written { my ($n, $f) = split ' ', slurp($count_file) || '0 0'; return ($n, $f) }
sleep 0.1 until (written())[0] >= 20;

my ($before) = written();
my $t0 = time;
my ($rc, $out) = run_out("'$purser' -c '$conf_a' backup -o '$tmp/purser.sql' --keyring '$tmp/keyring.copy'");
my $backup_seconds = time - $t0;
my ($after) = written();
is $rc, 0, 'purser backup while a client writes' or diag $out;
note sprintf 'backup: %.2fs, %d bytes; nodes written during it: %d', $backup_seconds, -s "$tmp/purser.sql", $after - $before;
like $out, qr/keyring copied to \Q$tmp\E\/keyring\.copy: keep it apart/, '  the keyring copied apart, as asked';
is mode("$tmp/purser.sql"), '600', '  the dump: mode 600';
is mode("$tmp/keyring.copy"), '600', '  the keyring copy: mode 600';
is slurp("$tmp/keyring.copy"), slurp("$a->{dir}/secrets/keyring"), '  the keyring copy is the keyring';
my $dump = slurp("$tmp/purser.sql");
like $dump, qr/^-- purser-backup: purser [\d.]+, schema \d+, database purser\n-- purser-backup: keyring slots 1:[0-9a-f]{64}\n/,
    '  its header: version, schema, the keyring\'s slots by fingerprint';
unlike $dump, qr/s3cr3t-passphrase/, '  no encrypted value in clear';
my ($key) = slurp("$a->{dir}/secrets/keyring") =~ /^1 (\S+)/m;
ok $key && index($dump, $key) < 0 && index($out, $key) < 0, '  no key of the keyring in the dump or the output';
my $admin_token = slurp("$a->{dir}/secrets/admin-token") =~ s/\s+$//r;
ok index($dump, $admin_token) < 0, '  no token in clear (tokens are stored hashed)';
# the client goes on writing after the backup
PurserStack::wait_for(10, sub { (written())[0] >= $after + 5 });
open my $stop, '>', "$tmp/stop" or die;
close $stop;
waitpid $writer, 0;
my ($total, $failed) = written();
is $failed, 0, "the writer's $total requests all succeeded";

my %export_a = map { $_ => PurserFill::export($purser, $conf_a, $_) } @orgs;
like $export_a{bk1}, qr/s3cr3t-passphrase-bk1/, 'the export holds the encrypted data, opened';

# ---- a fresh stack ----
my $b = PurserStack->new;
my $conf_b = $b->env('PURSER_CONFIG');
my $b_tables = $b->sql('SELECT COUNT(*) FROM organizations');
($rc, $out) = run_out("'$purser' -c '$conf_b' restore '$tmp/purser.sql' --replace");
isnt $rc, 0, 'restore with the fresh stack\'s own keyring: refused';
like $out, qr/lacks slot 1 as the backup's records were sealed with it: give the backup's keyring/, '  naming the slot';
($rc, $out) = run_out("'$purser' -c '$conf_b' restore '$tmp/purser.sql' --keyring '$tmp/keyring.copy'");
isnt $rc, 0, 'restore into a database with tables, without --replace: refused';
like $out, qr/has tables: restore into an empty database, or give --replace/, '  saying so';
is $b->sql('SELECT COUNT(*) FROM organizations'), $b_tables, '  the database untouched';
is slurp("$b->{dir}/secrets/keyring") ne slurp("$tmp/keyring.copy"), 1, '  and its keyring';

$b->stop;
system("'" . PurserStack::tool() . "' start-db '$b->{dir}' > /dev/null") == 0 or die;
# a keyring that gained a slot since the backup (purser add-key) still opens it
{
    open my $fh, '>', "$tmp/keyring.more" or die;
    print $fh slurp("$tmp/keyring.copy"), "2 ", MIME::Base64::encode_base64(join('', map { chr int rand 256 } 1 .. 32), ''), "\n";
    close $fh;
    chmod 0600, "$tmp/keyring.more";
    ($rc, $out) = run_out("'$purser' -c '$conf_b' restore '$tmp/purser.sql' --replace --keyring '$tmp/keyring.more'");
    is $rc, 0, 'restore with the backup\'s keyring and a newer slot: accepted' or diag $out;
    like slurp("$b->{dir}/secrets/keyring"), qr/^2 /m, '  that keyring in place';
}
$t0 = time;
($rc, $out) = run_out("'$purser' -c '$conf_b' restore '$tmp/purser.sql' --replace --keyring '$tmp/keyring.copy'");
my $restore_seconds = time - $t0;
is $rc, 0, 'purser restore --replace --keyring' or diag $out;
note sprintf 'restore: %.2fs', $restore_seconds;
like $out, qr/restored .* \(schema \d+, 0 migration\(s\) applied\), keyring in place/, '  loaded, current, the keyring in place';
is slurp("$b->{dir}/secrets/keyring"), slurp("$tmp/keyring.copy"), '  the keyring is the backup\'s';
is mode("$b->{dir}/secrets/keyring"), '600', '  mode 600';

for my $org (@orgs) {
    my $export_b = PurserFill::export($purser, $conf_b, $org);
    ok length $export_b > 1000, "$org: exported from the restored database";
    ok $export_b eq $export_a{$org}, "  byte for byte the original's export, with secrets (" . length($export_b) . ' bytes)';
}
my @restored = split /\n/, $b->sql("SELECT name FROM nodes WHERE org_id = (SELECT id FROM organizations WHERE name = 'busy')");
my %have = map { $_ => 1 } @restored;
my $k = @restored;
ok $k >= $before && $k <= $after, "the written organization: $k nodes, between those acknowledged as the backup began ($before) and ended ($after)";
is_deeply [grep { !$have{"busy-$_"} } 1 .. $k], [], '  busy-1 to busy-' . $k . ', no gap: one transaction\'s view';

# the restored stack serves with the original's tokens and keyring
for my $f (qw(admin-token admin.pem org)) {
    system('cp', '-p', "$a->{dir}/secrets/$f", "$b->{dir}/secrets/$f") == 0 or die;
}
$b->start or die "the restored stack did not start\n" . $b->{start_output};
my ($r, $d) = $b->call('GET', '/organizations/bk1/nodes/web1');
is $r->{status}, 200, 'the restored stack serves, with the original\'s admin token';
($r) = $b->request('GET', '/organizations/bk1/api/v1.0/revisions/' . $b->sql(
    "SELECT MAX(id) FROM doc_revisions WHERE org_id = (SELECT id FROM organizations WHERE name = 'bk1')") =~ s/\s+$//r
    . '/rendered-documents?metadata.name=child', { headers => { authorization => 'Bearer ' . $b->env('PURSER_ADMIN_TOKEN') } });
is $r->{status}, 200, '  a rendered document whose substitution reads the encrypted secret';
like $r->{content}, qr/s3cr3t-passphrase-bk1/, '  opened with the restored keyring';

PurserStack::finish();

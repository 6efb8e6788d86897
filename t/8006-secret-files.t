#!/usr/bin/perl
# 8006: every file the programs write that holds a key, a token or a secret (issue 49) is a new
# file of mode 600 in the place of whatever was at its name: `purser backup --keyring K`,
# `purser add-key` (the keyring), `purser create-user --key-out F`, `purser export --secrets -o
# F`, `purserctl login` (the contexts file) and `purserctl export --secrets -f F`. Each runs with
# a symlink planted at the names its temporary file had or has (NAME.new, NAME.tmp), or at the
# name itself, pointing at a file of the test's: that file never receives the secret. A stale NAME.tmp of mode 644, or
# the file itself at 644, leaves the result at 600 all the same.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use PurserStack;

my $s = PurserStack->new(workers => 1);
my $org = $s->env('PURSER_ORG');
my $admin = $s->env('PURSER_ADMIN_TOKEN');
my $work = tempdir('purser-secret-files-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $purser = PurserStack::build() . '/purser';
my $purserctl = PurserStack::build() . '/purserctl';
my $config = $s->dir . '/purser.yaml';
my $keyring = do { my ($k) = `cat '$config'` =~ /^\s*keyring:\s*"?([^"\n]+)"?/m; $k };
ok $keyring && -f $keyring, "the stack's keyring ($keyring)";
$ENV{HOME} = $work;
umask 022;

sub mode { my @st = lstat $_[0]; return @st ? sprintf('%o', $st[2] & 07777) : 'none' }
sub slurp { my ($f) = @_; open my $fh, '<', $f or return undef; local $/; return <$fh> }
sub run_quiet { my $out = `@_ 2>&1`; return ($? >> 8, $out) }
# plant(NAME): a symlink at NAME.new and NAME.tmp to an empty file each of the test's; returns
# a check that both are still empty (and the links still there or replaced, never written through).
my $n = 0;
sub plant {
    my ($name) = @_;
    my @victims;
    for my $suffix ('.new', '.tmp') {
        my $victim = "$work/victim-" . ++$n;
        open my $fh, '>', $victim or die; close $fh;
        chmod 0644, $victim;
        unlink "$name$suffix";
        symlink $victim, "$name$suffix" or die "symlink: $!";
        push @victims, $victim;
    }
    return sub { return join ',', map { -s $_ ? "$_ written" : () } @victims };
}

# ---- purser backup --keyring K ----
my $k = "$work/keyring-copy";
my $untouched = plant($k);
my ($rc, $out) = run_quiet("'$purser' -c '$config' backup -o '$work/backup.sql' --keyring '$k'");
is $rc, 0, 'purser backup --keyring K, with symlinks planted at K.new and K.tmp' or diag $out;
is $untouched->(), '', '  the files they point at received nothing';
is mode($k), '600', '  K is a file of mode 600';
is slurp($k), slurp($keyring), '  holding the keyring';
ok !-e "$k.new" || -l "$k.new", '  (no K.new of the program\'s left)';

# ---- purser add-key: the keyring itself ----
$untouched = plant($keyring);
chmod 0600, $keyring;
($rc, $out) = run_quiet("'$purser' -c '$config' add-key");
is $rc, 0, 'purser add-key, with symlinks planted beside the keyring' or diag $out;
is $untouched->(), '', '  the files they point at received nothing';
is mode($keyring), '600', '  the keyring is a file of mode 600';
like slurp($keyring), qr/^2 /m, '  with its new slot';

# ---- purser create-user --key-out F, over a file of mode 644 ----
my $key = "$work/dora.pem";
{ open my $fh, '>', $key or die; print $fh "old\n"; close $fh; chmod 0644, $key; }
$untouched = plant($key);
($rc, $out) = run_quiet("'$purser' -c '$config' create-user dora --key-out '$key'");
is $rc, 0, 'purser create-user --key-out F (F there at 644, symlinks planted beside it)' or diag $out;
is $untouched->(), '', '  the files they point at received nothing';
is mode($key), '600', '  F is now mode 600';
like slurp($key) // '', qr/BEGIN (RSA )?PRIVATE KEY/, '  holding the private key';
my $key_victim = "$work/victim-key";
{ open my $fh, '>', $key_victim or die; close $fh; }
symlink $key_victim, "$work/eve.pem" or die;
($rc, $out) = run_quiet("'$purser' -c '$config' create-user eve --key-out '$work/eve.pem'");
is $rc, 0, 'purser create-user --key-out F, F a symlink planted to a file of the test\'s' or diag $out;
is -s $key_victim, 0, '  the file it points at received nothing';
ok !-l "$work/eve.pem" && mode("$work/eve.pem") eq '600', '  F is a file of mode 600 in the symlink\'s place';

# ---- purser export --secrets -o F ----
my $export = "$work/export.yaml";
$untouched = plant($export);
($rc, $out) = run_quiet("'$purser' -c '$config' export $org --secrets -o '$export'");
is $rc, 0, 'purser export --secrets -o F, symlinks planted beside it' or diag $out;
is $untouched->(), '', '  the files they point at received nothing';
is mode($export), '600', '  F is mode 600';

# ---- purserctl login: the contexts file ----
my $ctl_config = "$work/ctl/config.yaml";
mkdir "$work/ctl", 0700;
$ENV{PURSER_CTL_CONFIG} = $ctl_config;
{ open my $fh, '>', "$ctl_config.tmp" or die; print $fh "stale\n"; close $fh; chmod 0644, "$ctl_config.tmp"; }
($rc, $out) = run_quiet("'$purserctl' login --from '${\ $s->dir}/stack.env'");
is $rc, 0, 'purserctl login with a stale config.yaml.tmp of mode 644' or diag $out;
is mode($ctl_config), '600', '  config.yaml is mode 600';
like slurp($ctl_config), qr/\Q$admin\E/, '  holding the token';
chmod 0644, $ctl_config;
$untouched = plant($ctl_config);
($rc, $out) = run_quiet("'$purserctl' login --from '${\ $s->dir}/stack.env' --name second");
is $rc, 0, 'purserctl login again: config.yaml at 644, symlinks at config.yaml.new and .tmp' or diag $out;
is $untouched->(), '', '  the files they point at received nothing';
is mode($ctl_config), '600', '  config.yaml is mode 600 again';
like slurp($ctl_config), qr/second/, '  with the new context';

# ---- purserctl export --secrets -f F ----
my $ctl_export = "$work/ctl-export.yaml";
$untouched = plant($ctl_export);
($rc, $out) = run_quiet("'$purserctl' export --secrets -f '$ctl_export'");
is $rc, 0, 'purserctl export --secrets -f F, symlinks planted beside it' or diag $out;
is $untouched->(), '', '  the files they point at received nothing';
is mode($ctl_export), '600', '  F is mode 600';
like slurp($ctl_export), qr/kind: /, '  holding the export';

PurserStack::finish();

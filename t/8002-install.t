# 8002: make install. Installs into a temporary prefix (the paths written into the unit, the
# configuration and the nginx site are that prefix's), then checks what it put where: the
# programs, the admin pages, the policy, the configuration (not overwritten by a second
# install), the systemd unit (systemd-analyze verify, with its hardening), the nginx site
# (nginx -t), and runs the installed programs: purser check-config and init-keyring on the
# installed configuration, and a whole stack served by the installed purser-fcgi.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use PurserStack;

my $root = PurserStack::root();
my $build = PurserStack::build();
my $tmp = tempdir('purser-install-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my ($prefix, $etc) = ("$tmp/usr", "$tmp/etc");
my @make = ('make', '-s', '-C', $root, 'install-files', "BUILD=$build", "PREFIX=$prefix", "SYSCONFDIR=$etc",
    "RUNDIR=$tmp/run", PurserStack::asan() ? ('ASAN=1') : ());
mkdir "$tmp/run";

sub run_out { my $out = `@_ 2>&1`; return ($? >> 8, $out) }
sub mode { sprintf '%o', (stat $_[0])[2] & 07777 }

my ($rc, $out) = run_out(@make);
is $rc, 0, 'make install-files into a temporary prefix' or diag $out;
is mode("$prefix/bin/purser"), '755', 'purser in bin/';
is mode("$prefix/sbin/purser-fcgi"), '755', 'purser-fcgi in sbin/';
is mode("$prefix/bin/purserctl"), '755', 'purserctl in bin/';
{
    my $completion = "$prefix/share/bash-completion/completions/purserctl";
    ok -s $completion, 'its bash completion where bash-completion looks for it';
    is system('bash', '-n', $completion), 0, '  a script bash reads';
}
# the manual pages, written from each program's --help (help2man) with dist/man's sections
for (['man1/purser.1', 'purser', qr/add\\-member ORG USER ROLE/],
     ['man1/purserctl.1', 'purserctl', qr/operations/],
     ['man8/purser-fcgi.8', 'purser-fcgi', qr/SIGHUP/]) {
    my ($page, $program, $says) = @$_;
    open my $fh, '<', "$prefix/share/man/$page" or do { fail("the manual page $page: $!"); next };
    my $text = do { local $/; <$fh> };
    like $text, qr/^\.SH NAME\n\Q$program\E \\- \S/m, "the manual page $page names $program";
    like $text, $says, '  says what its --help or its sections say';
    like $text, qr/^\.SH "SEE ALSO"/m, '  and what to read next';
}
ok -f "$prefix/share/purser/admin/index.html", 'the admin pages in share/purser/admin';
{
    my @src = map { s{^\Q$root/nginx/admin/\E}{}r } grep { -f } glob "$root/nginx/admin/* $root/nginx/admin/*/*";
    my @missing = grep { !-f "$prefix/share/purser/admin/$_" } @src;
    is_deeply \@missing, [], '  every one of them (' . @src . ' files)';
}
ok -f "$prefix/share/purser/policies/default.yaml", 'the default policy in share/purser/policies';
is mode("$etc/purser/purser.yaml"), '640', 'the configuration in etc/purser, mode 640';
ok -f "$etc/purser/policy.yaml", 'the policy in etc/purser';
ok -f "$prefix/share/doc/purser/examples/purser.yaml", 'an example configuration in share/doc/purser/examples';
ok -f "$etc/sysusers.d/purser.conf", 'the user, for systemd-sysusers';

# the owner: the unit runs as purser, which must read the configuration (root may change it)
SKIP: {
    skip 'install-owner needs root', 4 if $> != 0;
    system('touch', "$etc/purser/keyring") == 0 or die;
    ($rc, $out) = run_out('make', '-s', '-C', $root, 'install-owner', "SYSCONFDIR=$etc", "SYSUSERSDIR=$etc/sysusers.d");
    is $rc, 0, 'make install-owner (the user purser, the configuration\'s group)' or diag $out;
    my ($uid, $gid) = (getpwnam('purser'))[2, 3];
    ok defined $uid, '  the user purser exists';
    is_deeply [(stat "$etc/purser/purser.yaml")[4, 5], mode("$etc/purser/purser.yaml")], [0, $gid, '640'],
        '  purser.yaml root:purser 640: purser reads it';
    is_deeply [(stat "$etc/purser/keyring")[4, 5], mode("$etc/purser/keyring")], [$uid, $gid, '600'],
        '  the keyring purser:purser 600';
    unlink "$etc/purser/keyring";
}
($rc, $out) = run_out('make', '-s', '-C', $root, 'install-owner', "DESTDIR=$tmp/dest", "SYSCONFDIR=$etc");
like $out, qr/as root on the host: systemd-sysusers/, 'with DESTDIR, install-owner says what to do on the host';

# what an operator edited stays
open my $fh, '>>', "$etc/purser/purser.yaml" or die;
print $fh "# edited by the operator\n";
close $fh;
($rc, $out) = run_out(@make);
is $rc, 0, 'a second install';
like $out, qr/keeping \Q$etc\E\/purser\/purser\.yaml/, '  says it keeps the configuration';
like do { local (@ARGV, $/) = "$etc/purser/purser.yaml"; <> }, qr/edited by the operator/, '  and keeps it';

# the systemd unit
my $unit = "$etc/systemd/system/purser-fcgi.service";
my $text = do { local (@ARGV, $/) = $unit; <> };
like $text, qr{^ExecStart=\Q$prefix\E/sbin/purser-fcgi$}m, 'the unit starts the installed purser-fcgi';
like $text, qr/^User=purser$/m, '  as its own user';
like $text, qr/^$_$/m, "  $_" for qw(NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=yes ProtectHome=yes
    CapabilityBoundingSet=);
($rc, $out) = run_out('systemd-analyze', 'verify', '--man=no', $unit);
is $rc, 0, 'systemd-analyze verify passes' or diag $out;
is $out, '', '  without a warning';

# the nginx site, checked by nginx with the snippets it includes
{
    system("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=localhost "
        . "-keyout '$etc/purser/tls-key.pem' -out '$etc/purser/tls-cert.pem' > /dev/null 2>&1") == 0 or die 'openssl';
    mkdir "$etc/purser/tls";
    rename "$etc/purser/tls-key.pem", "$etc/purser/tls/key.pem";
    rename "$etc/purser/tls-cert.pem", "$etc/purser/tls/cert.pem";
    open my $conf, '>', "$etc/nginx/nginx.conf" or die;
    print $conf "load_module /usr/lib/nginx/modules/ngx_nchan_module.so;\npid $tmp/nginx.pid;\n"
        . "events {}\nhttp {\n include /etc/nginx/mime.types;\n access_log off;\n include sites-available/purser;\n}\n";
    close $conf;
    ($rc, $out) = run_out('nginx', '-t', '-q', '-p', "$tmp/", '-e', "$tmp/nginx-error.log", '-c', "$etc/nginx/nginx.conf");
    is $rc, 0, 'nginx -t accepts the installed site and its snippets' or diag $out;
}

# the installed purser on the installed configuration
($rc, $out) = run_out("'$prefix/bin/purser'", '-c', "'$etc/purser/purser.yaml'", 'check-config');
isnt $rc, 0, 'check-config refuses the installed configuration before the keyring exists';
like $out, qr/secrets\.keyring/, '  naming secrets.keyring';
($rc, $out) = run_out("'$prefix/bin/purser'", '-c', "'$etc/purser/purser.yaml'", 'init-keyring');
is $rc, 0, 'purser init-keyring makes it' or diag $out;
is mode("$etc/purser/keyring"), '600', '  mode 600';
($rc, $out) = run_out("'$prefix/bin/purser'", '-c', "'$etc/purser/purser.yaml'", 'check-config');
is $rc, 0, 'then check-config passes' or diag $out;

# a stack served by the installed programs
my $bin = "$tmp/as-build";
mkdir $bin;
symlink "$prefix/sbin/purser-fcgi", "$bin/purser-fcgi" or die;
symlink "$prefix/bin/purser", "$bin/purser" or die;
{
    local $ENV{PURSER_BUILD} = $bin;
    my $s = PurserStack->new;
    my $master = $s->master_pid;
    like readlink("/proc/$master/exe") // '', qr{^\Q$prefix\E/sbin/purser-fcgi$}, 'the stack runs the installed purser-fcgi';
    is $s->get('/healthz/deep')->{status}, 200, '  its database is migrated (by the installed purser) and current';
    my ($r) = $s->api('POST', '/organizations/' . $s->env('PURSER_ORG') . '/nodes', { name => 'installed' });
    is $r->{status}, 201, '  and it writes';
    $s->stop;
}

done_testing;

# 8003: the Debian package (debian/, docs/operator/install.md). Builds it with
# dpkg-buildpackage from a copy of the tree (the worktree stays clean), checks it with lintian,
# installs it with apt on this machine, then does what docs/operator/install.md's steps do: a database (a
# private MariaDB here, on its own socket), its password, TLS, purser migrate, purser-fcgi
# started the way the installed unit's ExecStartPre and ExecStart lines say (its user, groups,
# environment and runtime directory), nginx serving the installed site on free loopback ports,
# and GET /healthz/deep through it. Then apt remove (the configuration, the keyring and the
# database password stay) and apt purge (they go; the database, the operator's, stays).
# Everything it started or installed is stopped, purged and removed at the end, also on failure.
# The system's own MariaDB and nginx services are never started (policy-rc.d forbids it).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use PurserStack;

plan skip_all => 'installs a package: needs root' if $> != 0;
for my $tool (qw(dpkg-buildpackage dh lintian apt-get setpriv)) {
    plan skip_all => "$tool is not installed (tools/deps --build)" if system("command -v $tool > /dev/null") != 0;
}
$ENV{PATH} .= ':/usr/sbin:/sbin';

my $root = PurserStack::root();
my $tmp = tempdir('purser-deb-XXXXXX', TMPDIR => 1, CLEANUP => 1);
chmod 0755, $tmp; # apt reads the .deb as _apt; purser reaches the database's socket
my $apt = 'DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=600';
my (%started, $installed, $made_policy_rc, $made_rundir);

sub run_out { my $out = `@_ 2>&1`; return ($? >> 8, $out) }
sub mode { my @s = stat $_[0]; return @s ? sprintf('%o', $s[2] & 07777) : 'absent' }
sub owner {
    my @s = stat $_[0];
    return 'absent' unless @s;
    return (getpwuid($s[4]))[0] . ':' . (getgrgid($s[5]))[0] . ' ' . mode($_[0]);
}
sub slurp { local (@ARGV, $/) = @_; return -e $_[0] ? scalar <> : '' }
sub pkg_status { my $s = `dpkg-query -W -f='\${db:Status-Abbrev}' purser 2>/dev/null`; $s =~ s/\s+$//; return $s }

sub cleanup {
    for my $name (qw(nginx purser-fcgi)) {
        my $pid = delete $started{$name} or next;
        kill 'TERM', $pid;
        for (1 .. 100) { last unless kill 0, $pid; waitpid $pid, 1; select undef, undef, undef, 0.1 }
        kill 'KILL', $pid if kill 0, $pid;
        waitpid $pid, 0;
    }
    system("'$root/tools/stack' stop-db '$tmp' > /dev/null 2>&1") if delete $started{mariadb};
    system("$apt purge purser > /dev/null 2>&1") if $installed && pkg_status() ne '';
    $installed = 0;
    system('rm', '-rf', '/run/purser') if $made_rundir;
    $made_rundir = 0;
    unlink '/usr/sbin/policy-rc.d' if $made_policy_rc;
    $made_policy_rc = 0;
}
END { cleanup() }
$SIG{INT} = $SIG{TERM} = sub { cleanup(); exit 1 };

# A purser package another run left behind would hide what this one installs.
if (pkg_status() ne '') {
    diag 'a purser package is installed already: purging it first';
    system("$apt purge purser > /dev/null 2>&1") == 0 or BAIL_OUT('cannot purge the purser package installed before');
}
# Maintainer scripts start no service (the system's MariaDB and nginx stay stopped).
if (!-e '/usr/sbin/policy-rc.d') {
    open my $fh, '>', '/usr/sbin/policy-rc.d' or die $!;
    print $fh "#!/bin/sh\n# t/8003: no service starts while it installs packages\nexit 101\n";
    close $fh;
    chmod 0755, '/usr/sbin/policy-rc.d';
    $made_policy_rc = 1;
}
BAIL_OUT('/run/purser exists: something else runs purser on this machine') if -e '/run/purser';

# --- build, from a copy of the tree's files (tracked and new, not ignored) ---
my $status_before = `cd '$root' && git status --porcelain`;
my $src = "$tmp/src/purser";
system('mkdir', '-p', $src) == 0 or die;
is system("cd '$root' && git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null "
        . "| tar -xf - -C '$src'"), 0, 'a copy of the tree to build from';
my $t0 = time;
my ($rc, $out) = run_out("cd '$src' && DEB_BUILD_OPTIONS=parallel=2 dpkg-buildpackage -us -uc -b");
is $rc, 0, 'dpkg-buildpackage -us -uc -b builds it' or diag substr($out, -4000);
my ($deb) = glob "$tmp/src/purser_*.deb";
ok $deb && -s $deb, '  purser_VERSION_ARCH.deb' or BAIL_OUT('no package');
note sprintf 'package %s: %d bytes, built in %ds', $deb =~ s{.*/}{}r, -s $deb, time - $t0;
is `cd '$root' && git status --porcelain`, $status_before, '  the worktree untouched (git status as before)';

($rc, $out) = run_out("lintian --fail-on error '$tmp/src/'purser_*.changes");
is $rc, 0, 'lintian reports no error' or diag $out;
is_deeply [grep { /^E: / } split /\n/, $out], [], '  (no E: line)';
note "lintian:\n$out";
unlike $out, qr/no-manual-page/, '  nor a program without its manual page';
is_deeply [grep { /^W: / } split /\n/, $out], [], '  nor any warning (debian/purser.lintian-overrides says why its one exception is right)';
my $contents = `dpkg-deb -c '$deb'`;
like $contents, qr{ \./usr/share/man/$_\.gz$}m, "  the manual page $_ (help2man, from its --help)"
    for qw(man1/purser.1 man1/purserctl.1 man8/purser-fcgi.8);
like $contents, qr{ \./usr/share/doc/purser/manual/$_$}m, "  the manual's $_ (docs/, pandoc; nginx's /manual/), not compressed"
    for qw(index.html reference/configuration.html assets/manual.css);
like $contents, qr{ \./usr/share/doc/purser/examples/monitoring/$_$}m, "  dist/monitoring/$_"
    for qw(purser-dashboard.json purser.rules.yml);

# Depends: the runtime set only
my $depends = `dpkg-deb -f '$deb' Depends`;
chomp $depends;
my @depends = map { s/\s*\(.*//r } split /,\s*/, $depends =~ s/\s+$//r;
my %runtime = map { $_ => 1 } split /\n/, `'$root/tools/deps' --list runtime`;
my %dev = map { $_ => 1 } split /\n/, `'$root/tools/deps' --list build` . `'$root/tools/deps' --list development`;
ok keys %runtime > 5 && keys %dev > 10, 'tools/deps lists its runtime and development sets';
is_deeply [grep { !$runtime{$_} && !/^(libc6|adduser)$/ } @depends], [], "Depends: names runtime packages only ($depends)";
is_deeply [grep { $dev{$_} && !$runtime{$_} } @depends], [], '  and none of the build or test ones';
for my $name (qw(nginx libnginx-mod-nchan mariadb-client libfcgi0ldbl libmariadb3)) {
    ok((grep { $_ eq $name } @depends), "  Depends: $name");
}

# --- install ---
($rc, $out) = run_out("$apt install --no-install-recommends '$deb'");
$installed = 1;
is $rc, 0, 'apt-get install ./purser_*.deb' or diag $out;
is pkg_status(), 'ii', '  installed';
my @pw = getpwnam 'purser';
ok @pw, 'the user purser';
ok @pw && $pw[2] < 1000, '  a system user';
is $pw[8], '/usr/sbin/nologin', '  without a shell' if @pw;
is owner('/usr/sbin/purser-fcgi'), 'root:root 755', 'purser-fcgi in /usr/sbin';
is owner('/usr/bin/purser'), 'root:root 755', 'purser and purserctl in /usr/bin';
ok -x '/usr/bin/purserctl', '  purserctl';
ok -f '/usr/share/purser/admin/index.html', 'the admin pages';
ok -f '/usr/share/purser/policies/default.yaml', 'the default policy';
ok -f '/usr/share/purser/sql/0001_settings.sql', 'the migrations';
is owner('/etc/purser'), 'root:purser 750', '/etc/purser: root:purser 750';
is owner('/etc/purser/purser.yaml'), 'root:purser 640', '/etc/purser/purser.yaml: root:purser 640 (purser reads it)';
is owner('/etc/purser/keyring'), 'purser:purser 600', 'a keyring made at install: purser:purser 600';
is owner('/var/lib/purser'), 'purser:www-data 750', '/var/lib/purser (the git repositories): purser:www-data 750, fcgiwrap reads it';
my $conffiles = `dpkg-query -W -f='\${Conffiles}' purser`;
like $conffiles, qr{^ \Q$_\E [0-9a-f]{32}$}m, "conffile $_"
    for qw(/etc/purser/purser.yaml /etc/purser/policy.yaml /etc/nginx/sites-available/purser
    /etc/nginx/snippets/purser-fastcgi.conf /etc/nginx/snippets/purser-watch.conf);
my $unit = '/lib/systemd/system/purser-fcgi.service';
ok -f $unit, 'the unit';
ok -l '/etc/systemd/system/multi-user.target.wants/purser-fcgi.service', '  enabled';
($rc, $out) = run_out('systemd-analyze', 'verify', '--man=no', $unit);
is $rc, 0, '  systemd-analyze verify passes' or diag $out;

# --- the operator's steps (docs/operator/install.md), then purser-fcgi as its unit starts it ---
system("'$root/tools/stack' start-db '$tmp' > '$tmp/start-db.log' 2>&1") == 0 or BAIL_OUT('MariaDB: ' . slurp("$tmp/start-db.log"));
$started{mariadb} = 1;
chmod 0755, "$tmp/run";
system('install', '-o', 'root', '-g', 'purser', '-m', '640', "$tmp/secrets/db-password", '/etc/purser/db-password') == 0 or die;
{
    my $yaml = slurp('/etc/purser/purser.yaml');
    $yaml =~ s{^(\s+socket:) /run/mysqld/mysqld\.sock}{$1 $tmp/run/mariadb.sock}m or die 'no database.socket';
    open my $fh, '>', '/etc/purser/purser.yaml' or die;
    print $fh $yaml;
    close $fh;
}
system("mkdir -p /etc/purser/tls && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
    . "-subj /CN=localhost -keyout /etc/purser/tls/key.pem -out /etc/purser/tls/cert.pem > /dev/null 2>&1") == 0 or die;
chmod 0600, '/etc/purser/tls/key.pem';

my $text = slurp($unit);
my %u;
for my $key (qw(User Group SupplementaryGroups RuntimeDirectory RuntimeDirectoryMode ExecStartPre ExecStart UMask)) {
    ($u{$key}) = $text =~ /^\Q$key\E=(.*)$/m;
}
my %env = map { split /=/, $_, 2 } $text =~ /^Environment=(.*)$/mg;
is_deeply [@u{qw(User Group SupplementaryGroups)}], [qw(purser www-data purser)],
    "the unit: User=purser Group=www-data SupplementaryGroups=purser (nginx's workers reach /run/purser)";
my @as_unit = ('env', map({ "$_=$env{$_}" } sort keys %env), 'setpriv', "--reuid=$u{User}", "--regid=$u{Group}",
    "--groups=$u{SupplementaryGroups}", '--');
my $rundir = "/run/$u{RuntimeDirectory}";
system('install', '-d', '-o', $u{User}, '-g', $u{Group}, '-m', $u{RuntimeDirectoryMode}, $rundir) == 0 or die;
$made_rundir = 1;

($rc, $out) = run_out(@as_unit, qw(purser migrate));
is $rc, 0, 'purser migrate, as purser' or diag $out;
like $out, qr/schema at version \d+/, '  the schema is current';
($rc, $out) = run_out(@as_unit, split ' ', $u{ExecStartPre});
is $rc, 0, "ExecStartPre ($u{ExecStartPre}) as purser: the configuration, the policy and the keyring are readable"
    or diag $out;

my $pid = fork // die;
if (!$pid) {
    open STDIN, '<', '/dev/null';
    open STDOUT, '>', "$tmp/purser-fcgi.log";
    open STDERR, '>&', \*STDOUT;
    umask oct $u{UMask};
    setpgrp;
    exec @as_unit, split ' ', $u{ExecStart};
    exit 127;
}
$started{'purser-fcgi'} = $pid;
my $socket = "$rundir/purser-fcgi.sock";
for (1 .. 100) { last if -S $socket || !kill 0, $pid; select undef, undef, undef, 0.1 }
ok -S $socket, "ExecStart ($u{ExecStart}) as purser opens its socket" or diag slurp("$tmp/purser-fcgi.log");
is((getpwuid((stat "/proc/$pid")[4]))[0], 'purser', '  running as purser');

# nginx: the installed site (its snippets, the admin pages' alias) on free loopback ports
my ($https, $http) = split ' ', `bash -c '. "$root/tools/processes.sh"; free_ports 2' | tr '\n' ' '`;
{
    my $site = slurp('/etc/nginx/sites-available/purser');
    $site =~ s/^\s*listen \[::\]:\d+.*\n//mg;
    $site =~ s/^(\s*listen) 443 ssl;/$1 127.0.0.1:$https ssl;/m or die;
    $site =~ s/^(\s*listen) 80;/$1 127.0.0.1:$http;/m or die;
    $site =~ s{^(\s*include) snippets/}{$1 /etc/nginx/snippets/}mg; # (relative to nginx.conf's folder)
    open my $fh, '>', "$tmp/site.conf" or die;
    print $fh $site;
    close $fh;
    open $fh, '>', "$tmp/nginx.conf" or die;
    print $fh "load_module /usr/lib/nginx/modules/ngx_nchan_module.so;\nuser www-data;\npid $tmp/nginx.pid;\n"
        . "daemon off;\nerror_log $tmp/nginx-error.log;\nevents {}\nhttp {\n include /etc/nginx/mime.types;\n"
        . " access_log off;\n include $tmp/site.conf;\n}\n";
    close $fh;
}
($rc, $out) = run_out('nginx', '-t', '-q', '-p', '/etc/nginx/', '-c', "$tmp/nginx.conf");
is $rc, 0, 'nginx -t accepts the installed site' or diag $out;
my $npid = fork // die;
if (!$npid) {
    open STDIN, '<', '/dev/null';
    open STDOUT, '>', '/dev/null';
    setpgrp;
    exec 'nginx', '-p', '/etc/nginx/', '-c', "$tmp/nginx.conf";
    exit 127;
}
$started{nginx} = $npid;
my $status = '';
for (1 .. 100) {
    $status = `curl -sk -o '$tmp/deep.json' -w '%{http_code}' https://127.0.0.1:$https/healthz/deep`;
    last if $status eq '200';
    select undef, undef, undef, 0.1;
}
is $status, '200', 'GET /healthz/deep through the installed site: 200'
    or diag slurp("$tmp/deep.json") . slurp("$tmp/nginx-error.log") . slurp("$tmp/purser-fcgi.log");
is `curl -sk -o /dev/null -w '%{http_code}' https://127.0.0.1:$https/admin/`, '200', '  and the admin pages';
is `curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$http/healthz`, '301', '  plain HTTP sends to HTTPS';

for my $name (qw(nginx purser-fcgi)) {
    my $p = delete $started{$name};
    kill 'TERM', $p;
    waitpid $p, 0;
}
system('rm', '-rf', $rundir);
$made_rundir = 0;

# --- an upgrade of the package: what the operator changed and made stays ---
{
    my $keyring = slurp('/etc/purser/keyring');
    my $changelog = slurp("$src/debian/changelog");
    my ($version) = $changelog =~ /^purser \(([^)]+)\)/ or die;
    my $next = "$version+upgrade1";
    open my $fh, '>', "$src/debian/changelog" or die;
    print $fh "purser ($next) unstable; urgency=medium\n\n  * t/8003: a newer version to upgrade to.\n\n"
        . " -- t8003 <t8003\@example.invalid>  Thu, 01 Jan 2026 00:00:00 +0000\n\n$changelog";
    close $fh;
    # -nc: the programs built above are this version's too (only debian/changelog changed), so
    # the package is made again from them, as a maintainer's rebuild does, not compiled twice
    ($rc, $out) = run_out("cd '$src' && DEB_BUILD_OPTIONS=parallel=2 dpkg-buildpackage -us -uc -b -nc");
    is $rc, 0, "a newer version ($next) builds" or diag substr($out, -3000);
    my ($newer) = glob "$tmp/src/purser_${next}_*.deb";
    ($rc, $out) = run_out("$apt install --no-install-recommends '$newer'");
    is $rc, 0, '  apt-get install of it over the installed one' or diag $out;
    is `dpkg-query -W -f='\${Version}' purser`, $next, '  installed';
    like slurp('/etc/purser/purser.yaml'), qr{\Q$tmp\E/run/mariadb\.sock}, '  the edited configuration (a conffile) kept';
    is owner('/etc/purser/purser.yaml'), 'root:purser 640', '  with its owner and mode';
    is slurp('/etc/purser/keyring'), $keyring, '  the keyring kept as it was';
    is owner('/etc/purser/keyring'), 'purser:purser 600', '  with its owner and mode';
    is owner('/etc/purser/db-password'), 'root:purser 640', '  the database password too';
    ($rc, $out) = run_out(@as_unit, qw(purser migrate));
    like $out, qr/\(0 applied\)/, '  the schema current: nothing to migrate' or diag $out;
}

# --- remove: the programs go, what the operator made stays ---
($rc, $out) = run_out("$apt remove purser");
is $rc, 0, 'apt-get remove purser' or diag $out;
is pkg_status(), 'rc', '  leaves its configuration (rc)';
ok !-e '/usr/sbin/purser-fcgi' && !-e '/usr/bin/purser' && !-e '/usr/share/purser', '  the programs and their files are gone';
ok !-e '/lib/systemd/system/purser-fcgi.service', '  the unit is gone';
like slurp('/etc/purser/purser.yaml'), qr{\Q$tmp\E/run/mariadb\.sock}, '  the edited configuration stays';
ok -s '/etc/purser/keyring' && -s '/etc/purser/db-password' && -f '/etc/purser/tls/key.pem',
    '  the keyring, the database password and TLS stay';
ok -f '/etc/nginx/sites-available/purser', '  the nginx site stays';
ok -d '/var/lib/purser', '  /var/lib/purser stays';

# --- purge: all of it goes, but the database and the user ---
($rc, $out) = run_out("$apt purge purser");
is $rc, 0, 'apt-get purge purser' or diag $out;
is pkg_status(), '', '  the package is gone';
$installed = 0;
ok !-e '/etc/purser', '  /etc/purser is gone (the configuration, the keyring, the password, TLS)';
ok !-e '/etc/nginx/sites-available/purser' && !-e '/etc/nginx/snippets/purser-fastcgi.conf', '  the nginx site is gone';
ok !-e '/var/lib/purser', '  /var/lib/purser is gone';
ok !-e '/etc/systemd/system/multi-user.target.wants/purser-fcgi.service', '  the unit is no longer enabled';
ok scalar(getpwnam 'purser'), '  the system user stays (Debian keeps system users: files may still be theirs)';
like `mariadb --no-defaults --socket='$tmp/run/mariadb.sock' -uroot -N -e 'SHOW DATABASES'`, qr/^purser$/m,
    '  the database stays: it is the operator\'s to drop';

cleanup();
done_testing;

# PurserHosts: what t/9006 to t/9008 share about the hosts of tools/hosts: the start (the test
# skipped unless root can make network namespaces), its hosts.env, a client of the front or of
# one host, and at exit the stop of the test's forked clients and of all tools/hosts started.
package PurserHosts;
use strict;
use warnings;
use File::Temp qw(tempdir);
use HTTP::Tiny;
use Test::More;
use Time::HiRes qw(time);
use PurserStack;

my ($parent, $dir, $clients, %env);

sub tool { PurserStack::root() . '/tools/hosts' }

# skip_unless_namespaces(): plan skip_all unless this runs as root and can make a network
# namespace (a container without CAP_SYS_ADMIN lists namespaces but cannot make one)
sub skip_unless_namespaces {
    plan skip_all => 'network namespaces need root' if $> != 0;
    plan skip_all => 'network namespaces cannot be made here'
        if system("ip netns add purser-probe-$$ > /dev/null 2>&1 && ip netns del purser-probe-$$") != 0;
}

# start(NAME, CLIENTS): three hosts, three Galera nodes and the front (tools/hosts start, with
# the programs of PURSER_BUILD) in a temporary folder purser-NAME-XXXXXX (kept with
# PURSER_KEEP); returns (DIR, its hosts.env as a list of pairs). At exit the pids in the array
# CLIENTS (the test's forked clients, as it holds them then) get SIGKILL and are waited for, then
# tools/hosts stops everything. SIGINT and SIGTERM exit, so that this runs; SIGPIPE is ignored:
# a host that dies, or whose nginx worker does, closes the connection a client may be writing
# to, which is an unanswered request (HTTP::Tiny's 599), not the end of the client.
sub start {
    my ($name, $client_pids) = @_;
    skip_unless_namespaces();
    ($parent, $clients) = ($$, $client_pids);
    $dir = tempdir("purser-$name-XXXXXX", TMPDIR => 1, CLEANUP => !$ENV{PURSER_KEEP});
    $SIG{INT} = $SIG{TERM} = sub { exit 1 };
    $SIG{PIPE} = 'IGNORE';
    my $t0 = time;
    run('start');
    open my $fh, '<', "$dir/hosts.env" or BAIL_OUT('no hosts.env');
    while (<$fh>) { $env{$1} = $2 if /^export (\w+)=(.*)$/ }
    diag sprintf 'three hosts, three Galera nodes and the front started in %.1f s', time - $t0;
    return ($dir, %env);
}

END {
    if ($parent && $$ == $parent) {
        my $status = $?;
        kill 'KILL', @$clients if @$clients;
        waitpid $_, 0 for @$clients;
        system(tool(), 'stop', $dir);
        $? = $status;
    }
}

# run(COMMAND, ARGS...): tools/hosts COMMAND DIR ARGS..., or the test bails out
sub run {
    my ($command, @args) = @_;
    system(tool(), $command, $dir, @args) == 0 or BAIL_OUT("tools/hosts $command @args failed (logs in $dir)");
}

# client(URL, TIMEOUT): a PurserStack (for its methods: api, get, yaml...) that asks URL (the
# front's or a host's, from hosts.env) as the admin, waiting up to TIMEOUT seconds to connect
# and for each read or write. Its exchanges are checked against GET /docs in the test's parent
# only (pid), not in a forked client, whose TAP would garble the parent's.
sub client {
    my ($url, $timeout) = @_;
    return bless { dir => $dir, pid => $parent, opt => {}, stopped => 1, env => { %env, PURSER_URL => $url },
        http => HTTP::Tiny->new(verify_SSL => 1, SSL_options => { SSL_ca_file => $env{PURSER_CA} },
                                max_redirect => 0, timeout => $timeout, keep_alive => 1) }, 'PurserStack';
}

1;

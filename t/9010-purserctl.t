#!/usr/bin/perl
# 9010: purserctl, the client for people and scripts, end to end against a private stack.
# It holds, in this order:
#   - coverage: `purserctl operations -o json` against GET /docs, both ways (every operation of
#     /docs has a command, every operation purserctl lists is in /docs, every row names a
#     command of the table), --help of every command, --version, the bash completion;
#   - contexts: login with the stack's token and with the admin's Chef key (both then read
#     the same clusters, so the server accepts purserctl's signing), a wrong key refused at
#     login, config get-contexts/use-context/current-context/delete-context, the PURSER_*
#     variables over the contexts file, a missing context, no context at all, mode 600;
#   - get (every kind), describe, create, replace, patch and delete against the real stack,
#     each result read back through the API;
#   - output forms: -o json is the API's JSON, -o yaml parses back to it, -o name, the
#     default table (a header, aligned columns, relative times);
#   - failures and their exit codes (ctl.h): 404 = 3 with the API's message, 409/412 = 4,
#     403 = 5, bad input = 7, usage = 2, no server = 6;
#   - the commands of client/apply.c, stream.c, cookbook.c and verbs.c, one subtest each;
#     a subtest is skipped while its command still answers "not built yet" (a stub).
# purserctl runs as a child with stdout, stderr and the exit code kept apart; its contexts
# file is in this test's temporary folder (PURSER_CTL_CONFIG), never the user's.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
use Digest::MD5 qw(md5_hex);
use IO::Socket::INET;
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);
use YAML::XS ();
use PurserStack;

# ---- the environment: nothing of the caller's purser settings leaks into purserctl ----
delete @ENV{qw(PURSER_URL PURSER_CA PURSER_ORG PURSER_TOKEN PURSER_HTTP_URL PURSER_CONFIG
               PURSER_ADMIN_USER PURSER_ADMIN_TOKEN PURSER_ADMIN_KEY XDG_CONFIG_HOME)};
my $tmp = tempdir('purserctl-XXXXXX', TMPDIR => 1, CLEANUP => 1);
make_path("$tmp/run", "$tmp/home");
$ENV{HOME} = "$tmp/home";
my $config = "$tmp/ctl/config.yaml"; # its folder does not exist yet: purserctl makes it
$ENV{PURSER_CTL_CONFIG} = $config;
# every request purserctl sends must be one its command table lists (`purserctl operations`)
$ENV{PURSER_CTL_STRICT} = 1;

my $purserctl = PurserStack::build() . '/purserctl';
my $examples = PurserStack::root() . '/examples';
-x $purserctl or BAIL_OUT("$purserctl is not built (make build)");

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $url = $s->env('PURSER_URL');
my $ca = $s->env('PURSER_CA');
my $admin_token = $s->env('PURSER_ADMIN_TOKEN');
my $admin_key = $s->env('PURSER_ADMIN_KEY');
my $stack_env = $s->dir . '/stack.env';
my $json = JSON::PP->new->canonical;
my $ORG = "/organizations/$org";
my $DOCS = "$ORG/api/v1.0";

# ---- running purserctl ----
# spawn([ENV,] ARGS...): starts purserctl with ENV's variables set (undef: removed), stdin from
# /dev/null, stdout and stderr into files of their own. finish_run(RUN, TIMEOUT) waits for it
# (killing it, by its pid, past TIMEOUT seconds) and returns (exit, stdout, stderr).
my $runs = 0;
my %last; # the last command run, for diagnostics
sub spawn {
    my @args = @_;
    my $env = ref $args[0] eq 'HASH' ? shift @args : {};
    my $n = ++$runs;
    my %run = (args => \@args, env => $env, out => "$tmp/run/$n.out", err => "$tmp/run/$n.err",
               started => time);
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        for my $k (keys %$env) {
            if (defined $env->{$k}) { $ENV{$k} = $env->{$k} } else { delete $ENV{$k} }
        }
        open STDIN, '<', '/dev/null' or POSIX::_exit(126);
        open STDOUT, '>', $run{out} or POSIX::_exit(126);
        open STDERR, '>', $run{err} or POSIX::_exit(126);
        { no warnings 'exec'; exec { $purserctl } $purserctl, @args; }
        POSIX::_exit(127); # never END blocks here: they would stop the parent's stack
    }
    $run{pid} = $pid;
    return \%run;
}
sub slurp { my ($f) = @_; open my $fh, '<', $f or return ''; local $/; my $t = <$fh>; $t // '' }
sub finish_run {
    my ($run, $timeout) = @_;
    $timeout //= 90;
    my $deadline = time + $timeout;
    my $status;
    while (1) {
        my $w = waitpid($run->{pid}, WNOHANG);
        if ($w == $run->{pid}) { $status = $?; last }
        if (time > $deadline) {
            kill 'TERM', $run->{pid};
            sleep 0.5;
            kill 'KILL', $run->{pid};
            waitpid($run->{pid}, 0);
            $status = -1;
            diag "purserctl @{ $run->{args} } did not end within $timeout s: killed";
            last;
        }
        sleep 0.02;
    }
    my $code = $status == -1 ? -1 : ($status & 127) ? 128 + ($status & 127) : $status >> 8;
    my ($out, $err) = (slurp($run->{out}), slurp($run->{err}));
    unlink $run->{out}, $run->{err};
    %last = (args => $run->{args}, env => $run->{env}, code => $code, out => $out, err => $err,
             seconds => time - $run->{started});
    return ($code, $out, $err);
}
# ctl([ENV,] ARGS...) -> (exit, stdout, stderr)
sub ctl { finish_run(spawn(@_)) }
sub shown {
    my $env = join ' ', map { "$_=" . ($last{env}{$_} // '(unset)') } sort keys %{ $last{env} // {} };
    my $cut = sub { my $t = shift // ''; length $t > 3000 ? substr($t, 0, 3000) . '...' : $t };
    return "command: $env purserctl @{ $last{args} // [] }\nexit: $last{code}\nstdout:\n"
        . $cut->($last{out}) . "\nstderr:\n" . $cut->($last{err});
}
# exit_is(GOT, WANT, NAME): the exit code of the last run, showing it whole when wrong.
sub exit_is {
    my ($got, $want, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    return is($got, $want, $name) || diag(shown());
}
# ctl_ok(ARGS...): runs a command that must succeed; returns its stdout.
sub ctl_ok {
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my ($code, $out) = ctl(@_);
    my @args = ref $_[0] eq 'HASH' ? @_[1 .. $#_] : @_;
    exit_is($code, 0, "purserctl @args: exit 0");
    return $out;
}
# ctl_json(ARGS...): a command's -o json output, decoded (undef when it is not JSON).
sub ctl_json {
    my ($code, $out, $err) = ctl(@_, '-o', 'json');
    return undef if $code != 0;
    return eval { $json->decode($out) };
}
# A command still a stub of client/*.c answers this.
sub not_built { my ($code, $out, $err) = @_; return $code == 8 && $err =~ /not built yet/ }
# guard(WHAT, ARGS...): runs a subtest's first command; the whole subtest is skipped while the
# command is a stub. Returns (exit, stdout, stderr).
sub guard {
    my ($what, @args) = @_;
    my @r = ctl(@args);
    plan skip_all => "purserctl $what is not built yet (its client/*.c is still a stub: exit 8, "
        . "'not built yet'); these tests wait for it" if not_built(@r);
    return @r;
}

# ---- the API, as the tests' own reference ----
sub api { my ($method, $path, $body, %h) = @_; return $s->call($method, $path, $body, %h) }
# GET PATH as purserctl asks it (Chef's API version 1: GET principals/NAME answers a list there)
sub api_data { my ($r, $d) = api('GET', $_[0], undef, 'x-ops-server-api-version' => 1); return $r->{status} == 200 ? $d : undef }
sub is_member { my ($user, $o) = @_; return scalar grep { ($_->{user}{username} // '') eq $user } @{ api_data("/organizations/" . ($o // $org) . "/users") // [] } }
sub api_status { my ($r) = api(@_); return $r->{status} }
sub api_message { my ($r, $d) = api(@_); return PurserStack::error_message($d) }
sub yaml_load {
    my ($text) = @_;
    local $YAML::XS::Boolean = 'JSON::PP'; # true and false as JSON::PP reads them
    my @docs = eval { YAML::XS::Load($text) };
    return $@ ? undef : \@docs;
}
sub read_json_file { my ($f) = @_; return $json->decode(slurp($f)) }
sub write_file {
    my ($name, $text) = @_;
    my $path = $name =~ m{^/} ? $name : "$tmp/$name";
    (my $dir = $path) =~ s{/[^/]*$}{};
    make_path($dir);
    open my $fh, '>', $path or die "$path: $!";
    print $fh $text;
    close $fh;
    return $path;
}
sub mode_of { my @st = stat $_[0]; return @st ? sprintf('%04o', $st[2] & 07777) : 'missing' }
sub contexts_file { return -e $config ? yaml_load(slurp($config))->[0] : undef }
sub context_named {
    my ($name) = @_;
    my $c = contexts_file() or return undef;
    my ($found) = grep { ($_->{name} // '') eq $name } @{ $c->{contexts} // [] };
    return $found;
}
# The newest document revision's id, through the API.
sub newest_revision {
    my $d = api_data("$DOCS/revisions?sort=id&order=desc&limit=1") or return 0;
    return $d->{results}[0]{id} // 0;
}
# Every event of the organization, every page.
sub all_events {
    my ($since, @events) = (0);
    for (1 .. 1000) {
        my $d = api_data("$ORG/events?since=$since") or last;
        last unless @{ $d->{events} // [] };
        push @events, @{ $d->{events} };
        $since = $d->{next};
    }
    return @events;
}
# A cluster's revision, for If-Match.
sub cluster_revision { my $d = api_data("$ORG/clusters/$_[0]"); return $d ? $d->{metadata}{revision} : '' }

# A table as purserctl prints it: the header's column offsets (a column starts after two or
# more spaces: "LAST USED" is one header), its names, and each row's cells by those offsets.
sub table_of {
    my ($text) = @_;
    my @lines = grep { length } split /\n/, $text;
    my $header = shift(@lines) // '';
    my (@starts, @names);
    while ($header =~ /(?:^|(?<=\s\s))(\S+(?: \S+)*)/g) { push @starts, $-[1]; push @names, $1 }
    my @rows;
    for my $line (@lines) {
        my @cells;
        for my $i (0 .. $#starts) {
            my $from = $starts[$i];
            my $len = $i < $#starts ? $starts[$i + 1] - $from : length($line);
            my $cell = length($line) > $from ? substr($line, $from, $len) : '';
            $cell =~ s/^\s+|\s+$//g;
            push @cells, $cell;
        }
        push @rows, \@cells;
    }
    return { header => $header, starts => \@starts, names => \@names, lines => \@lines, rows => \@rows };
}
# The lines whose columns do not start at the header's offsets (a space before, a character at).
sub misaligned {
    my ($t) = @_;
    my @bad;
    for my $line (@{ $t->{lines} }) {
        for my $o (@{ $t->{starts} }[1 .. $#{ $t->{starts} }]) {
            if (length($line) <= $o || substr($line, $o - 1, 1) ne ' ' || substr($line, $o, 1) eq ' ') {
                push @bad, $line;
                last;
            }
        }
    }
    return @bad;
}
sub column { my ($t, $name) = @_; my ($i) = grep { $t->{names}[$_] eq $name } 0 .. $#{ $t->{names} };
             return defined $i ? map { $_->[$i] } @{ $t->{rows} } : () }

# A port nothing listens on.
my $closed_port = do {
    my $sock = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp')
        or die "a free port: $!";
    my $p = $sock->sockport;
    close $sock;
    $p;
};

############################################################################################
# 1. The command table: --version, --help, operations against GET /docs, completion
############################################################################################
my ($code, $out, $err) = ctl('--version');
exit_is($code, 0, 'purserctl --version: exit 0');
like $out, qr/^purserctl \d+\.\d+(?:\.\d+)?\S*\s*$/, "  prints its version: $out";

($code, $out, $err) = ctl('--help');
exit_is($code, 0, 'purserctl --help: exit 0');
my @commands = map { /^  (\S+)\s/ ? $1 : () } split /\n/, ($out =~ /commands:\n(.*?)\n\n/s)[0] // '';
ok scalar(@commands) >= 20, 'purserctl --help lists the commands of the table: ' . scalar(@commands);
my %is_command = map { $_ => 1 } @commands;
for my $c (qw(login config get describe create replace patch delete apply diff promote render rollback
              tag facts reset-token bootstrap token watch export import cookbook health version api git
              operations completion)) {
    ok $is_command{$c}, "  the table has $c";
}
for my $c (@commands) {
    ($code, $out, $err) = ctl($c, '--help');
    exit_is($code, 0, "purserctl $c --help: exit 0");
    like $out, qr/^usage: purserctl \Q$c\E\b/m, "  shows usage: for $c";
    like $out, qr/^example:\n\s+purserctl /m, "  and an example: of $c";
}

subtest 'purserctl operations against GET /docs' => sub {
    my ($code, $out, $err) = ctl('operations', '-o', 'json');
    exit_is($code, 0, 'purserctl operations -o json: exit 0');
    my $ops = eval { $json->decode($out) };
    ok ref $ops eq 'ARRAY' && @$ops, '  a JSON array of operations' or return;
    my $res = $s->get('/docs');
    is $res->{status}, 200, 'GET /docs';
    my $docs = $json->decode($res->{content});
    my $norm = sub { my ($m, $p) = @_; $p =~ s/\{[^}]*\}/{}/g; return uc($m) . " $p" };
    my %in_docs;
    for my $path (keys %{ $docs->{paths} }) {
        for my $m (grep { /^(?:get|put|post|patch|delete|head|options)$/ } keys %{ $docs->{paths}{$path} }) {
            $in_docs{ $norm->($m, $path) } = 1;
        }
    }
    # A document API template (/api/v1.0/...) is called under /organizations/{org} when the
    # context names an organization and at the root when not (ctl.h, ctl_request): one row of
    # purserctl covers both operations of /docs. The --verbose requests below hold that.
    my (%listed, %covered, @not_a_command);
    for my $op (@$ops) {
        my $key = $norm->($op->{method}, $op->{path});
        $listed{$key} = $op->{command};
        $covered{$key} = 1;
        $covered{ $norm->($op->{method}, "/organizations/{org}$op->{path}") } = 1 if $op->{path} =~ m{^/api/v1\.0/};
        my ($first) = split / /, $op->{command} // '';
        push @not_a_command, "$key: '$op->{command}'" unless $is_command{$first // ''};
    }
    # Open operations of the stack that purserctl need not call: none. (health calls /healthz,
    # api calls /metrics and /docs.)
    my %exempt = ();
    my @missing = sort grep { !$covered{$_} && !$exempt{$_} } keys %in_docs;
    is scalar(@missing), 0, 'every operation of GET /docs has a purserctl command'
        or diag "operations of /docs no command calls:\n  " . join "\n  ", @missing;
    my @stale = sort grep { !$in_docs{$_} } keys %listed;
    is scalar(@stale), 0, 'every operation purserctl lists is in GET /docs (no stale rows)'
        or diag "listed by purserctl, not in /docs:\n  " . join "\n  ", map { "$_ ($listed{$_})" } @stale;
    is scalar(@not_a_command), 0, "every row's command is a command of the table (`purserctl COMMAND`)"
        or diag scalar(@not_a_command) . " rows name no command, e.g.:\n  " . join "\n  ", @not_a_command[0 .. ($#not_a_command < 9 ? $#not_a_command : 9)];
    ($code, $out) = ctl('operations');
    exit_is($code, 0, 'purserctl operations (a table): exit 0');
    my $t = table_of($out);
    is_deeply $t->{names}, [qw(METHOD PATH COMMAND)], '  its header';
    is scalar(@{ $t->{rows} }), scalar(@$ops), '  a row per operation';
};

subtest 'bash completion' => sub {
    my ($code, $out, $err) = ctl('completion', 'bash');
    exit_is($code, 0, 'purserctl completion bash: exit 0');
    my $script = write_file('completion.bash', $out);
    my $syntax = `bash -n '$script' 2>&1`;
    is $?, 0, '  bash -n accepts it' or diag $syntax;
    my $bc = '/usr/share/bash-completion/bash_completion';
    plan skip_all => "$bc is not installed" unless -r $bc;
    # each completion is a small bash script: _purserctl called as bash calls it, COMPREPLY printed
    my $complete = sub {
        my (@words) = @_;
        my $file = write_file('complete.sh', join "\n", "source $bc", "source '$script'",
            'COMP_WORDS=(' . join(' ', map { "'$_'" } @words) . ')', "COMP_CWORD=$#words",
            "COMP_LINE='" . join(' ', @words) . "'", 'COMP_POINT=${#COMP_LINE}',
            "_purserctl purserctl '$words[-1]' '" . ($words[-2] // '') . "'",
            'printf "%s\n" "${COMPREPLY[@]}"', '');
        my $got = `bash --norc --noprofile '$file' 2>&1`;
        return [ grep { length } split /\n/, $got ];
    };
    is_deeply $complete->('purserctl', 'ge'), ['get'], 'purserctl ge<TAB>: get';
    is_deeply $complete->('purserctl', 'get', 'clu'), ['clusters'], 'purserctl get clu<TAB>: clusters';
    is_deeply $complete->('purserctl', 'config', 'use'), ['use-context'], 'purserctl config use<TAB>: use-context';
    is_deeply $complete->('purserctl', '-o', 'js'), ['json'], 'purserctl -o js<TAB>: json';
};

############################################################################################
# 2. Contexts: login, config, the PURSER_* variables
############################################################################################
($code, $out, $err) = ctl('get', 'clusters');
exit_is($code, 2, 'no context at all: get clusters exits 2');
like $err, qr/log ?in/i, '  saying to log in: ' . ($err =~ s/\n.*//sr);
ok !-e $config, '  and writes no contexts file';

($code, $out, $err) = ctl({ PURSER_URL => $url, PURSER_CA => $ca, PURSER_ORG => $org }, 'get', 'clusters');
exit_is($code, 2, 'a server but no credential at all (PURSER_URL alone): exit 2, as ctl.h says of ctl_context_load');
like $err, qr/log ?in|credential|token/i, '  saying what is missing';

($code, $out, $err) = ctl('login', '--from', $stack_env);
exit_is($code, 0, 'login --from STACK/stack.env: exit 0');
like $out, qr/logged in/, '  says so';
is mode_of($config), '0600', 'the contexts file is mode 600';
is mode_of("$tmp/ctl"), '0700', '  in a folder of mode 700';
my $local = context_named('local');
ok $local, '  a context named local (the default for --from)';
is $local->{token}, $admin_token, '  holding the stack\'s admin token';
is $local->{url}, $url, '  its URL';
is $local->{organization}, $org, '  its organization';
is $local->{ca}, $ca, '  its CA';
is contexts_file()->{'current-context'}, 'local', '  made the current context';

($code, $out, $err) = ctl('login', '--from', $stack_env, '--chef', '--name', 'chef');
exit_is($code, 0, 'login --from ... --chef --name chef: exit 0');
my $chef = context_named('chef');
is $chef->{client}, 'admin', '  the context signs as admin';
is $chef->{key}, $admin_key, '  with the admin\'s key file';
ok !defined $chef->{token}, '  and holds no token';
is mode_of($config), '0600', '  the contexts file is still mode 600';

my $by_token = ctl_json('--context', 'local', 'get', 'clusters');
my $by_chef = ctl_json('--context', 'chef', 'get', 'clusters');
ok $by_token, 'get clusters with the token context';
ok $by_chef, 'get clusters with the Chef key context (the server accepts purserctl\'s signature)';
is_deeply $by_chef, $by_token, '  the same answer with both credentials';
($code, $out, $err) = ctl('--context', 'chef', 'create', 'cluster', 'chef-signed');
exit_is($code, 0, 'a signed write with a body: create cluster chef-signed --context chef');
is api_status('GET', "$ORG/clusters/c-chef-signed"), 200, '  the cluster is there (the body\'s hash was signed right)';
($code, $out, $err) = ctl('--context', 'chef', 'delete', 'cluster', 'c-chef-signed');
exit_is($code, 0, '  a signed DELETE');
is api_status('GET', "$ORG/clusters/c-chef-signed"), 404, '  and it is gone';

my $wrong_key = "$tmp/wrong.pem";
system('openssl', 'genrsa', '-out', $wrong_key, '2048') == 0 or die "openssl genrsa failed\n";
my $before = slurp($config);
($code, $out, $err) = ctl('login', '--url', $url, '--ca', $ca, '--org', $org, '--client', 'admin',
                          '--key', $wrong_key, '--name', 'wrong');
exit_is($code, 5, 'login with a wrong key: exit 5');
my $refused = $s->chef(user => 'admin', key => $wrong_key, path => "$ORG/permissions");
my $server_says = ref $refused->{json} eq 'HASH' ? PurserStack::error_message($refused->{json}) : '';
ok length $server_says, "  (the server refuses that key: $server_says)";
like $err, qr/\Q$server_says\E/, '  the server\'s message on stderr';
ok !context_named('wrong'), '  no context written';
is slurp($config), $before, '  the contexts file untouched';

($code, $out, $err) = ctl('config', 'get-contexts');
exit_is($code, 0, 'config get-contexts: exit 0');
my $t = table_of($out);
is_deeply [ sort(column($t, 'NAME')) ], [qw(chef local)], '  lists both contexts';
my %current = map { $_->[1] => $_->[0] } @{ $t->{rows} };
is $current{chef}, '*', '  marks the current one (chef, the last login)';
unlike $out, qr/\Q$admin_token\E/, '  never shows a token';
($code, $out) = ctl('config', 'use-context', 'local');
exit_is($code, 0, 'config use-context local: exit 0');
($code, $out) = ctl('config', 'current-context');
exit_is($code, 0, 'config current-context: exit 0');
is $out, "local\n", '  prints local';
is contexts_file()->{'current-context'}, 'local', '  and the file says so';
is mode_of($config), '0600', '  mode 600 after a rewrite';
($code, $out, $err) = ctl('config', 'use-context', 'nosuch');
isnt $code, 0, 'config use-context nosuch: refused';
like $err, qr/nosuch/, '  naming it';
is contexts_file()->{'current-context'}, 'local', '  the current context unchanged';

ctl_ok('login', '--from', $stack_env, '--name', 'scratch');
is contexts_file()->{'current-context'}, 'scratch', 'login --name scratch makes it current';
($code, $out) = ctl('config', 'delete-context', 'scratch');
exit_is($code, 0, 'config delete-context scratch: exit 0');
ok !context_named('scratch'), '  it is gone from the file';
ok context_named('local') && context_named('chef'), '  the others stay';
($code, $out, $err) = ctl('config', 'current-context');
isnt $code, 0, '  no current context now (it was scratch): current-context fails';
($code, $out, $err) = ctl('get', 'clusters');
exit_is($code, 2, '  and get clusters exits 2');
like $err, qr/log ?in/i, '  saying to log in';
ctl_ok('config', 'use-context', 'local');

($code, $out, $err) = ctl('--context', 'nosuch', 'get', 'clusters');
exit_is($code, 2, '--context nosuch: exit 2');
like $err, qr/nosuch/, '  naming it';

# the variables over the current context
ctl_ok('config', 'use-context', 'chef');
my $nobody = 'ctl-nobody'; # a user who is no member of any organization
$s->must('user', 'POST', '/users', { username => $nobody });
my $nobody_token = $s->must('token', 'POST', "/users/$nobody/tokens", { description => 'purserctl tests' })->{token};
($code, $out, $err) = ctl({ PURSER_TOKEN => $nobody_token }, 'get', 'clusters');
exit_is($code, 5, 'PURSER_TOKEN of a user with no roles over the Chef context: exit 5 (the variable wins)');
$s->must('org', 'POST', '/organizations', { name => 'ctl-other' });
$s->must('cluster', 'POST', '/organizations/ctl-other/clusters', { metadata => { name => 'elsewhere' }, spec => {} });
my $other = ctl_json({ PURSER_ORG => 'ctl-other' }, 'get', 'clusters');
is_deeply [ map { $_->{metadata}{name} } @{ $other->{items} // [] } ], ['c-elsewhere'],
    'PURSER_ORG=ctl-other: the clusters of that organization';
($code, $out, $err) = ctl({ PURSER_URL => "https://127.0.0.1:$closed_port" }, 'get', 'clusters');
exit_is($code, 2, 'PURSER_URL of another server: the context\'s credential does not go there (exit 2)');
like $err, qr/no credential for https:\/\/127\.0\.0\.1:$closed_port/, '  saying so';
($code, $out, $err) = ctl({ PURSER_URL => "https://127.0.0.1:$closed_port", PURSER_TOKEN => 'x' }, 'get', 'clusters');
exit_is($code, 6, 'PURSER_URL with PURSER_TOKEN: the variables win (a closed port: exit 6)');
$other = ctl_json({ PURSER_CTL_CONFIG => "$tmp/none/config.yaml", PURSER_URL => $url, PURSER_CA => $ca,
                    PURSER_ORG => $org, PURSER_TOKEN => $admin_token }, 'get', 'organizations');
ok $other && exists $other->{$org}, 'no contexts file, the four variables alone: it works';
ok !-e "$tmp/none/config.yaml", '  and no contexts file is written';
ctl_ok('config', 'use-context', 'local');

############################################################################################
# 3. The state the verbs read, made through the API
############################################################################################
my $site_v1 = slurp("$examples/site/site.yaml");
my $site_v2 = slurp("$examples/site/site-v2.yaml");
my $lock_v1 = read_json_file("$examples/policies/base.lock.json");
my $lock_v2 = read_json_file("$examples/policies/base-v2.lock.json");
my $facts = read_json_file("$examples/facts.json");
$s->yaml_call('PUT', "$DOCS/buckets/site/documents", $site_v1);
my $rev1 = newest_revision();
ok $rev1, "the site's documents: revision $rev1";
$s->must('lock', 'PUT', "$ORG/policy_groups/dev/policies/base", $lock_v1);
$s->must('cookbook', 'PUT', "$ORG/cookbook_artifacts/seed/abc123", { name => 'seed', identifier => 'abc123',
    version => '0.1.0', chef_type => 'cookbook_version', metadata => { name => 'seed', version => '0.1.0', dependencies => {} },
    all_files => [] });
$s->must('node', 'POST', "$ORG/nodes", { name => 'seed-node', chef_environment => '_default', run_list => [] });
# tag_through_api(REV, TAG, YAML): a tag with data, through the API.
sub tag_through_api {
    my ($rev, $tag, $yaml) = @_;
    my $r = $s->request('POST', "$DOCS/revisions/$rev/tags/$tag", { headers => {
        authorization => "Bearer $admin_token", 'content-type' => 'application/x-yaml', accept => 'application/json' },
        content => $yaml });
    return $r->{status};
}
is tag_through_api($rev1, 'seed-tag', "owner: tests\n"), 201, "a tag on revision $rev1 through the API";

############################################################################################
# 4. create, get (every kind), describe, replace, patch, delete
############################################################################################
subtest 'create' => sub {
    ($code, $out, $err) = ctl('create', 'cluster', '-f', "$examples/cluster.yaml");
    exit_is($code, 0, 'create cluster -f examples/cluster.yaml: exit 0');
    my $c = api_data("$ORG/clusters/c-edge-1");
    ok $c, '  the API has c-edge-1';
    is_deeply $c->{metadata}{labels}, { env => 'dev', region => 'eu-west' }, '  with the file\'s labels';
    is $c->{spec}{display_name}, 'Edge 1 (Lisbon lab)', '  and its spec';
    like $out, qr/[0-9a-f]{64}/, '  the bootstrap token is shown (once)';

    ($code, $out, $err) = ctl('create', 'cluster', 'edge-x');
    exit_is($code, 0, 'create cluster edge-x: exit 0');
    is api_status('GET', "$ORG/clusters/c-edge-x"), 200, '  the API has c-edge-x';

    ($code, $out, $err) = ctl('create', 'organization', 'ctl-acme');
    exit_is($code, 0, 'create organization ctl-acme: exit 0');
    is api_status('GET', '/organizations/ctl-acme'), 200, '  the API has it';
    like $out, qr/BEGIN RSA PRIVATE KEY/, '  the validator\'s key is shown (once)';

    ($code, $out, $err) = ctl('create', 'user', 'ctl-alice');
    exit_is($code, 0, 'create user ctl-alice: exit 0');
    is api_status('GET', '/users/ctl-alice'), 200, '  the API has her';
    like $out, qr/BEGIN RSA PRIVATE KEY/, '  her private key is shown (once)';

    my $bob = write_file('bob.yaml', "display_name: Bob Builder\nemail: bob\@example.com\n");
    ($code, $out, $err) = ctl('create', 'user', 'ctl-bob', '-f', $bob);
    exit_is($code, 0, 'create user ctl-bob -f bob.yaml: exit 0');
    my $u = api_data('/users/ctl-bob');
    is $u && $u->{display_name}, 'Bob Builder', '  the name from the command line, the rest from the file';

    ($code, $out, $err) = ctl('create', 'member', 'ctl-alice');
    exit_is($code, 0, 'create member ctl-alice: exit 0');
    ok is_member('ctl-alice'), '  she is a member';

    ($code, $out, $err) = ctl('create', 'client', 'ctl-ci');
    exit_is($code, 0, 'create client ctl-ci: exit 0');
    is api_status('GET', "$ORG/clients/ctl-ci"), 200, '  the API has it';
    like $out, qr/BEGIN RSA PRIVATE KEY/, '  its private key is shown (once)';

    ($code, $out, $err) = ctl('create', 'node', 'ctl-web1');
    exit_is($code, 0, 'create node ctl-web1: exit 0');
    is api_status('GET', "$ORG/nodes/ctl-web1"), 200, '  the API has it';

    # the command table's example: purserctl create tag 3 --revision 3 -f data.yaml
    my $data = write_file('tag-data.yaml', "ticket: OPS-1\n");
    ($code, $out, $err) = ctl('create', 'tag', 'ctl-made', '--revision', $rev1, '-f', $data);
    exit_is($code, 0, "create tag ctl-made --revision $rev1 -f data.yaml (the create command's example): exit 0");
    my $tag = api_data("$DOCS/revisions/$rev1/tags/ctl-made");
    is_deeply $tag, { 'ctl-made' => { ticket => 'OPS-1' } }, '  the API has the tag with its data';
};

subtest 'get, every kind' => sub {
    # KIND args, the API path of the same list, and how to compare: the whole answer, or a part
    my @kinds = (
        [['organizations'], '/organizations'],
        [['users'], '/users'],
        [['members'], "$ORG/users"],
        [['clients'], "$ORG/clients"],
        [['keys', '--user', 'admin'], '/users/admin/keys'],
        [['tokens', '--user', 'admin'], '/users/admin/tokens', sub { [ sort map { $_->{id} } @{ $_[0] } ] }],
        [['principal', 'admin'], "$ORG/principals/admin"],
        [['permissions'], "$ORG/permissions"],
        [['policies'], "$ORG/policies"],
        [['policy-revisions', '--policy', 'base'], "$ORG/policies/base/revisions"],
        [['policy-groups'], "$ORG/policy_groups"],
        [['nodes'], "$ORG/nodes"],
        [['cookbooks'], "$ORG/cookbook_artifacts"],
        [['clusters'], "$ORG/clusters", sub { $_[0]{items} }],
        [['facts', '--cluster', 'c-edge-1'], "$ORG/clusters/c-edge-1/facts/history", sub { $_[0]{items} }],
        [['revisions'], "$DOCS/revisions", sub { $_[0]{results} }],
        [['documents', '--revision', $rev1], "$DOCS/revisions/$rev1/documents"],
        [['documents'], "$DOCS/revisions/$rev1/documents"], # the newest revision
        [['tags', '--revision', $rev1], "$DOCS/revisions/$rev1/tags"],
        [['validations', '--revision', $rev1], "$DOCS/revisions/$rev1/validations", sub { $_[0]{results} }],
        [['validation-details', '--revision', $rev1], "$DOCS/revisions/$rev1/validations/detail", sub { $_[0]{results} }],
    );
    for my $k (@kinds) {
        my ($args, $path, $part) = @$k;
        $part //= sub { $_[0] };
        my ($code, $out, $err) = ctl('get', @$args, '-o', 'json');
        exit_is($code, 0, "get @$args -o json: exit 0");
        my $got = eval { $json->decode($out) };
        my $want = api_data($path);
        ok $want, "  (GET $path)";
        is_deeply $got && $part->($got), $want && $part->($want), "  the same as GET $path"
            or diag "purserctl: " . $json->encode($got // {}) . "\napi: " . $json->encode($want // {});
        ($code, $out, $err) = ctl('get', @$args);
        exit_is($code, 0, "get @$args (the default output): exit 0");
        ok length $out, '  prints something';
    }
    # what the tables hold
    my $t = table_of(ctl_ok('get', 'clusters'));
    is_deeply [ sort(column($t, 'NAME')) ], [qw(c-edge-1 c-edge-x)], 'get clusters: a row per cluster';
    $t = table_of(ctl_ok('get', 'tags', '--revision', $rev1));
    my @tags = sort keys %{ api_data("$DOCS/revisions/$rev1/tags") // {} };
    is_deeply [ sort(column($t, 'TAG')) ], \@tags, "get tags --revision $rev1: a row per tag (@tags)"
        or diag $t->{header} . "\n" . join "\n", @{ $t->{lines} };
    $t = table_of(ctl_ok('get', 'members'));
    is_deeply [ sort(column($t, 'USER')) ], [qw(admin ctl-alice)], 'get members: a row per member';
    $t = table_of(ctl_ok('get', 'nodes'));
    is_deeply [ sort(column($t, 'NAME')) ], [qw(ctl-web1 seed-node)], 'get nodes: a row per node';
    $t = table_of(ctl_ok('get', 'policy-groups'));
    is_deeply [ column($t, 'NAME') ], ['dev'], 'get policy-groups: dev';
    is_deeply [ column($t, 'POLICIES') ], ['1'], '  with its one policy';
    $t = table_of(ctl_ok('get', 'documents', '--revision', $rev1));
    is_deeply [ sort(column($t, 'NAME')) ], [ sort qw(layering-policy example/Network/v1 network-defaults oam-network
        inventory-db-password inventory-db) ], "get documents --revision $rev1: a row per document";
    # the selector of the command table's example
    my $paged = ctl_json('get', 'clusters', '--page-size', '1');
    is_deeply $paged && $paged->{items}, api_data("$ORG/clusters")->{items}, 'get clusters --page-size 1: every page followed, every cluster';
    my $dev = ctl_json('get', 'clusters', '-l', 'env=dev');
    is_deeply [ map { $_->{metadata}{name} } @{ $dev->{items} // [] } ], ['c-edge-1'], 'get clusters -l env=dev: c-edge-1 only';
    # the identity lists: -l narrows Chef's shape, --page-size follows the convention's pages
    api('PATCH', '/users/ctl-alice', { labels => { team => 'ctl' } });
    my $team = ctl_json('get', 'users', '-l', 'team=ctl');
    is_deeply [ sort keys %{ $team // {} } ], ['ctl-alice'], "get users -l team=ctl: ctl-alice only (Chef's shape)";
    my $users = ctl_json('get', 'users', '--page-size', '1');
    is_deeply [ sort map { $_->{metadata}{name} } @{ $users->{items} // [] } ], [ sort keys %{ api_data('/users') // {} } ],
        'get users --page-size 1: every page followed, every user an envelope';
    # events: every page
    my $events = ctl_json('get', 'events');
    my @api_events = all_events();
    is_deeply [ map { $_->{seq} } @{ $events->{events} // [] } ], [ map { $_->{seq} } @api_events ],
        'get events: every event, every page (' . scalar(@api_events) . ')';
    ok((grep { $_->{kind} eq 'cluster' && $_->{name} eq 'c-edge-1' } @{ $events->{events} // [] }), '  c-edge-1\'s among them');
    # documents as YAML straight from the document API (the command table's example)
    ($code, $out, $err) = ctl('get', 'documents', '--revision', $rev1, '-o', 'yaml');
    exit_is($code, 0, "get documents --revision $rev1 -o yaml: exit 0");
    is_deeply yaml_load($out), api_data("$DOCS/revisions/$rev1/documents"), '  the documents as the API has them';
};

subtest 'get one, describe' => sub {
    my @one = (
        [['organization', $org], "/organizations/$org"],
        [['user', 'admin'], '/users/admin'],
        [['client', 'ctl-ci'], "$ORG/clients/ctl-ci"],
        [['key', 'default', '--user', 'admin'], '/users/admin/keys/default'],
        [['policy', 'base'], "$ORG/policies/base"],
        [['policy-group', 'dev'], "$ORG/policy_groups/dev"],
        [['lock', 'dev', 'base'], "$ORG/policy_groups/dev/policies/base"],
        [['policy-revision', 'base', $lock_v1->{revision_id}], "$ORG/policies/base/revisions/$lock_v1->{revision_id}"],
        [['node', 'ctl-web1'], "$ORG/nodes/ctl-web1"],
        [['cookbook', 'seed'], "$ORG/cookbook_artifacts/seed"],
        [['cookbook-artifact', 'seed', 'abc123'], "$ORG/cookbook_artifacts/seed/abc123"],
        [['cluster', 'c-edge-1'], "$ORG/clusters/c-edge-1"],
        [['revision', $rev1], "$DOCS/revisions/$rev1"],
        [['tag', 'seed-tag', '--revision', $rev1], "$DOCS/revisions/$rev1/tags/seed-tag"],
    );
    for my $k (@one) {
        my ($args, $path) = @$k;
        my $got = ctl_json('get', @$args);
        ok $got, "get @$args -o json" or diag shown();
        is_deeply $got, api_data($path), "  the same as GET $path";
    }
    my ($code, $out, $err) = ctl('describe', 'cluster', 'c-edge-1');
    exit_is($code, 0, 'describe cluster c-edge-1: exit 0');
    like $out, qr/^cluster c-edge-1\n/, '  names it';
    my ($yaml) = $out =~ /^(---\n.*?)\n\n/sm;
    is_deeply yaml_load($yaml // '')->[0], api_data("$ORG/clusters/c-edge-1"), '  the cluster in full (as YAML)';
    like $out, qr/^facts:\n/m, '  then what hangs off it: its facts';
    ($code, $out) = ctl('describe', 'user', 'admin');
    exit_is($code, 0, 'describe user admin: exit 0');
    like $out, qr/^keys:\n(?:.*\n)*?default\s/m, '  with its keys';
    like $out, qr/^tokens:\n/m, '  and tokens';
    ($code, $out) = ctl('describe', 'revision', $rev1);
    exit_is($code, 0, "describe revision $rev1: exit 0");
    my ($tags) = $out =~ /\n\ntags:\n(.*?)(?:\n\n|\z)/s; # the section after the revision's YAML
    my $tt = table_of($tags // '');
    my @tags = sort keys %{ api_data("$DOCS/revisions/$rev1/tags") // {} };
    is_deeply [ sort(column($tt, 'TAG')) ], \@tags, "  with its tags (@tags)" or diag $out;
    like $out, qr/^validations:\n(?:.*\n)*?deckhand-schema-validation\s+success/m, '  and validations';
};

subtest 'replace, patch' => sub {
    my $node = write_file('node.json', $json->encode({ name => 'ctl-web1', chef_environment => 'prod',
        run_list => ['recipe[hello]'], normal => { tier => 'web' } }));
    my ($code, $out, $err) = ctl('replace', 'node', 'ctl-web1', '-f', $node);
    exit_is($code, 0, 'replace node ctl-web1 -f node.json: exit 0');
    my $n = api_data("$ORG/nodes/ctl-web1");
    is $n->{chef_environment}, 'prod', '  the API has the new node';
    is_deeply $n->{run_list}, ['recipe[hello]'], '  its run list';

    # the round trip: get -o yaml, change it, replace -f (the file holds the revision it was read at)
    ($code, $out, $err) = ctl('get', 'cluster', 'c-edge-1', '-o', 'yaml');
    (my $text = $out) =~ s/display_name: .*/display_name: Edge One/;
    my $file = write_file('edge-1.yaml', $text);
    ($code, $out, $err) = ctl('replace', 'cluster', 'c-edge-1', '-f', $file);
    exit_is($code, 0, 'replace cluster c-edge-1 -f FILE (get -o yaml, edited): exit 0');
    is api_data("$ORG/clusters/c-edge-1")->{spec}{display_name}, 'Edge One', '  the API has it';
    ($code, $out, $err) = ctl('replace', 'cluster', 'c-edge-1', '-f', $file);
    exit_is($code, 4, '  the same file again (its revision is stale now): exit 4 (412)');
    like $err, qr/re-read it/, '  with the API\'s message';
    $text =~ s/^  revision: .*\n//m;
    $text =~ s/display_name: .*/display_name: Edge 1b/;
    $file = write_file('edge-1b.yaml', $text);
    ($code, $out, $err) = ctl('replace', 'cluster', 'c-edge-1', '-f', $file);
    exit_is($code, 4, 'a file without the revision it was read at: exit 4 (412)');
    ($code, $out, $err) = ctl('replace', 'cluster', 'c-edge-1', '-f', $file, '--if-match', cluster_revision('c-edge-1'));
    exit_is($code, 0, '  with --if-match REV: exit 0');
    is api_data("$ORG/clusters/c-edge-1")->{spec}{display_name}, 'Edge 1b', '  the API has it';

    ($code, $out, $err) = ctl('patch', 'user', 'ctl-alice', '-p', '{"active":false}');
    exit_is($code, 0, q(patch user ctl-alice -p '{"active":false}': exit 0));
    ok !api_data('/users/ctl-alice')->{active}, '  the API has her inactive';
    ($code, $out, $err) = ctl('patch', 'user', 'ctl-alice', '-p', '{"active":true}');
    exit_is($code, 0, q(patch user ctl-alice -p '{"active":true}': exit 0));
    ok api_data('/users/ctl-alice')->{active}, '  active again';
    my $patch = write_file('patch.yaml', "display_name: Alice\n");
    ($code, $out, $err) = ctl('patch', 'user', 'ctl-alice', '-f', $patch);
    exit_is($code, 0, 'patch user ctl-alice -f patch.yaml: exit 0');
    is api_data('/users/ctl-alice')->{display_name}, 'Alice', '  the API has it';
    ($code, $out, $err) = ctl('patch', 'organization', 'ctl-acme', '-p', '{"full_name":"Acme Patched"}');
    exit_is($code, 0, 'patch organization ctl-acme: exit 0');
    is api_data('/organizations/ctl-acme')->{full_name}, 'Acme Patched', '  the API has it';
    ($code, $out, $err) = ctl('patch', 'client', 'ctl-ci', '-p', '{"labels":{"role":"ci"}}');
    exit_is($code, 0, 'patch client ctl-ci: exit 0');
    is_deeply [ keys %{ api_data("$ORG/clients?labels=role%3Dci") // {} } ], ['ctl-ci'], '  the API has its label';

    ($code, $out, $err) = ctl('patch', 'cluster', 'c-edge-1', '-p', '{"metadata":{"labels":{"tier":"web"}}}',
                              '--if-match', cluster_revision('c-edge-1'));
    exit_is($code, 0, 'patch cluster c-edge-1 -p {labels} --if-match REV: exit 0');
    is_deeply api_data("$ORG/clusters/c-edge-1")->{metadata}{labels}, { env => 'dev', region => 'eu-west', tier => 'web' },
        '  the label added, the others kept (a merge patch)';
    ($code, $out, $err) = ctl('patch', 'cluster', 'c-edge-1', '-p', '{"metadata":{"labels":{"tier":null}}}',
                              '--if-match', '"0000000000000000"');
    exit_is($code, 4, 'patch cluster with a stale --if-match: exit 4');
    ok exists api_data("$ORG/clusters/c-edge-1")->{metadata}{labels}{tier}, '  nothing changed';
};

subtest 'delete' => sub {
    ok is_member('ctl-alice'), '(ctl-alice is a member)';
    my ($code, $out, $err) = ctl('delete', 'member', 'ctl-alice');
    exit_is($code, 0, 'delete member ctl-alice: exit 0');
    ok !is_member('ctl-alice'), '  she is no member now';
    my @gone = (
        [['node', 'ctl-web1'], "$ORG/nodes/ctl-web1"],
        [['client', 'ctl-ci'], "$ORG/clients/ctl-ci"],
        [['user', 'ctl-alice'], '/users/ctl-alice'],
        [['user', 'ctl-bob'], '/users/ctl-bob'],
        [['organization', 'ctl-acme'], '/organizations/ctl-acme'],
        [['cluster', 'c-edge-x'], "$ORG/clusters/c-edge-x"],
        [['tag', 'seed-tag', '--revision', $rev1], "$DOCS/revisions/$rev1/tags/seed-tag"],
    );
    for my $g (@gone) {
        my ($args, $path) = @$g;
        is api_status('GET', $path), 200, "($path is there)";
        ($code, $out, $err) = ctl('delete', @$args);
        exit_is($code, 0, "delete @$args: exit 0");
        is api_status('GET', $path), 404, "  GET $path: 404";
    }
    ($code, $out, $err) = ctl('delete', 'cluster', 'c-edge-x');
    exit_is($code, 3, 'delete cluster c-edge-x again: exit 3');

    # a document (the delete command's example form: SCHEMA NAME): a new revision without it
    my $before = newest_revision();
    ($code, $out, $err) = ctl('delete', 'document', 'example/Service/v1', 'inventory-db');
    exit_is($code, 0, 'delete document example/Service/v1 inventory-db: exit 0');
    my $now = newest_revision();
    ok $now > $before, "  a new revision ($now)";
    my @names = map { $_->{metadata}{name} } @{ api_data("$DOCS/revisions/$now/documents") // [] };
    ok @names && !grep({ $_ eq 'inventory-db' } @names), '  without the document' or diag "@names";
    ($code, $out, $err) = ctl('delete', 'document', 'example/Service', 'x');
    exit_is($code, 2, 'a schema that is not namespace/Kind/version: exit 2');

    # tags --all: a revision's tags
    tag_through_api($rev1, "ctl-$_", "n: $_\n") for 1 .. 2;
    ok scalar(keys %{ api_data("$DOCS/revisions/$rev1/tags") // {} }) >= 2, "(revision $rev1 has tags)";
    ($code, $out, $err) = ctl('delete', 'tags', '--all', '--revision', $rev1);
    exit_is($code, 0, "delete tags --all --revision $rev1: exit 0");
    is_deeply api_data("$DOCS/revisions/$rev1/tags"), {}, '  it has none now';
};

############################################################################################
# 5. Output forms
############################################################################################
subtest 'output forms' => sub {
    my $api = api_data("$ORG/clusters/c-edge-1");
    my ($code, $out, $err) = ctl('get', 'cluster', 'c-edge-1', '-o', 'json');
    exit_is($code, 0, 'get cluster c-edge-1 -o json: exit 0');
    is_deeply eval { $json->decode($out) }, $api, '  exactly the API\'s JSON';
    ($code, $out, $err) = ctl('-o', 'json', 'get', 'cluster', 'c-edge-1');
    is_deeply eval { $json->decode($out) }, $api, '  -o before the command too';
    ($code, $out, $err) = ctl('get', 'cluster', 'c-edge-1', '-o', 'yaml');
    exit_is($code, 0, 'get cluster c-edge-1 -o yaml: exit 0');
    my $docs = yaml_load($out);
    ok $docs && @$docs == 1, '  one YAML document';
    is_deeply $docs && $docs->[0], $api, '  which reads back as the API\'s answer';
    ($code, $out, $err) = ctl('get', 'clusters', '-o', 'yaml');
    is_deeply yaml_load($out)->[0]{items}, api_data("$ORG/clusters")->{items}, 'get clusters -o yaml: the items';

    ($code, $out, $err) = ctl('get', 'clusters', '-o', 'name');
    exit_is($code, 0, 'get clusters -o name: exit 0');
    is_deeply [ sort split /\n/, $out ], [ sort map { "cluster/$_->{metadata}{name}" } @{ api_data("$ORG/clusters")->{items} } ],
        '  cluster/NAME lines, one per cluster';
    ($code, $out) = ctl('get', 'users', '-o', 'name');
    is_deeply [ sort split /\n/, $out ], [ sort map { "user/$_" } keys %{ api_data('/users') } ], 'get users -o name: user/NAME lines';

    for my $args (['clusters'], ['tokens', '--user', 'admin'], ['events'], ['revisions']) {
        ($code, $out, $err) = ctl('get', @$args);
        exit_is($code, 0, "get @$args: exit 0");
        my $t = table_of($out);
        like $t->{header}, qr/^[A-Z][A-Z ]*[A-Z](?: {2,}[A-Z][A-Z ]*[A-Z])+$/, "  a header row: $t->{header}";
        ok @{ $t->{rows} } > 0, '  and rows';
        my @bad = misaligned($t);
        is scalar(@bad), 0, '  each line\'s columns start where the header\'s do' or diag join "\n", $t->{header}, @bad;
    }
    my $t = table_of(ctl_ok('get', 'clusters'));
    my @updated = column($t, 'UPDATED');
    ok @updated && !grep({ !/^\d+s ago$|^\d+m ago$/ } @updated), "get clusters: UPDATED is relative (@updated)";
    $t = table_of(ctl_ok('get', 'tokens', '--user', 'admin'));
    my @created = column($t, 'CREATED');
    ok @created && !grep({ !/^\d+[smhd] ago$/ } @created), "get tokens: CREATED is relative (@created)";
    my @expires = column($t, 'EXPIRES');
    ok !grep({ !/^-$|^in \d+[smhd]$/ } @expires), "  EXPIRES is '-' or in the future (@expires)";
    $t = table_of(ctl_ok('get', 'events'));
    ok !grep({ !/^\d+[smhd] ago$/ } column($t, 'AT')), 'get events: AT is relative';
    unlike ctl_ok('get', 'clusters'), qr/\d{4}-\d\d-\d\dT\d\d:/, '  no ISO times in a table';
};

############################################################################################
# 6. Failures and their exit codes
############################################################################################
subtest 'failures' => sub {
    my ($code, $out, $err) = ctl('get', 'cluster', 'nope');
    exit_is($code, 3, 'get cluster nope: exit 3');
    my $msg = api_message('GET', "$ORG/clusters/nope");
    like $msg, qr/Cluster 'nope' was not found/, "  (the API says: $msg)";
    like $err, qr/\Q$msg\E/, '  the API\'s message on stderr';
    is $out, '', '  nothing on stdout';

    ($code, $out, $err) = ctl('describe', 'cluster', 'nope');
    exit_is($code, 3, 'describe cluster nope: exit 3');
    like $err, qr/\Q$msg\E/, '  the API\'s message';

    ($code, $out, $err) = ctl('create', 'cluster', '-f', "$examples/cluster.yaml");
    exit_is($code, 4, 'create cluster -f cluster.yaml again: exit 4');
    like $err, qr/Cluster 'c-edge-1' already exists/, '  saying so';

    # denied: a user with no role in the organization
    ctl_ok('login', '--url', $url, '--ca', $ca, '--org', $org, '--token', $nobody_token, '--name', 'nobody');
    ($code, $out, $err) = ctl('--context', 'nobody', 'get', 'clusters');
    exit_is($code, 5, 'get clusters as a user with no roles: exit 5');
    $msg = PurserStack::error_message(($s->api('GET', "$ORG/clusters", undef, $nobody_token))[1]);
    like $err, qr/\Q$msg\E/, "  the API's message: $msg";
    ($code, $out, $err) = ctl('--context', 'nobody', 'create', 'cluster', 'sneaky');
    exit_is($code, 5, 'create cluster as that user: exit 5');
    is api_status('GET', "$ORG/clusters/c-sneaky"), 404, '  and nothing was made';
    ctl_ok('config', 'use-context', 'local');

    ($code, $out, $err) = ctl('patch', 'user', 'admin', '-p', '{"active": fal');
    exit_is($code, 7, 'patch with a -p that is not JSON: exit 7');
    ok api_data('/users/admin')->{active}, '  the user unchanged';
    my $broken = write_file('broken.yaml', "metadata: {name: [\n");
    ($code, $out, $err) = ctl('create', 'cluster', '-f', $broken);
    exit_is($code, 7, 'create -f a file that does not parse: exit 7');
    like $err, qr/broken\.yaml/, '  naming the file';
    ($code, $out, $err) = ctl('create', 'cluster', '-f', "$tmp/missing.yaml");
    exit_is($code, 7, 'create -f a file that does not exist: exit 7');
    my $bad = write_file('bad-cluster.yaml', "metadata: {name: bad-spec}\nspec: {color: red}\n");
    ($code, $out, $err) = ctl('create', 'cluster', '-f', $bad);
    exit_is($code, 7, 'a cluster the API refuses (400): exit 7');
    like $err, qr/spec\.color: unknown field/, '  with the API\'s message';

    ($code, $out, $err) = ctl('frobnicate');
    exit_is($code, 2, 'an unknown command: exit 2');
    like $err, qr/frobnicate/, '  naming it';
    ($code, $out, $err) = ctl('get', 'frobs');
    exit_is($code, 2, 'an unknown kind: exit 2');
    like $err, qr/frobs/, '  naming it';
    ($code, $out, $err) = ctl('get', 'clusters', '--no-such-option');
    exit_is($code, 2, 'an unknown option: exit 2');
    ($code, $out, $err) = ctl('-o', 'xml', 'get', 'clusters');
    exit_is($code, 2, '-o xml: exit 2');

    my $closed = "$tmp/closed/config.yaml";
    write_file($closed, YAML::XS::Dump({ 'current-context' => 'closed', contexts => [
        { name => 'closed', url => "https://127.0.0.1:$closed_port", ca => $ca, organization => $org, token => $admin_token } ] }));
    ($code, $out, $err) = ctl({ PURSER_CTL_CONFIG => $closed }, 'get', 'clusters');
    exit_is($code, 6, 'a context whose server is not there (a closed port): exit 6');
    like $err, qr/127\.0\.0\.1/, '  naming where it tried';
    ($code, $out, $err) = ctl('login', '--url', "https://127.0.0.1:$closed_port", '--ca', $ca, '--org', $org,
                              '--token', $admin_token, '--name', 'closed');
    exit_is($code, 6, 'login to a closed port: exit 6');
    ok !context_named('closed'), '  no context written';
};

subtest 'the document API under the context\'s organization, or at the root' => sub {
    my ($code, $out, $err) = ctl('--verbose', 'get', 'revisions');
    exit_is($code, 0, '--verbose get revisions: exit 0');
    like $err, qr{GET \Q$url\E/organizations/\Q$org\E/api/v1\.0/revisions}, '  asks under /organizations/ORG (the context names one)';
    ctl_ok('login', '--url', $url, '--ca', $ca, '--token', $admin_token, '--name', 'no-org');
    ($code, $out, $err) = ctl('--verbose', '--context', 'no-org', 'get', 'revisions');
    exit_is($code, 0, 'a context without an organization: get revisions');
    like $err, qr{GET \Q$url\E/api/v1\.0/revisions}, '  asks at the root';
    ctl_ok('config', 'use-context', 'local');
};

############################################################################################
# 7. The commands of client/apply.c, verbs.c, stream.c and cookbook.c (skipped while stubs)
############################################################################################
subtest 'apply' => sub {
    my ($code, $out, $err) = guard('apply', 'apply', '-f', "$examples/site/site-v2.yaml", '--bucket', 'site');
    exit_is($code, 0, 'apply -f site-v2.yaml --bucket site: exit 0');
    my $rev = newest_revision();
    ok $rev > $rev1, "  a new revision: $rev";
    my ($oam) = grep { $_->{metadata}{name} eq 'oam-network' } @{ api_data("$DOCS/revisions/$rev/documents") // [] };
    is $oam && $oam->{data}{gateway}, '10.20.0.254', '  holding the changed document';
    ($code, $out, $err) = ctl('apply', '-f', "$examples/site/site-v2.yaml", '--bucket', 'site');
    exit_is($code, 0, 'the same again: exit 0');
    like $out . $err, qr/unchanged/, '  said to be unchanged';
    is newest_revision(), $rev, '  and no new revision';

    ($code, $out, $err) = ctl('apply', '-f', "$examples/policies/base.lock.json", '--policy-group', 'ctl-apply');
    exit_is($code, 0, 'apply -f base.lock.json --policy-group ctl-apply: exit 0');
    is api_data("$ORG/policy_groups/ctl-apply/policies/base")->{revision_id}, $lock_v1->{revision_id}, '  the group serves the lock';
    ($code, $out, $err) = ctl('apply', '-f', "$examples/policies/base.lock.json", '--policy-group', 'ctl-apply');
    exit_is($code, 0, '  again: exit 0');
    like $out . $err, qr/unchanged/, '  unchanged';
    ($code, $out, $err) = ctl('apply', '-f', "$examples/policies/base-v2.lock.json", '--policy-group', 'ctl-apply');
    exit_is($code, 0, 'apply -f base-v2.lock.json --policy-group ctl-apply: exit 0');
    is api_data("$ORG/policy_groups/ctl-apply/policies/base")->{revision_id}, $lock_v2->{revision_id}, '  the group serves v2';

    ($code, $out, $err) = ctl('apply', '-f', "$examples/cluster.yaml");
    exit_is($code, 0, 'apply -f cluster.yaml (c-edge-1 exists, changed since): exit 0');
    my $c = api_data("$ORG/clusters/c-edge-1");
    is $c->{spec}{display_name}, 'Edge 1 (Lisbon lab)', '  the file\'s spec is back';
    my $revision = cluster_revision('c-edge-1');
    ($code, $out, $err) = ctl('apply', '-f', "$examples/cluster.yaml");
    exit_is($code, 0, '  again: exit 0');
    like $out . $err, qr/unchanged/, '  unchanged';
    is cluster_revision('c-edge-1'), $revision, '  and not written (the same revision)';

    my $broken = write_file('broken-site.yaml', "---\nschema: [\n");
    ($code, $out, $err) = ctl('apply', '-f', $broken, '--bucket', 'site');
    exit_is($code, 7, 'apply a file that does not parse: exit 7');

    # an organization: created (its validator's key once, on stderr), then unchanged, then updated
    my $org_doc = sub { write_file('apply-org.yaml', "kind: Organization\nversion: v1\nmetadata:\n"
        . "  name: ctl-apply-org\n  labels: {team: ctl}\nspec:\n  full_name: $_[0]\n") };
    ($code, $out, $err) = ctl('apply', '-f', $org_doc->('Apply Org'));
    exit_is($code, 0, 'apply -f an Organization: exit 0');
    like $out, qr/organization ctl-apply-org: created/, '  created';
    like $err, qr/validator.*shown this once:\n-----BEGIN RSA PRIVATE KEY/s, '  its validator\'s key on stderr, once';
    my $o = api_data('/organizations/ctl-apply-org');
    is $o && $o->{full_name}, 'Apply Org', '  the API has it, with its full name';
    is_deeply $o && $o->{labels}, { team => 'ctl' }, '  and its labels';
    ($code, $out, $err) = ctl('apply', '-f', $org_doc->('Apply Org'));
    exit_is($code, 0, '  again: exit 0');
    like $out, qr/organization ctl-apply-org: unchanged/, '  unchanged';
    unlike $err, qr/PRIVATE KEY/, '  and no key this time';
    ($code, $out, $err) = ctl('apply', '-f', $org_doc->('Apply Org, renamed'));
    exit_is($code, 0, '  with another full name: exit 0');
    like $out, qr/organization ctl-apply-org: configured/, '  configured';
    is api_data('/organizations/ctl-apply-org')->{full_name}, 'Apply Org, renamed', '  the API has the new name';
    api('DELETE', '/organizations/ctl-apply-org?force=true');

    # a member: its roles granted, a limit given, unchanged when held, and a role it holds beyond
    # the file's is said (POST adds roles to a member, never takes one away)
    $s->must('user', 'POST', '/users', { username => 'ctl-apply-user', email => 'apply@example.com', create_key => JSON::PP::false });
    my $member = sub { write_file('apply-member.yaml', "kind: Member\nversion: v1\nmetadata:\n"
        . "  name: ctl-apply-user\nspec:\n$_[0]") };
    ($code, $out, $err) = ctl('apply', '-f', $member->("  roles: [reader]\n"));
    exit_is($code, 0, 'apply -f a Member: exit 0');
    like $out, qr/member ctl-apply-user: created/, '  created';
    ok is_member('ctl-apply-user'), '  a member';
    ($code, $out, $err) = ctl('apply', '-f', $member->("  roles: [reader]\n"));
    like $out, qr/member ctl-apply-user: unchanged/, '  again: unchanged';
    my $limited = "  roles: [release, reader]\n  policy_groups: {release: [ctl-dev, 'stage-*']}\n";
    ($code, $out, $err) = ctl('apply', '-f', $member->($limited));
    exit_is($code, 0, '  another role, limited: exit 0');
    like $out, qr/member ctl-apply-user: configured/, '  configured';
    my ($m) = grep { $_->{user}{username} eq 'ctl-apply-user' } @{ api_data("$ORG/users") // [] };
    is_deeply $m && $m->{user}{policy_groups}, { release => ['ctl-dev', 'stage-*'] }, '  the API has the limit';
    ($code, $out, $err) = ctl('apply', '-f', $member->($limited));
    like $out, qr/member ctl-apply-user: unchanged/, '  again: unchanged';
    ($code, $out, $err) = ctl('apply', '-f', $member->("  roles: [reader]\n"));
    exit_is($code, 0, '  the first file again: exit 0');
    like $out, qr/member ctl-apply-user: unchanged/, '  unchanged';
    like $err, qr/also holds release/, '  saying the role it holds beyond the file';
    ($code, $out, $err) = ctl('apply', '-f', $member->("  roles: reader\n"));
    exit_is($code, 7, '  roles that are not a list: exit 7');

    # a kind apply does not know: the whole file refused before anything is sent
    ($code, $out, $err) = ctl('apply', '-f', write_file('apply-client.yaml',
        "kind: Organization\nversion: v1\nmetadata: {name: ctl-apply-never}\n---\n"
        . "kind: Client\nversion: v1\nmetadata: {name: ctl-x}\n"));
    exit_is($code, 7, 'apply a Client: exit 7');
    like $err, qr/document 2: kind Client .*Organization, Member, Cluster, Node/, '  naming the kinds it knows';
    is api_status('GET', '/organizations/ctl-apply-never'), 404, '  and the document before it not applied';
};

subtest 'diff' => sub {
    # the state, through the API: bucket site holds site.yaml (revision A), then site-v2 (B)
    $s->yaml_call('PUT', "$DOCS/buckets/site/documents", $site_v1);
    my $a = newest_revision();
    $s->yaml_call('PUT', "$DOCS/buckets/site/documents", $site_v2);
    my $b = newest_revision();
    my ($code, $out, $err) = guard('diff', 'diff', $a, $b);
    exit_is($code, 1, "diff $a $b (one document changed): exit 1");
    like $out, qr/oam-network|modified|changed/, '  saying what';
    ($code, $out, $err) = ctl('diff', $a, $a);
    exit_is($code, 0, "diff $a $a: exit 0");
    ($code, $out, $err) = ctl('diff', $a, $b, '--deep');
    exit_is($code, 1, "diff $a $b --deep: exit 1");
    like $out, qr/gateway|10\.20\.0\.254/, '  the rendered difference';
    like $out, qr/^\s+data\.gateway: "10\.20\.0\.1" -> "10\.20\.0\.254"$/m, '  its path as people read it (data.gateway)';
    unlike $out, qr/\['/, '  not deepdiff\'s (root[\'gateway\'])';
    ($code, $out, $err) = ctl('diff', '-f', "$examples/site/site-v2.yaml", '--bucket', 'site');
    exit_is($code, 0, 'diff -f site-v2.yaml --bucket site (what the server has): exit 0');
    ($code, $out, $err) = ctl('diff', '-f', "$examples/site/site.yaml", '--bucket', 'site');
    exit_is($code, 1, 'diff -f site.yaml --bucket site: exit 1');
    like $out, qr/gateway|oam-network/, '  saying what differs';
    $s->must('lock', 'PUT', "$ORG/policy_groups/ctl-da/policies/base", $lock_v1);
    $s->must('lock', 'PUT', "$ORG/policy_groups/ctl-db/policies/base", $lock_v1);
    $s->must('lock', 'PUT', "$ORG/policy_groups/ctl-dc/policies/base", $lock_v2);
    ($code, $out, $err) = ctl('diff', '--groups', 'ctl-da', 'ctl-db');
    exit_is($code, 0, 'diff --groups of two groups at the same lock: exit 0');
    ($code, $out, $err) = ctl('diff', '--groups', 'ctl-da', 'ctl-dc');
    exit_is($code, 1, 'diff --groups of groups at two locks: exit 1');
    like $out, qr/base/, '  naming the policy';
    ($code, $out, $err) = ctl('diff', $a, 999999);
    exit_is($code, 3, 'diff with a revision that does not exist: exit 3');

    # Policyfile locks: against --policy-group's, else the uploaded revision of its revision_id
    ($code, $out, $err) = ctl('diff', '-f', "$examples/policies/base.lock.json", '--policy-group', 'ctl-da');
    exit_is($code, 0, 'diff -f base.lock.json --policy-group ctl-da (the group\'s lock): exit 0');
    ($code, $out, $err) = ctl('diff', '-f', "$examples/policies/base-v2.lock.json", '--policy-group', 'ctl-da');
    exit_is($code, 1, 'diff -f base-v2.lock.json --policy-group ctl-da: exit 1');
    like $out, qr{^--- server/policy_group/ctl-da/base$}m, '  against the group\'s lock';
    like $out, qr/^-\s+version: 1\.0\.0$/m, '  the cookbook\'s version it has';
    like $out, qr/^\+\s+version: 1\.1\.0$/m, '  and the file\'s';
    ($code, $out, $err) = ctl('diff', '-f', "$examples/policies/base.lock.json");
    exit_is($code, 0, 'diff -f base.lock.json (its revision uploaded): exit 0');
    my $unknown = write_file('unknown.lock.json', $json->encode({ %$lock_v1, revision_id => 'f' x 64 }));
    ($code, $out, $err) = ctl('diff', '-f', $unknown);
    exit_is($code, 1, 'diff -f a lock whose revision is not uploaded: exit 1');
    like $out, qr{^--- server/policy/base/ffffffffff$}m, '  against nothing';
    like $out, qr/^\+revision_id: f{64}$/m, '  all of it added';

    # a node: the file's fields against the server's
    $s->must('node', 'POST', "$ORG/nodes", { name => 'ctl-diff-node', run_list => ['recipe[hello]'], normal => { tier => 'web' } });
    my $node = sub { write_file('diff-node.yaml', "kind: Node\nversion: v1\nmetadata: {name: ctl-diff-node}\n"
        . "spec:\n  run_list: ['recipe[hello]']\n  normal: {tier: $_[0]}\n") };
    ($code, $out, $err) = ctl('diff', '-f', $node->('web'));
    exit_is($code, 0, 'diff -f a Node as the server has it: exit 0');
    ($code, $out, $err) = ctl('diff', '-f', $node->('db'));
    exit_is($code, 1, 'diff -f a Node with another attribute: exit 1');
    like $out, qr{^--- server/node/ctl-diff-node\n.*^-  tier: web\n.*^\+  tier: db$}ms, '  saying what';
    ($code, $out, $err) = ctl('--verbose', 'diff', '-f', $node->('db'));
    like $err, qr{GET \S+/organizations/\Q$org\E/nodes/ctl-diff-node -> 200}, '  read with GET .../nodes/{node}';
};

subtest 'promote' => sub {
    $s->must('lock', 'PUT', "$ORG/policy_groups/ctl-pa/policies/base", $lock_v1);
    $s->must('lock', 'PUT', "$ORG/policy_groups/ctl-pb/policies/base", $lock_v2);
    my ($code, $out, $err) = guard('promote', 'promote', '--from', 'ctl-pa', '--to', 'ctl-pb', 'base');
    exit_is($code, 0, 'promote --from ctl-pa --to ctl-pb base: exit 0');
    is api_data("$ORG/policy_groups/ctl-pb/policies/base")->{revision_id}, $lock_v1->{revision_id}, '  ctl-pb serves what ctl-pa does';
    ($code, $out, $err) = ctl('promote', '--to', 'ctl-pb', 'base', '--revision', $lock_v2->{revision_id});
    exit_is($code, 0, 'promote --to ctl-pb base --revision V2: exit 0');
    is api_data("$ORG/policy_groups/ctl-pb/policies/base")->{revision_id}, $lock_v2->{revision_id}, '  ctl-pb serves v2';
    ($code, $out, $err) = ctl('promote', '--from', 'ctl-nosuch', '--to', 'ctl-pb');
    exit_is($code, 3, 'promote from a group that does not exist: exit 3');
    is api_data("$ORG/policy_groups/ctl-pb/policies/base")->{revision_id}, $lock_v2->{revision_id}, '  ctl-pb unchanged';
    ($code, $out, $err) = ctl('promote', '--to', 'ctl-pb');
    exit_is($code, 2, 'promote without --from or --revision: exit 2');
};

subtest 'render' => sub {
    my ($code, $out, $err) = guard('render', 'render', $rev1, '-o', 'json');
    exit_is($code, 0, "render $rev1 -o json: exit 0");
    is_deeply eval { $json->decode($out) }, api_data("$DOCS/revisions/$rev1/rendered-documents"),
        '  the rendered documents, as the API renders them';
    ($code, $out, $err) = ctl('render', $rev1, '--schema', 'example/Network/v1', '-o', 'yaml');
    exit_is($code, 0, "render $rev1 --schema example/Network/v1 -o yaml: exit 0");
    my $docs = yaml_load($out);
    is_deeply $docs, api_data("$DOCS/revisions/$rev1/rendered-documents?schema=example/Network/v1"), '  the same, as YAML';
    my ($service) = grep { $_->{metadata}{name} eq 'inventory-db' } @{ api_data("$DOCS/revisions/$rev1/rendered-documents") // [] };
    like $service->{data}{url}, qr/not-a-real-password/, '  (substituted: the secret is in the URL)';
    ($code, $out, $err) = ctl('render');
    exit_is($code, 0, 'render (the newest revision): exit 0');
    ok yaml_load($out) && @{ yaml_load($out) }, '  YAML documents';
    ($code, $out, $err) = ctl('render', 999999);
    exit_is($code, 3, 'render a revision that does not exist: exit 3');
};

subtest 'rollback' => sub {
    my $before = newest_revision();
    my ($code, $out, $err) = guard('rollback', 'rollback', $rev1);
    exit_is($code, 0, "rollback $rev1: exit 0");
    my $now = newest_revision();
    ok $now > $before, "  a new revision: $now";
    like $out, qr/\b$now\b/, '  named in the output';
    my $docs = sub { [ sort map { "$_->{schema} $_->{metadata}{name} " . $json->encode($_->{data}) } @{ api_data("$DOCS/revisions/$_[0]/documents") // [] } ] };
    is_deeply $docs->($now), $docs->($rev1), "  with the documents of revision $rev1";
    ($code, $out, $err) = ctl('rollback', 999999);
    exit_is($code, 3, 'rollback to a revision that does not exist: exit 3');
};

subtest 'tag' => sub {
    my ($code, $out, $err) = guard('tag', 'tag', $rev1, 'ctl-released');
    exit_is($code, 0, "tag $rev1 ctl-released: exit 0");
    is api_status('GET', "$DOCS/revisions/$rev1/tags/ctl-released"), 200, '  the API has the tag';
    my $data = write_file('tag.yaml', "approved_by: ops\n");
    ($code, $out, $err) = ctl('tag', $rev1, 'ctl-approved', '-f', $data);
    exit_is($code, 0, "tag $rev1 ctl-approved -f tag.yaml: exit 0");
    is_deeply api_data("$DOCS/revisions/$rev1/tags/ctl-approved"), { 'ctl-approved' => { approved_by => 'ops' } }, '  with its data';
    ($code, $out, $err) = ctl('tag', 999999, 'x');
    exit_is($code, 3, 'tag a revision that does not exist: exit 3');
    ($code, $out, $err) = ctl('tag', $rev1);
    exit_is($code, 2, 'tag without a TAG: exit 2');
};

subtest 'validation report' => sub {
    my ($code, $out, $err) = guard('validation', 'validation', 'report', $rev1, 'ctl-check', '--status', 'success');
    exit_is($code, 0, "validation report $rev1 ctl-check --status success: exit 0");
    my ($v) = grep { $_->{name} eq 'ctl-check' } @{ api_data("$DOCS/revisions/$rev1/validations")->{results} // [] };
    is $v && $v->{status}, 'success', '  the API has it';
    my $errors = write_file('errors.yaml', "- message: the gateway is not in the CIDR\n  name: oam-network\n  schema: example/Network/v1\n  path: .gateway\n  layer: site\n  error_section: {}\n  validation_schema: {}\n  schema_path: .\n");
    ($code, $out, $err) = ctl('validation', 'report', $rev1, 'ctl-failed', '--status', 'failure', '-f', $errors);
    exit_is($code, 0, "validation report ... --status failure -f errors.yaml: exit 0");
    ($v) = grep { $_->{name} eq 'ctl-failed' } @{ api_data("$DOCS/revisions/$rev1/validations")->{results} // [] };
    is $v && $v->{status}, 'failure', '  the API has the failure';
};

subtest 'facts report' => sub {
    my $versions = scalar @{ api_data("$ORG/clusters/c-edge-1/facts/history")->{items} // [] };
    my ($code, $out, $err) = guard('facts', 'facts', 'report', 'c-edge-1', '-f', "$examples/facts.json");
    exit_is($code, 0, 'facts report c-edge-1 -f examples/facts.json: exit 0');
    is_deeply api_data("$ORG/clusters/c-edge-1")->{status}{dynamic_facts}, $facts, '  the cluster\'s dynamic facts are the file\'s';
    is scalar @{ api_data("$ORG/clusters/c-edge-1/facts/history")->{items} // [] }, $versions + 1, '  kept as a version';
    ($code, $out, $err) = ctl('facts', 'report', 'c-nope', '-f', "$examples/facts.json");
    exit_is($code, 3, 'facts report for a cluster that does not exist: exit 3');
    ($code, $out, $err) = ctl('facts', 'report', 'c-edge-1', '-f', "$tmp/missing.json");
    exit_is($code, 7, 'facts report -f a missing file: exit 7');
};

subtest 'reset-token' => sub {
    my $old = $s->must('token', 'POST', "$ORG/clusters/c-edge-1/bootstrap-token")->{bootstrap_token}{token};
    my ($code, $out, $err) = guard('reset-token', 'reset-token', 'c-edge-1');
    exit_is($code, 0, 'reset-token c-edge-1: exit 0');
    my ($new) = $out =~ /\b([0-9a-f]{64})\b/;
    ok $new, '  the new token is shown';
    isnt $new // '', $old, '  a new one';
    isnt api_status('GET', "/install/bootstrap.json?token=$old", undef, authorization => ''), 200, '  the old one no longer works';
    ($code, $out, $err) = ctl('reset-token', 'c-nope');
    exit_is($code, 3, 'reset-token for a cluster that does not exist: exit 3');
};

subtest 'bootstrap' => sub {
    my $made = $s->must('cluster', 'POST', "$ORG/clusters", { metadata => { name => 'ctl-boot' }, spec => {} });
    my $install = $made->{bootstrap_token}{install_url};
    my ($code, $out, $err) = guard('bootstrap', 'bootstrap', $install, '--name', 'ctl-boot');
    exit_is($code, 0, 'bootstrap INSTALL_URL --name ctl-boot: exit 0');
    my $ctx = context_named('ctl-boot');
    ok $ctx, '  a context ctl-boot';
    is $ctx && $ctx->{organization}, $org, '  in the organization';
    is mode_of($config), '0600', '  the contexts file still mode 600';
    my @keys = glob "$tmp/ctl/keys/*.pem";
    ok @keys, '  the cluster\'s key beside the contexts file';
    is mode_of($_), '0600', "  $_: mode 600" for @keys;
    ok api_data("$ORG/clusters/c-ctl-boot")->{status}{bootstrap_token}{redeemed_at}, '  the API says the token was redeemed';
    ($code, $out, $err) = ctl('--context', 'ctl-boot', 'get', 'cluster', 'c-ctl-boot');
    exit_is($code, 0, 'the cluster\'s credential reads its own cluster');
    ($code, $out, $err) = ctl('--context', 'ctl-boot', 'delete', 'cluster', 'c-ctl-boot');
    exit_is($code, 5, '  but may not delete it: exit 5');
    is api_status('GET', "$ORG/clusters/c-ctl-boot"), 200, '  it is still there';
    ($code, $out, $err) = ctl('bootstrap', $install, '--name', 'ctl-boot-again');
    isnt $code, 0, 'a redeemed token again: refused';
    ok !context_named('ctl-boot-again'), '  no context written';
};

subtest 'git' => sub {
    my ($code, $out, $err) = guard('git', 'git', 'check');
    exit_is($code, 0, 'git check: exit 0');
    is $out, "$url/git/$org.git\n", '  the history\'s URL for git clone';
    my $made = $s->must('cluster', 'POST', "$ORG/clusters", { metadata => { name => 'ctl-git' }, spec => { git_repo => { type => 'auto' } } });
    ($code, $out, $err) = ctl('git', 'check', '--cluster', 'c-ctl-git');
    exit_is($code, 0, 'git check --cluster c-ctl-git: exit 0');
    is $out, "$url/git/$org/catalogs/c-ctl-git.git\n", '  the catalog\'s URL';
    ($code, $out, $err) = ctl('git', 'check', '--cluster', 'c-no-such');
    isnt $code, 0, 'git check of a cluster that does not exist fails';
    like $err, qr/c-no-such/, '  naming it';
    ($code, $out, $err) = ctl('git', 'push');
    isnt $code, 0, 'git with another verb: the usage';
    ($code, $out, $err) = ctl('bootstrap', $made->{bootstrap_token}{install_url}, '--name', 'ctl-git');
    exit_is($code, 0, 'bootstrap of a cluster with a catalog: exit 0');
    like $out, qr{^its git repository: \Q$url/git/$org/catalogs/c-ctl-git.git\E$}m, '  it prints the catalog\'s URL';
};

subtest 'token' => sub {
    my ($code, $out, $err) = guard('token', 'token', 'create', '--user', 'admin', '--description', 'ctl-ci', '-o', 'json');
    exit_is($code, 0, 'token create --user admin --description ctl-ci: exit 0');
    my $made = eval { $json->decode($out) } // {};
    like $made->{token} // '', qr/^purser_/, '  the token, shown once';
    my $id = $made->{id} // '';
    my ($listed) = grep { $_->{id} eq $id } @{ api_data('/users/admin/tokens') // [] };
    is $listed && $listed->{description}, 'ctl-ci', '  the API lists it';
    ($code, $out, $err) = ctl({ PURSER_TOKEN => $made->{token} }, 'get', 'clusters');
    exit_is($code, 0, '  and it works');
    ($code, $out, $err) = ctl('token', 'create', '--user', 'admin', '--description', 'ctl-30d', '--expires-in', '30');
    exit_is($code, 0, 'token create --expires-in 30 (the command table\'s example): exit 0');
    my ($t30) = grep { ($_->{description} // '') eq 'ctl-30d' } @{ api_data('/users/admin/tokens') // [] };
    ok $t30 && $t30->{expires_at}, '  it expires';
    ($code, $out, $err) = ctl('token', 'list', '--user', 'admin');
    exit_is($code, 0, 'token list --user admin: exit 0');
    like $out, qr/^\Q$id\E\s/m, '  lists it';
    ($code, $out, $err) = ctl('--context', 'chef', 'token', 'list');
    exit_is($code, 0, 'token list with the Chef context (your own tokens): exit 0');
    like $out, qr/^\Q$id\E\s/m, '  the admin\'s';
    ($code, $out, $err) = ctl('token', 'disable', $id, '--user', 'admin');
    exit_is($code, 0, "token disable $id: exit 0");
    ($listed) = grep { $_->{id} eq $id } @{ api_data('/users/admin/tokens') // [] };
    ok $listed && !$listed->{active}, '  the API has it inactive';
    $s->wait_auth_cache;
    ($code, $out, $err) = ctl({ PURSER_TOKEN => $made->{token} }, 'get', 'clusters');
    exit_is($code, 5, '  and refuses it: exit 5');
    ($code, $out, $err) = ctl('token', 'enable', $id, '--user', 'admin');
    exit_is($code, 0, "token enable $id: exit 0");
    ($listed) = grep { $_->{id} eq $id } @{ api_data('/users/admin/tokens') // [] };
    ok $listed && $listed->{active}, '  active again';
    ($code, $out, $err) = ctl('token', 'revoke', $id, '--user', 'admin');
    exit_is($code, 0, "token revoke $id: exit 0");
    ok !grep({ $_->{id} eq $id } @{ api_data('/users/admin/tokens') // [] }), '  the API no longer lists it';
    $s->wait_auth_cache;
    ($code, $out, $err) = ctl({ PURSER_TOKEN => $made->{token} }, 'get', 'clusters');
    exit_is($code, 5, '  and refuses it: exit 5');
    ($code, $out, $err) = ctl('token', 'revoke', $id, '--user', 'admin');
    exit_is($code, 3, 'revoke it again: exit 3');
};

subtest 'watch' => sub {
    my @events = all_events();
    my $since = @events ? $events[-1]{seq} : 0;
    my ($code, $out, $err) = guard('watch', 'watch', '--since', $since, '--kinds', 'cluster', '--timeout', '1');
    exit_is($code, 0, 'watch --since LAST --kinds cluster --timeout 1: exit 0 at its timeout');
    ok $last{seconds} >= 0.9 && $last{seconds} < 15, sprintf('  after about a second (%.1f s)', $last{seconds});
    my $run = spawn('watch', '--since', $since, '--kinds', 'cluster', '--timeout', '6');
    sleep 1.5;
    $s->must('cluster', 'POST', "$ORG/clusters", { metadata => { name => 'ctl-watched' }, spec => {} });
    $s->must('node', 'POST', "$ORG/nodes", { name => 'ctl-watch-node', chef_environment => '_default', run_list => [] });
    ($code, $out, $err) = finish_run($run, 40);
    exit_is($code, 0, 'watch --timeout 6 while a cluster and a node are made: exit 0');
    like $out, qr/c-ctl-watched/, '  the cluster\'s event is shown as it happens';
    unlike $out, qr/ctl-watch-node/, '  the node\'s is not (--kinds cluster)';
    ok $last{seconds} >= 5 && $last{seconds} < 30, sprintf('  it ended at its timeout (%.1f s)', $last{seconds});
    ($code, $out, $err) = ctl('watch', '--since', 0, '--kinds', 'organization', '--timeout', '1');
    exit_is($code, 0, 'watch --since 0: exit 0');
    like $out, qr/\b\Q$org\E\b/, '  the past events first';
};

subtest 'export' => sub {
    my $file = "$tmp/export.yaml";
    my ($code, $out, $err) = guard('export', 'export', '-f', $file);
    exit_is($code, 0, 'export -f export.yaml: exit 0');
    is mode_of($file), '0600', '  the file is mode 600';
    my $docs = yaml_load(slurp($file));
    ok $docs && @$docs, '  a YAML stream of ' . scalar(@{ $docs // [] }) . ' resources';
    my $r = $s->request('GET', "$ORG/export", { headers => { authorization => "Bearer $admin_token", accept => 'application/x-yaml' } });
    is $r->{status}, 200, '  (GET /export)';
    is_deeply $docs, yaml_load($r->{content}), '  the API\'s export';
    ok((grep { $_->{kind} eq 'Cluster' && $_->{metadata}{name} eq 'c-edge-1' } @{ $docs // [] }), '  c-edge-1 among them');
    ($code, $out, $err) = ctl('export');
    exit_is($code, 0, 'export (to stdout): exit 0');
    is_deeply yaml_load($out), $docs, '  the same stream';
    unlike $out, qr/PRIVATE KEY|purser_[A-Za-z0-9_-]{43}/, '  no key, no token';
};

subtest 'import' => sub {
    my $r = $s->request('GET', "$ORG/export?secrets=true", { headers => { authorization => "Bearer $admin_token", accept => 'application/x-yaml' } });
    my $file = write_file('full-export.yaml', $r->{content});
    $s->must('org', 'POST', '/organizations', { name => 'ctl-copy' });
    my ($code, $out, $err) = guard('import', '--org', 'ctl-copy', 'import', '-f', $file);
    exit_is($code, 0, '--org ctl-copy import -f full-export.yaml: exit 0');
    my $copy = api_data('/organizations/ctl-copy/clusters');
    ok((grep { $_->{metadata}{name} eq 'c-edge-1' } @{ $copy->{items} // [] }), '  the API has c-edge-1 in ctl-copy');
    is_deeply [ sort keys %{ api_data('/organizations/ctl-copy/policy_groups') // {} } ],
        [ sort keys %{ api_data("$ORG/policy_groups") // {} } ], '  and the policy groups';
    ($code, $out, $err) = ctl('--org', 'ctl-copy', 'import', '-f', $file);
    exit_is($code, 4, 'import into an organization that is not empty: exit 4');
    my $broken = write_file('broken-export.yaml', "- kind: [\n");
    $s->must('org', 'POST', '/organizations', { name => 'ctl-copy2' });
    ($code, $out, $err) = ctl('--org', 'ctl-copy2', 'import', '-f', $broken);
    exit_is($code, 7, 'import a file that is no export: exit 7');
};

subtest 'cookbook upload and download' => sub {
    my %files = ('metadata.json' => qq({"name":"hello","version":"1.0.0"}),
                 'recipes/default.rb' => "log 'hello'\n",
                 'files/default/blob.bin' => join('', map { chr($_ % 256) } 0 .. 4095));
    write_file("cookbooks/hello/$_", $files{$_}) for keys %files;
    my $id = '1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c';
    my ($code, $out, $err) = guard('cookbook', 'cookbook', 'upload', "$tmp/cookbooks/hello", '--identifier', $id);
    exit_is($code, 0, 'cookbook upload ./hello --identifier ID: exit 0');
    my $artifact = api_data("$ORG/cookbook_artifacts/hello/$id");
    ok $artifact, '  the API has the artifact hello/ID';
    my %sums = map { ($_->{path} // $_->{name}) => $_->{checksum} } @{ $artifact->{all_files} // [] };
    is_deeply \%sums, { map { $_ => md5_hex($files{$_}) } keys %files }, '  every file, by its checksum';
    ($code, $out, $err) = ctl('cookbook', 'upload', "$tmp/cookbooks/hello", '--identifier', $id);
    exit_is($code, 0, 'the same upload again: exit 0');
    ($code, $out, $err) = ctl('cookbook', 'download', 'hello', $id, "$tmp/downloaded");
    exit_is($code, 0, 'cookbook download hello ID DIR: exit 0');
    for my $f (sort keys %files) {
        is slurp("$tmp/downloaded/$f"), $files{$f}, "  $f, byte for byte";
    }
    ($code, $out, $err) = ctl('cookbook', 'download', 'hello', 'nope', "$tmp/downloaded2");
    exit_is($code, 3, 'download an identifier that does not exist: exit 3');
};

subtest 'health' => sub {
    my ($code, $out, $err) = guard('health', 'health');
    exit_is($code, 0, 'health: exit 0');
    like $out, qr/\bup\b/, '  the server is up';
    ($code, $out, $err) = ctl('health', '--deep');
    exit_is($code, 0, 'health --deep: exit 0');
    like $out, qr/database/, '  the database checked';
    ($code, $out, $err) = ctl({ PURSER_URL => "https://127.0.0.1:$closed_port" }, 'health');
    exit_is($code, 6, 'health of a closed port: exit 6');
};

subtest 'version' => sub {
    my ($code, $out, $err) = guard('version', 'version');
    exit_is($code, 0, 'version: exit 0');
    my ($mine) = (ctl('--version'))[1] =~ /purserctl (\S+)/;
    like $out, qr/purserctl \Q$mine\E/, "  purserctl's version ($mine)";
    like $out, qr/\Q$_\E/, "  the server's document API $_" for keys %{ api_data('/versions') // {} };
    my $both = ctl_json('version');
    is_deeply $both && $both->{server}, api_data('/versions'), '  -o json: the server\'s /versions';
};

subtest 'api' => sub {
    my ($code, $out, $err) = guard('api', 'api', 'GET', '/docs');
    exit_is($code, 0, 'api GET /docs: exit 0');
    is_deeply eval { $json->decode($out) }, $json->decode($s->get('/docs')->{content}), '  the API\'s /docs';
    ($code, $out, $err) = ctl('api', 'GET', '/metrics');
    exit_is($code, 0, 'api GET /metrics: exit 0');
    like $out, qr/^# (?:HELP|TYPE) purser_/m, '  the metrics';
    ($code, $out, $err) = ctl('api', 'GET', "$ORG/clusters/nope");
    exit_is($code, 3, 'api GET a cluster that does not exist: exit 3');
    like $out . $err, qr/Cluster 'nope' was not found/, '  with the API\'s answer';
    my $body = write_file('api-cluster.json', $json->encode({ metadata => { name => 'via-api' }, spec => {} }));
    ($code, $out, $err) = ctl('api', 'POST', "$ORG/clusters", '-f', $body);
    exit_is($code, 0, 'api POST /organizations/ORG/clusters -f FILE: exit 0');
    is api_status('GET', "$ORG/clusters/c-via-api"), 200, '  the API has it';
    ($code, $out, $err) = ctl('--context', 'chef', 'api', 'GET', "$ORG/clusters/c-via-api");
    exit_is($code, 0, 'api GET signed with the Chef key: exit 0');
    is eval { $json->decode($out)->{metadata}{name} }, 'c-via-api', '  the cluster';
};

# What a review of the client found, each held: an explicit --context beats the variables, a
# bootstrap goes to the install URL's own server and needs no context, a contexts file with a
# nameless entry, -o name of a create names what the server made, list options the API would
# ignore refused, destructive deletes said outright, https only, a bootstrap token never shown
# in a message, the completion's words.
subtest 'review fixes' => sub {
    my ($code, $out, $err) = ctl({ PURSER_URL => "https://127.0.0.1:$closed_port", PURSER_TOKEN => 'wrong' },
                                 '--context', 'local', 'get', 'clusters', '-o', 'name');
    exit_is($code, 0, '--context local beats PURSER_URL and PURSER_TOKEN');
    ($code, $out, $err) = ctl('create', 'cluster', 'ctl-named', '-o', 'name');
    is $out, "cluster/c-ctl-named\n", 'create -o name prints the name the server gave (c- added)';
    like $err, qr/install_url, shown this once:\n\Qhttps:\E/, '  and the one-time install URL on stderr';
    ($code, $out, $err) = ctl('delete', 'cluster', 'c-ctl-named', '-o', 'name');
    is $out, "cluster/c-ctl-named\n", 'delete -o name prints kind/name';
    ($code, $out, $err) = ctl('get', 'nodes', '-l', 'env=dev');
    exit_is($code, 2, 'get nodes -l: refused, nodes take no selector (not every node listed)');
    ($code, $out, $err) = ctl('get', 'nodes', '--policy', 'base');
    exit_is($code, 2, 'get nodes --policy without --policy-group: refused, not ignored');
    ($code, $out, $err) = ctl('get', 'revisions', '--page-size', '3');
    exit_is($code, 2, 'get revisions --page-size: refused (the document API pages otherwise)');
    ($code, $out, $err) = ctl('delete', 'tags', '--all');
    exit_is($code, 2, 'delete tags --all without --revision: refused, not the newest by default');
    ($code, $out, $err) = ctl('delete', 'revisions', '--all');
    exit_is($code, 2, 'delete revisions --all without --yes: refused');
    like $err, qr/--yes/, '  saying what it takes';
    ($code, $out, $err) = ctl('login', '--url', 'http://127.0.0.1:1', '--token', 't', '--name', 'plain');
    exit_is($code, 2, 'login over http://: refused (a token goes only over TLS)');
    ($code, $out, $err) = ctl('token', 'create', '--expires-in', 'abc');
    exit_is($code, 2, 'token create --expires-in abc: refused before anything is sent');
    like $err, qr/--expires-in/, '  naming the option';
    ($code, $out, $err) = ctl('api', 'get', '/versions');
    exit_is($code, 0, 'api get /versions: the method is sent as GET');

    # bootstrap with no contexts file at all: the install URL names the server
    my $made = $s->must('cluster', 'POST', "$ORG/clusters", { metadata => { name => 'ctl-fresh' }, spec => {} });
    my $install = $made->{bootstrap_token}{install_url};
    my $fresh = "$tmp/fresh/config.yaml";
    ($code, $out, $err) = ctl({ PURSER_CTL_CONFIG => $fresh }, 'bootstrap', $install, '--ca', $ca, '--name', 'edge');
    exit_is($code, 0, 'bootstrap INSTALL_URL on a machine with no context: exit 0');
    ($code, $out, $err) = ctl({ PURSER_CTL_CONFIG => $fresh }, '--context', 'edge', 'get', 'cluster', 'c-ctl-fresh', '-o', 'name');
    is $out, "cluster/c-ctl-fresh\n", '  its context reads its cluster';
    my $again = $s->must('reset', 'POST', "$ORG/clusters/c-ctl-fresh/bootstrap-token")->{bootstrap_token}{token};
    ($code, $out, $err) = ctl({ PURSER_CTL_CONFIG => $fresh }, '--verbose', 'bootstrap',
                              "https://127.0.0.1:$closed_port/install/bootstrap.json?token=$again", '--ca', $ca);
    exit_is($code, 6, 'bootstrap against a closed port: exit 6');
    unlike $err, qr/\Q$again\E/, '  the bootstrap token is not in the message';
    like $err, qr/token=\.\.\./, '  shown as token=...';

    # a contexts file with an entry that has no name
    my $odd = "$tmp/odd/config.yaml";
    write_file($odd, YAML::XS::Dump({ 'current-context' => 'b', contexts => [ { url => $url }, { name => 'b', url => $url } ] }));
    ($code, $out, $err) = ctl({ PURSER_CTL_CONFIG => $odd }, 'config', 'delete-context', 'b');
    exit_is($code, 0, 'config delete-context beside a nameless entry: exit 0 (no crash)');

    # the completion: no word glued to --help
    ($code, $out, $err) = ctl('completion', 'bash');
    unlike $out, qr/\w--help/, 'the completion\'s words are separate (no "enable--help")';
    like $out, qr/token\) COMPREPLY=\(\$\(compgen -W '[^']*\bcreate list revoke disable enable --help'/,
        '  token completes its sub-verbs';
};

subtest 'clusters by their dynamic facts, every organization\'s' => sub {
    my @local = ('--context', 'local');
    my $q = 'dynamic_facts.kubernetes_version.gitVersion>=v1.30;dynamic_facts.node_count>=3';
    (my $escaped = $q) =~ s/([^A-Za-z0-9._~-])/sprintf('%%%02X', ord $1)/ge;
    my $got = ctl_json(@local, 'get', 'clusters', '--filter', $q);
    is_deeply [ map { $_->{metadata}{name} } @{ $got->{items} // [] } ], ['c-edge-1'],
        "get clusters --filter '$q': c-edge-1 (its facts say v1.30.4+k3s1, 3 nodes)";
    is_deeply $got && $got->{items}, api_data("$ORG/clusters?filter=$escaped")->{items}, '  as the API answers it';
    $got = ctl_json(@local, 'get', 'clusters', '--filter', 'dynamic_facts.kubernetes_version.gitVersion<1.30');
    is_deeply $got && $got->{items}, [], "  and --filter '...gitVersion<1.30': none";
    my ($code, $out, $err) = ctl(@local, '--verbose', 'get', 'clusters', '--all-organizations', '-o', 'json');
    exit_is($code, 0, 'get clusters --all-organizations -o json: exit 0');
    like $err, qr{GET \Q$url\E/clusters -> 200}, '  GET /clusters';
    my $all = eval { $json->decode($out) };
    is_deeply $all && $all->{items}, api_data('/clusters?page_size=1000')->{items}, '  the API\'s every organization\'s list';
    ok((grep { ($_->{metadata}{organization} // '') eq 'ctl-other' } @{ $all->{items} // [] }), '  ctl-other\'s clusters among them');
    my $only = ctl_json(@local, 'get', 'clusters', '--all-organizations', '--organization', 'ctl-other', '--page-size', '1');
    is_deeply [ map { "$_->{metadata}{organization}/$_->{metadata}{name}" } @{ $only->{items} // [] } ], ['ctl-other/c-elsewhere'],
        'get clusters --all-organizations --organization ctl-other: that organization\'s';
    my $t = table_of(ctl_ok(@local, 'get', 'clusters', '--all-organizations', '-l', 'env=dev'));
    my ($names, $orgs) = ([ column($t, 'NAME') ], [ column($t, 'ORGANIZATION') ]);
    is_deeply [ map { "$orgs->[$_]/$names->[$_]" } 0 .. $#$names ],
        [ map { "$_->{metadata}{organization}/$_->{metadata}{name}" } @{ api_data('/clusters?labels=env%3Ddev')->{items} } ],
        'get clusters --all-organizations -l env=dev: a row per cluster, naming its organization';
    ok((grep { $_ eq "$org/c-edge-1" } map { "$orgs->[$_]/$names->[$_]" } 0 .. $#$names), "  $org/c-edge-1 among them");
    ($code, $out, $err) = ctl(@local, 'get', 'clusters', '--organization', 'ctl-other');
    exit_is($code, 2, '--organization without --all-organizations: exit 2');
    ($code, $out, $err) = ctl(@local, 'get', 'nodes', '--all-organizations');
    exit_is($code, 2, 'get nodes --all-organizations (nodes have no such list): exit 2');
    ($code, $out, $err) = ctl({ PURSER_TOKEN => $nobody_token }, 'get', 'clusters', '--all-organizations');
    exit_is($code, 5, 'get clusters --all-organizations as a user who is no server admin: exit 5 (403)');
    like $err, qr/list_all_clusters/, '  naming the action';
};

# Last: a real collection removes what no revision uses, the seed artifact among them.
subtest 'policy revisions, collect' => sub {
    $s->must('revision', 'POST', "$ORG/policies/base/revisions", { %$lock_v1, revision_id => "ctl-gc-$_" }) for 1, 2;
    my $list = ctl_json('get', 'policy-revisions', '--policy', 'base');
    is_deeply $list, api_data("$ORG/policies/base/revisions"), 'get policy-revisions --policy base: the API\'s list';
    ok $list && $list->{'ctl-gc-1'}, '  with the revision just uploaded';
    my $t = table_of(ctl_ok('get', 'policy-revisions', '--policy', 'base'));
    ok((grep { $_ eq 'ctl-gc-2' } column($t, 'REVISION')), '  a table row per revision');
    is_deeply [ sort(column($t, 'GROUPS')) ], [ sort map { join(',', @{ $_->{policy_group_list} }) || '-' } values %$list ],
        '  with the groups pointing at each' or diag join "\n", @{ $t->{lines} };
    my ($code, $out, $err) = ctl('get', 'policy-revisions');
    exit_is($code, 2, 'get policy-revisions without --policy: exit 2');
    ($code, $out, $err) = ctl('--verbose', 'collect', '--keep', '1', '--policy', 'base', '--dry-run', '-o', 'json');
    exit_is($code, 0, 'collect --keep 1 --policy base --dry-run -o json: exit 0');
    like $err, qr{POST \S+/organizations/\Q$org\E/collect_policies -> 200}, '  POST .../collect_policies';
    my $dry = eval { $json->decode($out) };
    my ($r, $api) = api('POST', "$ORG/collect_policies", { keep => 1, policies => ['base'], dry_run => JSON::PP::true() });
    is_deeply $dry, $api, '  the API\'s dry run';
    ok((grep { $_->{revision_id} eq 'ctl-gc-1' } @{ $dry->{revisions} // [] }), '  ctl-gc-1 would go');
    ok api_data("$ORG/policies/base/revisions/ctl-gc-1"), '  and is still there';
    ($code, $out, $err) = ctl('collect', '--keep', '1', '--policy', 'base');
    exit_is($code, 0, 'collect --keep 1 --policy base: exit 0');
    is_deeply [ grep { !/\d+ revision\(s\)/ } split /\n/, $out ],
        [ (map { "removed revision $_->{policy}/$_->{revision_id}" } @{ $dry->{revisions} }),
          (map { "removed cookbook artifact $_->{name}/$_->{identifier}" } @{ $dry->{cookbook_artifacts} }),
          (map { "removed file $_" } @{ $dry->{files} }) ], '  a line for each thing the dry run listed';
    like $out, qr/^\d+ revision\(s\), \d+ cookbook artifact\(s\), \d+ file\(s\) removed$/m, '  and the counts';
    is api_status('GET', "$ORG/policies/base/revisions/ctl-gc-1"), 404, '  ctl-gc-1 is gone';
    ok api_data("$ORG/policies/base/revisions/ctl-gc-2"), '  the newest, ctl-gc-2, stays';
    ($code, $out, $err) = ctl('collect', '--dry-run');
    exit_is($code, 2, 'collect without --keep: exit 2');
    ($code, $out, $err) = ctl('collect', '--keep', '1', '--policy', 'ctl-nosuch');
    exit_is($code, 3, 'collect --policy of no policy: exit 3 (404)');
};

PurserStack::finish();

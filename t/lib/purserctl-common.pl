# purserctl-common.pl: what t/9010 and t/9012 share, loaded in their BEGIN: a private stack
# (purserctl_setup), purserctl run as a child with its own contexts file, the API as the
# tests' reference, and the state the verbs read (seed_state). Package main: the tests name
# its variables with `our`.
use strict;
use warnings;
use Test::More;
use JSON::PP;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
use IO::Socket::INET;
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);
use YAML::XS ();
use PurserStack;

our ($tmp, $config, $purserctl, $examples, $s, $org, $url, $ca, $admin_token, $admin_key,
     $stack_env, $json, $ORG, $DOCS, $closed_port);
our ($site_v1, $site_v2, $lock_v1, $lock_v2, $facts, $rev1);

# Starts the stack and sets the variables above (but the state's).
sub purserctl_setup {
    # ---- the environment: nothing of the caller's purser settings leaks into purserctl ----
    delete @ENV{qw(PURSER_URL PURSER_CA PURSER_ORG PURSER_TOKEN PURSER_HTTP_URL PURSER_CONFIG
                   PURSER_ADMIN_USER PURSER_ADMIN_TOKEN PURSER_ADMIN_KEY XDG_CONFIG_HOME)};
    $tmp = tempdir('purserctl-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    make_path("$tmp/run", "$tmp/home");
    $ENV{HOME} = "$tmp/home";
    $config = "$tmp/ctl/config.yaml"; # its folder does not exist yet: purserctl makes it
    $ENV{PURSER_CTL_CONFIG} = $config;
    # every request purserctl sends must be one its command table lists (`purserctl operations`)
    $ENV{PURSER_CTL_STRICT} = 1;

    $purserctl = PurserStack::build() . '/purserctl';
    $examples = PurserStack::root() . '/examples';
    -x $purserctl or BAIL_OUT("$purserctl is not built (make build)");

    $s = PurserStack->new(workers => 2);
    $org = $s->env('PURSER_ORG');
    $url = $s->env('PURSER_URL');
    $ca = $s->env('PURSER_CA');
    $admin_token = $s->env('PURSER_ADMIN_TOKEN');
    $admin_key = $s->env('PURSER_ADMIN_KEY');
    $stack_env = $s->dir . '/stack.env';
    $json = JSON::PP->new->canonical;
    $ORG = "/organizations/$org";
    $DOCS = "$ORG/api/v1.0";
    # A port nothing listens on.
    $closed_port = do {
        my $sock = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp')
            or die "a free port: $!";
        my $p = $sock->sockport;
        close $sock;
        $p;
    };
}

# ---- running purserctl ----
# spawn([ENV,] ARGS...): starts purserctl with ENV's variables set (undef: removed), stdin from
# /dev/null, stdout and stderr into files of their own. finish_run(RUN, TIMEOUT) waits for it
# (killing it, by its pid, past TIMEOUT seconds) and returns (exit, stdout, stderr).
our $runs = 0;
our %last; # the last command run, for diagnostics
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

# tag_through_api(REV, TAG, YAML): a tag with data, through the API.
sub tag_through_api {
    my ($rev, $tag, $yaml) = @_;
    my $r = $s->request('POST', "$DOCS/revisions/$rev/tags/$tag", { headers => {
        authorization => "Bearer $admin_token", 'content-type' => 'application/x-yaml', accept => 'application/json' },
        content => $yaml });
    return $r->{status};
}

# 3. The state the verbs read, made through the API
sub seed_state {
    $site_v1 = slurp("$examples/site/site.yaml");
    $site_v2 = slurp("$examples/site/site-v2.yaml");
    $lock_v1 = read_json_file("$examples/policies/base.lock.json");
    $lock_v2 = read_json_file("$examples/policies/base-v2.lock.json");
    $facts = read_json_file("$examples/facts.json");
    $s->yaml_call('PUT', "$DOCS/buckets/site/documents", $site_v1);
    $rev1 = newest_revision();
    ok $rev1, "the site's documents: revision $rev1";
    $s->must('lock', 'PUT', "$ORG/policy_groups/dev/policies/base", $lock_v1);
    $s->must('cookbook', 'PUT', "$ORG/cookbook_artifacts/seed/abc123", { name => 'seed', identifier => 'abc123',
        version => '0.1.0', chef_type => 'cookbook_version', metadata => { name => 'seed', version => '0.1.0', dependencies => {} },
        all_files => [] });
    $s->must('node', 'POST', "$ORG/nodes", { name => 'seed-node', chef_environment => '_default', run_list => [] });
    is tag_through_api($rev1, 'seed-tag', "owner: tests\n"), 201, "a tag on revision $rev1 through the API";
}

1;

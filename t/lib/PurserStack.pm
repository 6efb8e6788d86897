# PurserStack: starts a private purser stack (MariaDB, purser-fcgi, nginx with TLS) in a
# temporary folder for one test file, talks to it over HTTPS, and always stops it: at the end,
# on die, and on SIGINT/SIGTERM. PURSER_KEEP=1 keeps the folder for a look afterwards.
package PurserStack;
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Path ();
use File::Temp qw(tempdir);
use HTTP::Tiny;
use JSON::PP;
use MIME::Base64 ();
use POSIX ();
use Socket qw(IPPROTO_TCP TCP_NODELAY);
use Time::HiRes qw(sleep time);

# Every HTTP::Tiny connection of a test process (this module's, and those the tests and
# t/lib's other modules make) sends at once: HTTP::Tiny writes a request's head and its body
# separately, and without TCP_NODELAY the body waited for the server's delayed ACK of the head,
# 40 ms a request with a body (a 5,000-upload test spent a minute on it). curl, Ruby's Net::HTTP
# and the browsers set it themselves.
{
    no warnings 'redefine';
    my $connect = \&HTTP::Tiny::Handle::connect;
    *HTTP::Tiny::Handle::connect = sub {
        my $handle = $connect->(@_);
        setsockopt($handle->{fh}, IPPROTO_TCP, TCP_NODELAY, 1) if $handle && $handle->{fh};
        return $handle;
    };
}

my @running;
$SIG{INT} = $SIG{TERM} = sub { exit 1 };
END {
    my $status = $?;
    $_->stop(1) for @running;
    $? = $status;
}

# Stops every stack (checking valgrind's logs as tests), then ends the plan. Tests call this
# instead of done_testing, so that the checks made while stopping are counted.
sub finish {
    $_->stop for @running;
    Test::More::done_testing();
}

sub root { abs_path(dirname(__FILE__) . '/../..') }

sub build {
    my $b = $ENV{PURSER_BUILD} // 'build';
    return $b =~ m{^/} ? $b : root() . "/$b";
}

# asan(): the stack runs the AddressSanitizer build (make ASAN=1 gives tests
# PURSER_BUILD=build/asan). Its worker's memory is not the release build's: every allocation
# has redzones, freed blocks wait in a quarantine of up to 256 MB that malloc_trim never gives
# back, and the arena and the jansson pool are plain malloc there.
sub asan { $ENV{PURSER_ASAN} || ($ENV{PURSER_BUILD} // '') =~ m{(?:^|/)asan/?$} }

# memory_ok(PASS, NAME): ok(PASS, NAME) for an assertion on a worker's size (its RSS), which
# only the release build can hold; under the AddressSanitizer build it is a skip, the figures
# in NAME a note.
sub memory_ok {
    my ($pass, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    SKIP: {
        if (asan()) {
            Test::More::note("not held under AddressSanitizer: $name");
            Test::More::skip("the AddressSanitizer build's memory is not the release build's (make ASAN=1)", 1);
        }
        return Test::More::ok($pass, $name);
    }
    return 1;
}

# new(workers => 2, max_body => 1048576, max_requests => 10000, development => 0,
#     db_socket => PATH, db_password_file => PATH, secrets_from => DIR)
sub new {
    my ($class, %opt) = @_;
    my $dir = tempdir('purser-test-XXXXXX', TMPDIR => 1, CLEANUP => !$ENV{PURSER_KEEP});
    my $self = bless { dir => $dir, opt => \%opt, pid => $$ }, $class;
    push @running, $self;
    $self->start or die "the stack did not start:\n" . ($self->{start_output} // '') . "logs in $dir/log\n";
    return $self;
}

sub start {
    my ($self) = @_;
    my %opt = %{ $self->{opt} };
    local $ENV{PURSER_WORKERS} = $opt{workers} // 2;
    local $ENV{PURSER_MAX_BODY} = $opt{max_body} // 1048576;
    local $ENV{PURSER_MAX_REQUESTS} = $opt{max_requests} // 10000;
    local $ENV{PURSER_DEVELOPMENT} = $opt{development} ? 1 : 0;
    local $ENV{PURSER_AUTH_TTL} = $opt{auth_ttl} // 1;
    local $ENV{PURSER_CACHE_RENDERED} = $opt{cache_rendered} // 16;
    local $ENV{PURSER_CACHE_RENDERED_BYTES} = $opt{cache_rendered_bytes} // 67108864;
    local $ENV{PURSER_METRICS_LOOPBACK} = $opt{metrics_loopback} // 1;
    # another MariaDB (a Galera node) and another stack's keyring and admin (t/9005)
    local $ENV{PURSER_DB_SOCKET} = $opt{db_socket} // '';
    local $ENV{PURSER_DB_PASSWORD_FILE} = $opt{db_password_file} // '';
    local $ENV{PURSER_SECRETS_FROM} = $opt{secrets_from} // '';
    # nginx takes the client's address from these proxies' X-Forwarded-For (t/3015)
    local $ENV{PURSER_TRUSTED_PROXIES} = $opt{trusted_proxies} // '';
    # a copy of one migrated datadir and certificate per run, made by the first stack that
    # needs it (tools/stack); PURSER_TEMPLATE= (empty) installs and migrates from nothing
    local $ENV{PURSER_TEMPLATE} = $ENV{PURSER_TEMPLATE} // build() . '/test-template';
    my $out = `'@{[root()]}/tools/stack' start '$self->{dir}' 2>&1`;
    $self->{start_output} = $out;
    return 0 if $?;
    $self->{stopped} = 0;
    return $self->read_env;
}

# The stack's settings (stack.env) and an HTTPS client that trusts its certificate.
sub read_env {
    my ($self) = @_;
    open my $fh, '<', "$self->{dir}/stack.env" or return 0;
    while (<$fh>) { $self->{env}{$1} = $2 if /^(?:export )?(\w+)=(.*)$/ }
    $self->{http} = HTTP::Tiny->new(
        verify_SSL => 1, SSL_options => { SSL_ca_file => $self->{env}{PURSER_CA} },
        max_redirect => 0, timeout => 60, keep_alive => 0);
    return 1;
}

# attach(DIR): a stack another program started in DIR (t/8005: the previous release's own
# tools/stack), talked to as any other; its starter stops it, not this module.
sub attach {
    my ($class, $dir) = @_;
    my $self = bless { dir => $dir, opt => {}, pid => $$, stopped => 1 }, $class;
    $self->read_env or die "no stack in $dir\n";
    return $self;
}

# stop: stops the stack; in_end is set when called from END, where no test can be added.
sub stop {
    my ($self, $in_end) = @_;
    return if $self->{stopped};
    if ($self->{openapi}) { # this file's counts, for the suite's figures
        (my $name = $0) =~ s{.*/}{};
        $self->{openapi}->save_counts(build() . '/test-output/openapi', $name);
    }
    system(root() . '/tools/stack', 'stop', $self->{dir});
    $self->{stopped} = 1;
    $self->check_logs($in_end);
}

# Memory errors found while the stack ran: valgrind's logs (PURSER_VALGRIND=1), the
# sanitizers' reports in purser-fcgi's log (make ASAN=1), the jansson pool's own check
# (PURSER_POOL_CHECK=1, as make test runs) and a worker killed by a crash. Any one fails the
# test.
sub check_logs {
    my ($self, $in_end) = @_;
    my @errors;
    for my $f (glob "$self->{dir}/log/valgrind.*") {
        open my $fh, '<', $f or next;
        local $/;
        my $text = <$fh>;
        push @errors, "$f:\n$text" if $text =~ /\S/;
    }
    push @errors, grep { /Sanitizer|runtime error:|json_pool:|worker crashed/ }
        $self->log_lines('purser-fcgi.log');
    if ($in_end) {
        Test::More::diag("memory errors:\n" . join "\n", @errors) if @errors;
        $? ||= 1 if @errors;
        return;
    }
    Test::More::ok(!@errors, 'no memory errors reported by valgrind or the sanitizers')
        or Test::More::diag(join "\n", @errors);
}

# burst(CODE): the distinct answers of CODE (what it returns, joined by spaces) run 4 times at
# once, joined by " | ", so that both workers of a stack most likely serve some: before a
# revocation both hold the credential, after it both answer (t/4007, t/4009).
sub burst {
    my ($code) = @_;
    my @kids;
    for (1 .. 4) {
        pipe(my $from, my $to) or die "pipe: $!";
        my $pid = fork // die "fork: $!";
        if (!$pid) {
            close $from;
            print $to join ' ', $code->();
            close $to;
            POSIX::_exit(0);
        }
        close $to;
        push @kids, [$pid, $from];
    }
    my %seen;
    for (@kids) {
        my ($pid, $from) = @$_;
        $seen{ do { local $/; <$from> } // '' } = 1;
        waitpid $pid, 0;
    }
    return join ' | ', sort keys %seen;
}

# browser_run(DRIVER, CONFIG): runs t/browser/DRIVER.mjs on CONFIG (written as JSON to
# CONFIG->{out}/config.json, removed after) and returns what it reported, name => value (the
# last report of a name stands): the browser tests' one way to drive the pages.
sub browser_run {
    my ($name, $cfg) = @_;
    File::Path::make_path($cfg->{out});
    my $file = "$cfg->{out}/config.json";
    open my $fh, '>', $file or die "$file: $!";
    print $fh JSON::PP::encode_json($cfg);
    close $fh;
    my %seen;
    open my $driver, '-|', 'node', root() . "/t/browser/$name.mjs", $file or die "node: $!";
    while (my $line = <$driver>) {
        my $o = eval { JSON::PP::decode_json($line) } or next;
        $seen{ $o->{name} } = $o->{value};
    }
    close $driver;
    unlink $file;
    return %seen;
}

# git_env(DIR): real git against the stack, as a client outside would run it: trusting the
# stack's certificate, never prompting, without the system's or the user's configuration (its
# HOME is DIR, a folder of the test's).
sub git_env {
    my ($self, $dir) = @_;
    $ENV{GIT_SSL_CAINFO} = $self->env('PURSER_CA');
    $ENV{GIT_TERMINAL_PROMPT} = 0;
    $ENV{GIT_CONFIG_NOSYSTEM} = 1;
    $ENV{HOME} = $dir;
}

# git(TOKEN, ARGS...): (exit status, output with stderr) of git ARGS sending TOKEN as a bearer
# credential ('' sends none).
sub git {
    my ($token, @args) = @_;
    my @auth = length $token ? ('-c', "http.extraHeader=Authorization: Bearer $token") : ();
    my $pid = open(my $fh, '-|') // die "fork: $!";
    if (!$pid) { open STDERR, '>&', \*STDOUT; exec 'git', @auth, @args; exit 127 }
    local $/;
    my $out = <$fh> // '';
    close $fh;
    return ($? >> 8, $out);
}

# git_objects_holding(TEXTS, GIT_DIRS...): (objects read, how many of the repositories hold
# any of TEXTS, an array reference, in any object: every object, reachable or not, loose or
# packed). What no secret may be in.
sub git_objects_holding {
    my ($texts, @dirs) = @_;
    my ($objects, $found) = (0, 0);
    for my $git_dir (@dirs) {
        open my $fh, '-|', 'git', '--git-dir', $git_dir, 'cat-file', '--batch-all-objects', '--batch'
            or die "git cat-file: $!";
        local $/;
        my $all = <$fh> // '';
        close $fh;
        $objects += () = $all =~ /^[0-9a-f]{40} \w+ \d+$/mg;
        $found++ if grep { index($all, $_) >= 0 } @$texts;
    }
    return ($objects, $found);
}

# lock_for(REV): a Policyfile lock of policy web at revision REV (one cookbook), as the group
# tests point their groups at.
sub lock_for {
    my ($rev) = @_;
    return { revision_id => $rev, name => 'web', run_list => ['recipe[base::default]'],
             cookbook_locks => { base => { version => '1.0.0', identifier => "id-$rev" } } };
}

# key_file(NAME, PEM): PEM written to NAME.pem in the stack's folder (a private key the API gave
# once), for Chef signing; returns the file.
sub key_file {
    my ($self, $name, $pem) = @_;
    my $file = "$self->{dir}/$name.pem";
    open my $fh, '>', $file or die "$file: $!";
    print $fh $pem;
    close $fh;
    return $file;
}

# signed(NAME, KEYFILE, METHOD, PATH, BODY): a request Chef-signed as NAME (BODY a reference,
# JSON-encoded); (status, decoded body).
sub signed {
    my ($self, $name, $file, $method, $path, $body) = @_;
    my $c = $self->chef(user => $name, key => $file, method => $method, path => $path,
                        defined $body ? (body => JSON::PP->new->canonical->encode($body)) : ());
    return ($c->{status}, $c->{json});
}

# Waits out the authentication cache (cache.auth_ttl, 1 s in tests): after it, every worker
# sees a revocation or a role change.
sub wait_auth_cache { Time::HiRes::sleep(($_[0]{opt}{auth_ttl} // 1) + 0.2) }

sub dir  { $_[0]{dir} }
sub url  { $_[0]{env}{PURSER_URL} }
sub env  { $_[0]{env}{ $_[1] } }

# request(METHOD, PATH, {headers => {...}, content => ...}) -> HTTP::Tiny response
sub request {
    my ($self, $method, $path, $options) = @_;
    my $res = $self->{http}->request($method, $self->url . $path, $options // {});
    $self->check_openapi($method, $path, $options, $res) unless $self->{checking};
    return $res;
}

# Every exchange is checked against the stack's GET /docs (t/lib/PurserOpenAPI.pm): a mismatch
# is a failed test naming the operation and what differs. PURSER_OPENAPI_CHECK=0 turns it off.
sub check_openapi {
    my ($self, $method, $path, $options, $res) = @_;
    return if ($ENV{PURSER_OPENAPI_CHECK} // 1) eq '0';
    return if $$ != $self->{pid}; # not in a test's forked child: its TAP would garble the parent's
    return if $path !~ m{^/} || $path =~ m{^/admin/};
    unless ($self->{openapi}) {
        require PurserOpenAPI;
        local $self->{checking} = 1;
        my $docs = $self->request('GET', '/docs');
        my $doc = $docs->{status} == 200 ? eval { JSON::PP->new->decode($docs->{content}) } : undef;
        return unless $doc;
        $self->{openapi} = PurserOpenAPI->new($doc);
    }
    my %headers = map { lc($_) => $options->{headers}{$_} } keys %{ $options->{headers} // {} };
    my @problems = $self->{openapi}->check($method, $path, \%headers, $options->{content}, $res);
    return unless @problems;
    my $shown = length $path > 100 ? substr($path, 0, 97) . '...' : $path;
    Test::More::fail("$method $shown: the exchange matches GET /docs");
    Test::More::diag(join "\n", @problems[0 .. ($#problems < 9 ? $#problems : 9)]);
}

sub get { my ($self, $path, $options) = @_; $self->request('GET', $path, $options) }

# api(METHOD, PATH, BODY, TOKEN): a JSON request with a bearer token (the admin's unless
# given; undef-able with token => ''), returns (response, decoded body or undef).
sub api {
    my ($self, $method, $path, $body, $token) = @_;
    $token //= $self->env('PURSER_ADMIN_TOKEN');
    my %headers = (accept => 'application/json');
    $headers{authorization} = "Bearer $token" if length $token;
    my %options = (headers => \%headers);
    if (defined $body) {
        $headers{'content-type'} = 'application/json';
        $options{content} = ref $body ? JSON::PP->new->canonical->encode($body) : $body;
    }
    my $res = $self->request($method, $path, \%options);
    return ($res, json($res));
}

# call(METHOD, PATH, BODY, HEADERS...): a JSON request with the admin's token unless the
# headers give `authorization` ('' for none); BODY a reference (encoded) or text. Returns
# (response, decoded body or undef).
sub call {
    my ($self, $method, $path, $body, %headers) = @_;
    $headers{authorization} //= 'Bearer ' . $self->env('PURSER_ADMIN_TOKEN');
    delete $headers{authorization} if $headers{authorization} eq '';
    $headers{accept} //= 'application/json';
    $headers{'content-type'} //= 'application/json' if defined $body;
    my $res = $self->request($method, $path, { headers => \%headers,
        defined $body ? (content => ref $body ? JSON::PP->new->canonical->encode($body) : $body) : () });
    my $data = length($res->{content} // '') ? eval { JSON::PP->new->decode($res->{content}) } : undef;
    return ($res, $data);
}

# must(WHAT, METHOD, PATH, BODY, HEADERS...): call() for a test's set-up, which dies (naming
# WHAT) unless the answer is 200 or 201; returns the decoded body.
sub must {
    my ($self, $what, @args) = @_;
    my ($r, $d) = $self->call(@args);
    die "$what: $r->{status} $r->{content}\n" unless $r->{status} =~ /^20[01]$/;
    return $d;
}

# yaml_call(METHOD, PATH, TEXT): a YAML body to the document API with the admin's token, answered
# as JSON; dies unless 200 or 201; returns the decoded body.
sub yaml_call {
    my ($self, $method, $path, $text) = @_;
    my $r = $self->request($method, $path, { headers => { authorization => 'Bearer ' . $self->env('PURSER_ADMIN_TOKEN'),
        'content-type' => 'application/x-yaml', accept => 'application/json' }, content => $text });
    die "$method $path: $r->{status} $r->{content}\n" unless $r->{status} =~ /^20[01]$/;
    return JSON::PP->new->decode($r->{content});
}

# error_message(DATA): the message of an error answer in either JSON form ('' when none).
sub error_message {
    my ($d) = @_;
    return $d->{message} // '' if ref $d eq 'HASH' && ($d->{kind} // '') eq 'Status'; # Deckhand's, as JSON
    my $e = ref $d eq 'HASH' ? $d->{error} : undef;
    return ref $e eq 'ARRAY' ? $e->[0] // '' : ref $e eq 'HASH' ? $e->{message} // '' : '';
}

# One Ruby signer a process (t/lib/chef-request.rb --serve), not one a request: Ruby's start
# with its libraries took a fifth of a second each time. A forked child starts its own.
my %signer;
sub signer_call {
    my ($line) = @_;
    if (!$signer{pid} || $signer{owner} != $$) {
        require IPC::Open2;
        my ($out, $in);
        my $pid = IPC::Open2::open2($out, $in, 'ruby', root() . '/t/lib/chef-request.rb', '--serve');
        %signer = (pid => $pid, owner => $$, out => $out, in => $in);
    }
    print { $signer{in} } $line, "\n" or die "chef-request.rb: $!";
    $signer{in}->flush;
    my $answer = readline $signer{out};
    die "chef-request.rb ended\n" unless defined $answer;
    return $answer;
}
END {
    if ($signer{pid} && $signer{owner} == $$) {
        close $signer{in};
        waitpid $signer{pid}, 0;
    }
}

# chef(%args): a request signed by ruby-mixlib-authentication (t/lib/chef-request.rb);
# returns {status, body, api_version}. Args: user, key, version, method, path, body,
# api_version, tamper, clock_offset.
sub chef {
    my ($self, %a) = @_;
    my %request = (url => $self->url, ca => $self->env('PURSER_CA'), user => $a{user} // 'admin',
                   key => $a{key} // $self->env('PURSER_ADMIN_KEY'), version => $a{version} // '1.3',
                   method => $a{method} // 'GET', path => $a{path} // '/');
    if (defined $a{body}) { # bytes as print would write them: UTF-8 only for wide characters
        my $bytes = $a{body};
        utf8::is_utf8($bytes) && $bytes =~ /[^\x00-\xff]/ ? utf8::encode($bytes) : utf8::downgrade($bytes);
        $request{body_base64} = MIME::Base64::encode_base64($bytes, '');
    }
    $request{api_version} = "$a{api_version}" if defined $a{api_version};
    $request{tamper} = $a{tamper} if $a{tamper};
    $request{clock_offset} = "$a{clock_offset}" if $a{clock_offset};
    my $out = signer_call(JSON::PP->new->canonical->encode(\%request));
    my $r = eval { JSON::PP->new->decode($out) } or die "chef-request.rb failed: $out";
    die "chef-request.rb failed: $r->{error}\n" if $r->{error};
    $r->{body} = MIME::Base64::decode_base64($r->{body_base64});
    $r->{json} = eval { JSON::PP->new->utf8->decode($r->{body}) };
    # the signed exchange is checked against GET /docs as every other one
    $self->check_openapi($a{method} // 'GET', $a{path} // '/',
        { headers => { 'content-type' => 'application/json' }, content => $a{body} },
        { status => $r->{status}, content => $r->{body},
          headers => { 'content-type' => $r->{content_type} } });
    return $r;
}

# yaml(METHOD, PATH, BODY, TOKEN, CONTENT_TYPE): a document API request (YAML in and out)
# with a bearer token (the admin's unless given; '' for none); returns (response, [documents]).
sub yaml {
    my ($self, $method, $path, $body, $token, $type) = @_;
    require YAML::XS;
    $token //= $self->env('PURSER_ADMIN_TOKEN');
    my %headers = (accept => 'application/x-yaml');
    $headers{authorization} = "Bearer $token" if length $token;
    my %options = (headers => \%headers);
    if (defined $body) {
        $headers{'content-type'} = $type // 'application/x-yaml';
        $options{content} = $body;
    }
    my $res = $self->request($method, $path, \%options);
    my @docs = length($res->{content} // "") ? eval { YAML::XS::Load($res->{content}) } : ();
    return ($res, [ grep { defined } @docs ]);
}

sub json {
    my ($res) = @_;
    my $data = eval { JSON::PP->new->decode($res->{content}) };
    return $data;
}

sub pidfile {
    my ($self, $name) = @_;
    open my $fh, '<', "$self->{dir}/run/$name.pid" or return;
    my $pid = <$fh>;
    chomp $pid;
    return $pid;
}

sub master_pid { $_[0]->pidfile('purser-fcgi') }

sub alive {
    my ($pid) = @_;
    open my $fh, '<', "/proc/$pid/stat" or return 0;
    my $stat = <$fh>;
    return $stat !~ /^\d+ \(.*\) Z/;
}

sub children_of {
    my ($pid) = @_;
    my @kids;
    for my $stat (glob '/proc/[0-9]*/stat') {
        open my $fh, '<', $stat or next;
        my $line = <$fh> // next;
        my ($child, $state, $ppid) = $line =~ /^(\d+) \(.*\) (\S) (\d+)/ or next;
        push @kids, $child if $ppid == $pid && $state ne 'Z';
    }
    return sort { $a <=> $b } @kids;
}

sub worker_pids { children_of($_[0]->master_pid) }

# Waits until code returns true, polling every 50 ms; returns its last value.
sub wait_for {
    my ($seconds, $code) = @_;
    my $deadline = time + $seconds;
    while (1) {
        my $v = $code->();
        return $v if $v || time > $deadline;
        sleep 0.05;
    }
}

# The lines of a log. Workers hold request lines back while busy and write them as soon as
# they go idle (lib/base/log.h): a moment's pause lets the worker that just answered do so.
sub log_lines {
    my ($self, $name) = @_;
    Time::HiRes::sleep(0.2) if $name eq 'purser-fcgi.log';
    open my $fh, '<', "$self->{dir}/log/$name" or return ();
    return <$fh>;
}

sub sql {
    my ($self, $query) = @_;
    open my $fh, '-|', 'mariadb', '--no-defaults', "--socket=$self->{dir}/run/mariadb.sock",
        '-uroot', '-N', '-B', 'purser', '-e', $query or die "mariadb: $!";
    local $/;
    my $out = <$fh> // '';
    close $fh;
    return $out;
}

sub tool { root() . "/tools/stack" }

# use_policy_file(PATH): points the stack's configuration at another RBAC policy file (a
# reload, SIGHUP, takes it).
sub use_policy_file {
    my ($self, $policy) = @_;
    my $file = "$self->{dir}/purser.yaml";
    open my $in, '<', $file or die "$file: $!";
    my $cfg = do { local $/; <$in> };
    $cfg =~ s/policy_file: .*/policy_file: $policy/ or die "$file names no policy_file\n";
    open my $out, '>', $file or die "$file: $!";
    print $out $cfg;
}

1;

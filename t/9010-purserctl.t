#!/usr/bin/perl
# 9010: purserctl, the client for people and scripts, end to end against a private stack: the
# command table, contexts and the resource verbs (t/9012 has the other commands).
# It holds, in this order:
#   - coverage: `purserctl operations -o json` against GET /docs, both ways (every operation of
#     /docs has a command, every operation purserctl lists is in /docs, every row names a
#     command of the table, every query parameter a kind's list may send is one /docs declares
#     for it), --help of every command, --version, the bash completion;
#   - contexts: login with the stack's token and with the admin's Chef key (both then read
#     the same clusters, so the server accepts purserctl's signing), a wrong key refused at
#     login, config get-contexts/use-context/current-context/delete-context, the PURSER_*
#     variables over the contexts file, a missing context, no context at all, mode 600;
#   - get (every kind), describe, create, replace, patch and delete against the real stack,
#     each result read back through the API;
#   - output forms: -o json is the API's JSON, -o yaml parses back to it, -o name, the
#     default table (a header, aligned columns, relative times);
#   - failures and their exit codes (ctl.h): 404 = 3 with the API's message, 409/412 = 4,
#     403 = 5, bad input = 7, usage = 2, no server = 6.
# purserctl runs as a child with stdout, stderr and the exit code kept apart; its contexts
# file is in this test's temporary folder (PURSER_CTL_CONFIG), never the user's
# (t/lib/purserctl-common.pl, shared with t/9012).
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

our ($tmp, $config, $purserctl, $examples, $s, $org, $url, $ca, $admin_token, $admin_key,
     $stack_env, $json, $ORG, $DOCS, $closed_port, $site_v1, $site_v2, $lock_v1, $lock_v2, $facts,
     $rev1, %last);
BEGIN { require 'purserctl-common.pl' } # the stack, running purserctl, the API's answers
purserctl_setup();

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
    # every command that calls the API says what it calls (those of every kind: where to look)
    like $out, qr/^calls:/m, "  and calls: of $c" unless $c =~ /^(?:config|operations|completion)$/;
}

# A local $ref of /docs ("#/components/parameters/page_size") resolved.
sub resolve_ref {
    my ($docs, $ref) = @_;
    my $node = $docs;
    $node = $node->{$_} for grep { length && $_ ne '#' } split m{/}, $ref;
    return $node;
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
    # A kind's list row names the query parameters it may send (client/kinds.c, from the
    # kind's selector, options and paging): each must be one /docs declares for that operation.
    my @undeclared;
    for my $op (grep { defined $_->{query} } @$ops) {
        my ($path) = grep { $norm->('GET', $_) eq $norm->($op->{method}, $op->{path}) } keys %{ $docs->{paths} };
        ($path) = grep { $norm->('GET', $_) eq $norm->($op->{method}, "/organizations/{org}$op->{path}") } keys %{ $docs->{paths} }
            if !$path;
        next unless $path;
        my $item = $docs->{paths}{$path};
        my %declared = map { $_->{in} eq 'query' ? ($_->{name} => 1) : () }
            map { $_->{'$ref'} ? resolve_ref($docs, $_->{'$ref'}) : $_ }
            @{ $item->{parameters} // [] }, @{ $item->{ lc $op->{method} }{parameters} // [] };
        push @undeclared, map { "$op->{method} $op->{path}: $_" } grep { !$declared{$_} } split ' ', $op->{query};
    }
    ok scalar(grep { defined $_->{query} } @$ops) >= 8, '  the kinds\' lists name their query parameters';
    is scalar(@undeclared), 0, '  every query parameter a list may send is one GET /docs declares for it'
        or diag join "\n  ", @undeclared;
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
ok $other && grep({ $_->{metadata}{name} eq $org } @{ $other->{items} // [] }), 'no contexts file, the four variables alone: it works';
ok !-e "$tmp/none/config.yaml", '  and no contexts file is written';
ctl_ok('config', 'use-context', 'local');

############################################################################################
# 3. The state the verbs read, made through the API
seed_state();

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
        [['organizations'], '/organizations?page_size=500'], # (a page at a time: envelopes)
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
    like $err, qr/--if-match '\*' to replace whatever is there/, '  and purserctl says how to give one';
    ($code, $out, $err) = ctl('replace', 'cluster', 'c-edge-1', '-f', $file, '--if-match', cluster_revision('c-edge-1'));
    exit_is($code, 0, '  with --if-match REV: exit 0');
    is api_data("$ORG/clusters/c-edge-1")->{spec}{display_name}, 'Edge 1b', '  the API has it';
    # the creation example (metadata.name edge-1, which creation made c-edge-1) replaces it too
    ($code, $out, $err) = ctl('replace', 'cluster', 'c-edge-1', '-f', "$examples/cluster.yaml",
                              '--if-match', '*');
    exit_is($code, 0, "replace cluster c-edge-1 -f examples/cluster.yaml --if-match '*': exit 0") or diag $err;
    is api_data("$ORG/clusters/c-edge-1")->{spec}{display_name}, 'Edge 1 (Lisbon lab)', '  the API has it';
    ($code, $out, $err) = ctl('replace', 'cluster', 'c-edge-1', '-f', write_file('other.yaml',
                              "metadata:\n  name: edge-2\nspec: {}\n"), '--if-match', '*');
    exit_is($code, 7, '  a file naming another cluster: exit 7');
    like $err, qr/metadata.name must be 'c-edge-1'/, '  naming the field';

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
    # as kubectl patch: without --if-match, the merge patch applies to what is there
    ($code, $out, $err) = ctl('patch', 'cluster', 'c-edge-1', '-p', '{"metadata":{"labels":{"zone":"b"}}}');
    exit_is($code, 0, 'patch cluster c-edge-1 -p {labels} without --if-match: exit 0') or diag $err;
    is_deeply api_data("$ORG/clusters/c-edge-1")->{metadata}{labels}, { env => 'dev', region => 'eu-west', tier => 'web', zone => 'b' },
        '  the label added, the others kept';
    ($code, $out, $err) = ctl('patch', 'cluster', 'c-edge-1', '-p', '{"metadata":{"revision":"0000000000000000","labels":{"zone":null}}}');
    exit_is($code, 4, '  a patch that names a stale metadata.revision: exit 4');
    is api_data("$ORG/clusters/c-edge-1")->{metadata}{labels}{zone}, 'b', '  nothing changed';
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

PurserStack::finish();

# 0020: the purser command without a server: check-config and config-defaults.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use PurserStack;

my $purser = PurserStack::build() . '/purser';
my $dir = tempdir(CLEANUP => 1);
my $root = PurserStack::root();

sub write_file { my ($name, $text) = @_; open my $fh, '>', "$dir/$name" or die; print $fh $text; "$dir/$name" }
sub run { my $out = `@_ 2>&1`; return ($? >> 8, $out) }

my $good = write_file('good.yaml', "fcgi:\n  workers: 2\nrbac:\n  policy_file: $root/policies/default.yaml\n");
my ($code, $out) = run($purser, '-c', $good, 'check-config');
is $code, 0, 'check-config accepts a valid file';
like $out, qr/ok/, 'and says ok';

my $typo = write_file('typo.yaml', "database:\n  prot: 3306\n");
($code, $out) = run($purser, '-c', $typo, 'check-config');
is $code, 1, 'an unknown key is refused';
like $out, qr/database\.prot: unknown key/, 'naming the key';

my $broken = write_file('broken.yaml', "fcgi:\n  workers: [1,\n");
($code, $out) = run($purser, '-c', $broken, 'check-config');
is $code, 1, 'malformed YAML is refused';
like $out, qr/broken\.yaml:\d+:\d+:/, 'with file, line and column';

my $nopolicy = write_file('nopolicy.yaml', "rbac:\n  policy_file: $dir/missing.yaml\n");
($code, $out) = run($purser, '-c', $nopolicy, 'check-config');
is $code, 1, 'a missing policy file is refused';
like $out, qr/rbac\.policy_file/, 'naming the key';

# The RBAC policy is held to the route table.
my $policy_text = do { open my $fh, '<', "$root/policies/default.yaml" or die; local $/; <$fh> };
sub with_policy {
    my ($name, $text) = @_;
    my $p = write_file("$name-policy.yaml", $text);
    return write_file("$name.yaml", "rbac:\n  policy_file: $p\n");
}
(my $unknown = $policy_text) =~ s/      - read_members\n/      - read_members\n      - fly_to_the_moon\n/;
($code, $out) = run($purser, '-c', with_policy('unknown', $unknown), 'check-config');
is $code, 1, 'a role with an undeclared action is refused';
like $out, qr/policy\.roles\.admin: unknown action 'fly_to_the_moon'/, 'naming the role and the action';
(my $empty = $policy_text) =~ s/  validator:\n.*\z/  validator:\n    description: nothing\n    actions: []\n/s;
($code, $out) = run($purser, '-c', with_policy('empty', $empty), 'check-config');
is $code, 1, 'a role without actions is refused';
like $out, qr/policy\.roles\.validator: a role without actions/, 'naming the role';
(my $undeclared = $policy_text) =~ s/^  read_clients: .*\n//m;
($code, $out) = run($purser, '-c', with_policy('undeclared', $undeclared), 'check-config');
is $code, 1, 'a policy that leaves out an action the routes use is refused';
like $out, qr/uses action 'read_clients'/, 'naming the action';
# `own` limits an action to what the principal created, which only routes that check the
# creator can do: anywhere else it would grant the action on everything.
(my $own_policy = $policy_text) =~ s/    own:\n      - write_node\n/    own:\n      - write_node\n      - write_policy\n/;
isnt $own_policy, $policy_text, 'the node role has an own list to extend';
($code, $out) = run($purser, '-c', with_policy('own', $own_policy), 'check-config');
is $code, 1, 'an own action whose routes do not check the creator is refused';
like $out, qr/policy\.roles\.node\.own: action 'write_policy' is not one purser can limit/, 'naming the role and the action';
(my $own_typo = $policy_text) =~ s/    own:\n      - write_node\n/    own:\n      - write_nod\n/;
($code, $out) = run($purser, '-c', with_policy('owntypo', $own_typo), 'check-config');
is $code, 1, 'an undeclared own action is refused';
like $out, qr/policy\.roles\.node\.own: unknown action 'write_nod'/, 'naming it';
(my $role_key = $policy_text) =~ s/    own:\n/    owned:\n/;
($code, $out) = run($purser, '-c', with_policy('rolekey', $role_key), 'check-config');
is $code, 1, 'an unknown key in a role is refused';
like $out, qr/policy\.roles\.node: unknown key 'owned'/, 'naming it';

($code, $out) = run($purser, '-c', "$dir/none.yaml", 'check-config');
is $code, 1, 'a missing configuration file is refused';

($code, $out) = run($purser, 'config-defaults');
is $code, 0, 'config-defaults';
for my $key (qw(fcgi.socket fcgi.workers fcgi.max_requests http.max_body_bytes database.socket auth.development_mode rbac.policy_file)) {
    like $out, qr/^\Q$key\E: /m, "lists $key";
}

($code, $out) = run($purser, '-c', $good, 'frobnicate');
is $code, 2, 'an unknown command exits 2';
like $out, qr/unknown command/, 'and says so';

# The manual's configuration page (docs/operator/configuration.md) explains the keys
# config-defaults prints, no more and no fewer (docs/reference/configuration.md is made from
# config-defaults itself: t/9013).
{
    my @code = $out =~ /^([a-z_]+\.[a-z_]+): /mg if ($code, $out) = run($purser, 'config-defaults');
    open my $fh, '<', "$root/docs/operator/configuration.md" or die;
    my $table = do { local $/; <$fh> };
    my @documented = $table =~ /^\| `([a-z_]+\.[a-z_]+)` \|/mg;
    is_deeply [ sort @documented ], [ sort @code ], 'the manual documents every configuration key'
        or diag explain { code => \@code, manual => \@documented };
    ok scalar(@code) > 30, '  (' . scalar(@code) . ' keys)';
}

# What answers without a configuration, and a missing one named once (issue 34)
my $fcgi = PurserStack::build() . '/purser-fcgi';
{
    local $ENV{PURSER_CONFIG} = "$dir/none.yaml";
    for my $case ([$purser, '--help', qr/^usage: purser .*\n.*migrate/s], [$purser, 'help', qr/^usage: purser/],
                  [$purser, '--version', qr/^purser \d+\.\d+\.\d+$/m],
                  [$fcgi, '--help', qr/^usage: purser-fcgi/], [$fcgi, '--version', qr/^purser-fcgi \d+\.\d+\.\d+$/m]) {
        my ($prog, $arg, $want) = @$case;
        ($code, $out) = run($prog, $arg);
        (my $name = $prog) =~ s{.*/}{};
        is $code, 0, "$name $arg answers without a configuration";
        like $out, $want, '  with what it should';
    }
    ($code, $out) = run($purser, 'frobnicate');
    is $code, 2, 'an unknown command with no configuration: 2';
    like $out, qr/unknown command 'frobnicate'/, '  said before any configuration is read';
    unlike $out, qr/none\.yaml/, '  (none was read)';
    ($code, $out) = run($purser, 'migrate');
    is $code, 1, 'a missing configuration: 1';
    my @named = $out =~ /none\.yaml/g;
    is scalar(@named), 1, '  named once' or diag $out;
}

done_testing;

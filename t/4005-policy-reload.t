# 4005: the RBAC policy is read at start and again on SIGHUP; a broken policy is refused on
# reload and the one in force stays.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Time::HiRes qw(sleep);
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $default = do { open my $fh, '<', PurserStack::root() . '/policies/default.yaml' or die; local $/; <$fh> };
my $policy = $s->dir . '/policy.yaml';
sub write_policy { open my $fh, '>', $policy or die; print $fh $_[0]; close $fh }
sub point_config_at_policy { $s->use_policy_file($policy) }
sub reload_and_wait {
    my @old = $s->worker_pids;
    kill 'HUP', $s->master_pid;
    PurserStack::wait_for(5, sub { my %o = map { $_ => 1 } @old; my @w = $s->worker_pids; @w == 2 && !grep { $o{$_} } @w });
}

my ($r) = $s->api('POST', '/users', { username => 'rita' });
($r) = $s->api('POST', "/organizations/$org/users", { username => 'rita', roles => ['reader'] });
my (undef, $t) = $s->api('POST', '/users/rita/tokens', {});
my $token = $t->{token};

($r) = $s->api('POST', "/organizations/$org/clients", { name => 'n1' }, $token);
is $r->{status}, 403, 'a reader may not create clients';

(my $generous = $default) =~ s/(  reader:\n(?:.*\n)*?    actions:\n)/$1      - create_client\n/ or die 'no reader role';
write_policy($generous);
point_config_at_policy();
ok reload_and_wait(), 'SIGHUP replaces the workers';
($r) = $s->api('POST', "/organizations/$org/clients", { name => 'n1' }, $token);
is $r->{status}, 201, 'after the reload a reader may, as the new policy says';

write_policy("roles: [\n");
kill 'HUP', $s->master_pid;
ok PurserStack::wait_for(10, sub { grep { /reload refused/ } $s->log_lines('purser-fcgi.log') }),
    'the refusal is logged';
($r) = $s->api('POST', "/organizations/$org/clients", { name => 'n2' }, $token);
is $r->{status}, 201, 'a broken policy on reload changes nothing';

PurserStack::finish();

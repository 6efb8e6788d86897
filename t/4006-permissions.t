#!/usr/bin/perl
# 4006: GET /organizations/{org}/permissions answers what the caller may do there, as the
# RBAC policy decides (the admin pages offer only these controls): a server admin every
# declared action, a member its roles' actions (and `own` ones apart), an outsider only what
# every authenticated principal holds, and 404 for an organization that does not exist. The
# expected sets are computed here from policies/default.yaml, not taken from purser.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use YAML::XS ();
use PurserStack;

my $s = PurserStack->new;
my $org = $s->env('PURSER_ORG');
my $policy = YAML::XS::LoadFile(PurserStack::root() . '/policies/default.yaml');
my @declared = sort keys %{ $policy->{actions} };
sub call { $s->call(@_) }
sub perms {
    my ($token, $o) = @_;
    my ($r, $d) = call('GET', "/organizations/" . ($o // $org) . "/permissions", undef,
                       $token ? (authorization => "Bearer $token") : ());
    return ($r, $d);
}
sub token_of {
    my ($user, $role) = @_;
    call('POST', '/users', { username => $user });
    call('POST', "/organizations/$org/users", { username => $user, roles => [$role] }) if $role;
    my (undef, $d) = call('POST', "/users/$user/tokens", { description => 't' });
    return $d->{token};
}
sub expected {
    my (@roles) = @_;
    my (%all, %own);
    $all{$_} = 1 for @{ $policy->{authenticated} // [] };
    for my $role (@roles) {
        $all{$_} = 1 for @{ $policy->{roles}{$role}{actions} // [] };
        $own{$_} = 1 for @{ $policy->{roles}{$role}{own} // [] };
    }
    delete $own{$_} for keys %all;
    return ([ sort keys %all ], [ sort keys %own ]);
}

my ($r, $d) = perms();
is $r->{status}, 200, 'the server admin asks';
is_deeply [ sort @{ $d->{actions} } ], \@declared, '  every declared action';
is $d->{server_admin}, JSON::PP::true, '  as a server admin';
is $d->{organization}, $org, '  in the organization asked';
is_deeply [ sort keys %{ $d->{roles} // {} } ], [ sort keys %{ $policy->{roles} } ], '  and the roles the policy defines';
is $d->{roles}{release}, $policy->{roles}{release}{description}, '  each with its description';
is_deeply $d->{people_roles}, [qw(admin operator reader release)],
    '  and those for people (people: true), not the machines\' node, validator and cluster';

for my $role (qw(reader operator admin)) {
    my $token = token_of("perm-$role", $role);
    ($r, $d) = perms($token);
    my ($all, $own) = expected($role);
    is $r->{status}, 200, "a member with role $role";
    is_deeply [ sort @{ $d->{actions} } ], $all, '  holds exactly its role\'s actions (and every authenticated one)';
    is_deeply [ sort @{ $d->{own} } ], $own, '  and its own-only ones apart';
    is $d->{principal}, "perm-$role", '  named';
}
{
    my (undef, $c) = call('POST', "/organizations/$org/clients", { name => 'perm-node' });
    my $pem = $c->{chef_key}{private_key} // $c->{private_key};
    my $keyfile = $s->dir . '/perm-node.pem';
    open my $fh, '>', $keyfile or die;
    print $fh $pem;
    close $fh;
    my $res = $s->chef(user => 'perm-node', key => $keyfile, path => "/organizations/$org/permissions");
    is $res->{status}, 200, 'a node client asks (signed as Chef signs)';
    $d = $res->{json};
    my ($all, $own) = expected('node');
    is_deeply [ sort @{ $d->{own} } ], $own, 'a node client: write_node on its own nodes only';
    ok !grep({ $_ eq 'write_node' } @{ $d->{actions} }), '  not on every node';
}
my $outsider = token_of('perm-outsider');
($r, $d) = perms($outsider);
is $r->{status}, 200, 'an outsider asks';
is_deeply [ sort @{ $d->{actions} } ], [ sort @{ $policy->{authenticated} } ], '  only what every authenticated principal holds';
is_deeply $d->{own}, [], '  nothing of its own';
($r) = perms(undef, 'no-such-org');
is $r->{status}, 404, 'an organization that does not exist: 404';
($r) = call('GET', "/organizations/$org/permissions", undef, authorization => '');
is $r->{status}, 401, 'without credentials: 401';

$s->stop;
done_testing;

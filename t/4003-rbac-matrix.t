# 4003: the RBAC matrix. Walks every route of the route table (as /docs publishes it) for a
# member of each role, an outsider and a server admin, and checks each answer against
# policies/default.yaml: allowed means anything but 401/403, denied means 403 naming the
# action. A route without an action, or with one the policy does not expect, fails here.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use CPAN::Meta::YAML;
use PurserStack;
use YAML::XS ();

my $policy = do {
    open my $fh, '<', PurserStack::root() . '/policies/default.yaml' or die;
    local $/;
    CPAN::Meta::YAML->read_string(<$fh>)->[0] or die CPAN::Meta::YAML->errstr;
};
# What each route must demand: the specification the route table is held to. A route added
# to fcgi/routes.c must be added here too, with the action it should need.
my %expected_action = (
    'GET /organizations' => 'list_organizations',
    'POST /organizations' => 'create_organization',
    'GET /organizations/{org}' => 'read_organization',
    'PUT /organizations/{org}' => 'update_organization',
    'PATCH /organizations/{org}' => 'update_organization',
    'DELETE /organizations/{org}' => 'delete_organization',
    'GET /organizations/{org}/export' => 'export_organization',
    'GET /organizations/{org}/permissions' => 'list_organizations',
    'POST /organizations/{org}/import' => 'import_organization',
    'GET /organizations/{org}/users' => 'read_members',
    'POST /organizations/{org}/users' => 'write_members',
    'DELETE /organizations/{org}/users/{user}' => 'write_members',
    'GET /organizations/{org}/clients' => 'read_clients',
    'POST /organizations/{org}/clients' => 'create_client',
    'GET /organizations/{org}/clients/{client}' => 'read_clients',
    'PUT /organizations/{org}/clients/{client}' => 'update_client',
    'PATCH /organizations/{org}/clients/{client}' => 'update_client',
    'DELETE /organizations/{org}/clients/{client}' => 'delete_client',
    'GET /organizations/{org}/clients/{client}/keys' => 'read_clients',
    'POST /organizations/{org}/clients/{client}/keys' => 'update_client',
    'GET /organizations/{org}/clients/{client}/keys/{key}' => 'read_clients',
    'PUT /organizations/{org}/clients/{client}/keys/{key}' => 'update_client',
    'DELETE /organizations/{org}/clients/{client}/keys/{key}' => 'update_client',
    'PATCH /users/{user}' => 'update_user',
    'PATCH /users/{user}/tokens/{id}' => 'update_user',
    'GET /organizations/{org}/events' => 'read_events',
    'GET /metrics' => 'read_metrics',
    'GET /organizations/{org}/clusters' => 'read_cluster',
    'POST /organizations/{org}/clusters' => 'write_cluster',
    'GET /organizations/{org}/clusters/{id}' => 'read_cluster',
    'PUT /organizations/{org}/clusters/{id}' => 'write_cluster',
    'PATCH /organizations/{org}/clusters/{id}' => 'write_cluster',
    'DELETE /organizations/{org}/clusters/{id}' => 'delete_cluster',
    'PUT /organizations/{org}/clusters/{id}/facts' => 'write_cluster_facts',
    'GET /organizations/{org}/clusters/{id}/facts/history' => 'read_cluster',
    'GET /organizations/{org}/clusters/{id}/git-access' => 'read_cluster',
    'GET /organizations/{org}/git-access' => 'read_cleartext_document',
    'POST /organizations/{org}/clusters/{id}/bootstrap-token' => 'reset_bootstrap_token',
    'GET /clusters' => 'list_all_clusters',
    'GET /identity-providers' => 'read_identity_providers',
    'POST /identity-providers' => 'write_identity_providers',
    'GET /identity-providers/{id}' => 'read_identity_providers',
    'PUT /identity-providers/{id}' => 'write_identity_providers',
    'DELETE /identity-providers/{id}' => 'write_identity_providers',
    'POST /auth/sso/sign-out' => 'sign_out',
    'GET /organizations/{org}/policies' => 'read_policy',
    'GET /organizations/{org}/policies/{name}' => 'read_policy',
    'DELETE /organizations/{org}/policies/{name}' => 'delete_policy',
    'POST /organizations/{org}/policies/{name}/revisions' => 'write_policy',
    'GET /organizations/{org}/policies/{name}/revisions/{rev}' => 'read_policy',
    'DELETE /organizations/{org}/policies/{name}/revisions/{rev}' => 'delete_policy',
    'GET /organizations/{org}/policy_groups' => 'read_policy_group',
    'GET /organizations/{org}/policy_groups/{group}' => 'read_policy_group',
    'DELETE /organizations/{org}/policy_groups/{group}' => 'write_policy_group',
    'GET /organizations/{org}/policy_groups/{group}/policies/{name}' => 'read_policy_group',
    'PUT /organizations/{org}/policy_groups/{group}/policies/{name}' => 'write_policy_group',
    'DELETE /organizations/{org}/policy_groups/{group}/policies/{name}' => 'write_policy_group',
    'GET /organizations/{org}/policies/{name}/revisions/{rev}/policy_groups' => 'read_policy',
    'GET /organizations/{org}/policies/{name}/diff' => 'read_policy',
    'GET /organizations/{org}/policy_groups/{group}/nodes' => 'read_node',
    'GET /organizations/{org}/policy_groups/{group}/policies/{name}/nodes' => 'read_node',
    'PUT /organizations/{org}/policy_groups/{group}/policies/{name}/revision/{rev}' => 'write_policy_group',
    'POST /organizations/{org}/policy_groups/{group}/promote' => 'promote_policy_group',
    'GET /organizations/{org}/policies/{name}/revisions' => 'read_policy',
    'POST /organizations/{org}/collect_policies' => 'collect_policies',
    'POST /organizations/{org}/sandboxes' => 'write_cookbooks',
    'PUT /organizations/{org}/sandboxes/{id}' => 'write_cookbooks',
    'PUT /organizations/{org}/file_store/{checksum}' => 'write_cookbooks',
    'GET /organizations/{org}/file_store/{checksum}' => 'read_cookbooks',
    'GET /organizations/{org}/cookbook_artifacts' => 'read_cookbooks',
    'GET /organizations/{org}/cookbook_artifacts/{name}' => 'read_cookbooks',
    'GET /organizations/{org}/cookbook_artifacts/{name}/{identifier}' => 'read_cookbooks',
    'PUT /organizations/{org}/cookbook_artifacts/{name}/{identifier}' => 'write_cookbooks',
    'DELETE /organizations/{org}/cookbook_artifacts/{name}/{identifier}' => 'write_cookbooks',
    'GET /organizations/{org}/nodes' => 'read_node',
    'POST /organizations/{org}/nodes' => 'create_node',
    'GET /organizations/{org}/nodes/{node}' => 'read_node',
    'PUT /organizations/{org}/nodes/{node}' => 'write_node',
    'DELETE /organizations/{org}/nodes/{node}' => 'write_node',
    'GET /users' => 'list_users',
    'POST /users' => 'create_user',
    'GET /users/{user}' => 'read_user',
    'PUT /users/{user}' => 'update_user',
    'DELETE /users/{user}' => 'delete_user',
    'GET /users/{user}/keys' => 'read_user',
    'POST /users/{user}/keys' => 'update_user',
    'GET /users/{user}/keys/{key}' => 'read_user',
    'PUT /users/{user}/keys/{key}' => 'update_user',
    'DELETE /users/{user}/keys/{key}' => 'update_user',
    'GET /users/{user}/tokens' => 'read_user',
    'POST /users/{user}/tokens' => 'update_user',
    'DELETE /users/{user}/tokens/{id}' => 'update_user',
    # the document API, at the default organization and at any
    'GET /organizations/{org}/api/v1.0/revisions/{id}/deepdiff/{other}' => 'read_revision',
    'GET /api/v1.0/revisions/{id}/deepdiff/{other}' => 'read_revision',
    'GET /organizations/{org}/api/v1.0/revisions/{id}/rendered-documents' => 'read_cleartext_document',
    'GET /api/v1.0/revisions/{id}/rendered-documents' => 'read_cleartext_document',
    'PUT /api/v1.0/buckets/{bucket}/documents' => 'write_cleartext_document',
    'PUT /organizations/{org}/api/v1.0/buckets/{bucket}/documents' => 'write_cleartext_document',
    'POST /api/v1.0/documents' => 'write_cleartext_document',
    'POST /organizations/{org}/api/v1.0/documents' => 'write_cleartext_document',
    'DELETE /api/v1.0/documents/{namespace}/{kind}/{version}/{name}' => 'write_cleartext_document',
    'DELETE /organizations/{org}/api/v1.0/documents/{namespace}/{kind}/{version}/{name}' => 'write_cleartext_document',
    'GET /api/v1.0/revisions' => 'read_revision',
    'GET /organizations/{org}/api/v1.0/revisions' => 'read_revision',
    'DELETE /api/v1.0/revisions' => 'delete_revisions',
    'DELETE /organizations/{org}/api/v1.0/revisions' => 'delete_revisions',
    'GET /api/v1.0/revisions/{id}' => 'read_revision',
    'GET /organizations/{org}/api/v1.0/revisions/{id}' => 'read_revision',
    'GET /api/v1.0/revisions/{id}/documents' => 'read_cleartext_document',
    'GET /organizations/{org}/api/v1.0/revisions/{id}/documents' => 'read_cleartext_document',
    'GET /api/v1.0/revisions/{id}/diff/{other}' => 'read_revision',
    'GET /organizations/{org}/api/v1.0/revisions/{id}/diff/{other}' => 'read_revision',
    'GET /api/v1.0/revisions/{id}/tags' => 'read_revision',
    'GET /organizations/{org}/api/v1.0/revisions/{id}/tags' => 'read_revision',
    'DELETE /api/v1.0/revisions/{id}/tags' => 'write_tag',
    'DELETE /organizations/{org}/api/v1.0/revisions/{id}/tags' => 'write_tag',
    'GET /api/v1.0/revisions/{id}/tags/{tag}' => 'read_revision',
    'GET /organizations/{org}/api/v1.0/revisions/{id}/tags/{tag}' => 'read_revision',
    'POST /api/v1.0/revisions/{id}/tags/{tag}' => 'write_tag',
    'POST /organizations/{org}/api/v1.0/revisions/{id}/tags/{tag}' => 'write_tag',
    'DELETE /api/v1.0/revisions/{id}/tags/{tag}' => 'write_tag',
    'DELETE /organizations/{org}/api/v1.0/revisions/{id}/tags/{tag}' => 'write_tag',
    'POST /api/v1.0/rollback/{id}' => 'write_cleartext_document',
    'POST /organizations/{org}/api/v1.0/rollback/{id}' => 'write_cleartext_document',
    'GET /api/v1.0/revisions/{id}/validations' => 'read_validation',
    'GET /organizations/{org}/api/v1.0/revisions/{id}/validations' => 'read_validation',
    'GET /api/v1.0/revisions/{id}/validations/detail' => 'read_validation',
    'GET /organizations/{org}/api/v1.0/revisions/{id}/validations/detail' => 'read_validation',
    'GET /api/v1.0/revisions/{id}/validations/{name}' => 'read_validation',
    'GET /organizations/{org}/api/v1.0/revisions/{id}/validations/{name}' => 'read_validation',
    'POST /api/v1.0/revisions/{id}/validations/{name}' => 'write_validation',
    'POST /organizations/{org}/api/v1.0/revisions/{id}/validations/{name}' => 'write_validation',
    'GET /api/v1.0/revisions/{id}/validations/{name}/entries/{entry}' => 'read_validation',
    'GET /organizations/{org}/api/v1.0/revisions/{id}/validations/{name}/entries/{entry}' => 'read_validation',
);
my %open_routes = map { $_ => 1 } ('GET /healthz', 'GET /healthz/deep', 'GET /docs', 'GET /docs.yaml',
    'GET /versions', 'GET /api/v1.0/health', 'GET /organizations/{org}/principals/{name}',
    'GET /install/bootstrap.json', 'GET /auth/sso/providers', 'GET /auth/sso/{provider}/start',
    'GET /auth/sso/callback', 'POST /auth/sso/session', 'POST /auth/sso/{provider}/device',
    'POST /auth/sso/device/token');

# /metrics is open to loopback clients by default; here it is held to its action like the rest
my $s = PurserStack->new(metrics_loopback => 0);
my $org = $s->env('PURSER_ORG');

# One user per role, one outsider; a token each.
my %token;
for my $role (sort(keys %{ $policy->{roles} }), 'outsider') {
    my $name = "u-$role";
    my ($r) = $s->api('POST', '/users', { username => $name });
    is $r->{status}, 201, "user $name";
    if ($role ne 'outsider') {
        ($r) = $s->api('POST', "/organizations/$org/users", { username => $name, roles => [$role] });
        is $r->{status}, 201, "$name has role $role";
    }
    my ($t, $j) = $s->api('POST', "/users/$name/tokens", {});
    $token{$name} = $j->{token};
}
$token{admin} = $s->env('PURSER_ADMIN_TOKEN');

my ($docs_res, $docs) = $s->api('GET', '/docs', undef, '');
is $docs_res->{status}, 200, '/docs is open';
my @ops;
for my $path (sort keys %{ $docs->{paths} }) {
    for my $method (sort keys %{ $docs->{paths}{$path} }) {
        push @ops, [uc $method, $path, $docs->{paths}{$path}{$method}];
    }
}
ok @ops >= 30, scalar(@ops) . ' routes in the table';

my %declared = %{ $policy->{actions} };
for my $op (@ops) {
    my ($method, $path, $o) = @$op;
    my $action = $o->{'x-purser-action'};
    if ($open_routes{"$method $path"}) {
        ok !defined $action && !@{ $o->{security} }, "$method $path is open";
        next;
    }
    ok defined $action && $declared{$action}, "$method $path names a declared action (" . ($action // 'none') . ')';
    is $action, $expected_action{"$method $path"}, "$method $path needs the action it should";
}
my %published = map { ("$_->[0] $_->[1]" => 1) } @ops;
is_deeply [ grep { !$published{$_} } sort keys %expected_action ], [], 'every expected route is in the table';

sub has { my ($list, $x) = @_; scalar grep { $_ eq $x } @{ $list // [] } }

# Whether a role limited to policy groups (its `policy_groups`) reaches the group a route names.
sub reaches {
    my ($role, $o, $group) = @_;
    my $limits = $policy->{roles}{$role}{policy_groups} or return 1;
    return 1 unless $o->{'x-purser-policy-group'};
    for my $glob (@$limits) {
        (my $re = quotemeta $glob) =~ s/\\\*/.*/g;
        $re =~ s/\\\?/./g;
        return 1 if $group =~ /^$re$/;
    }
    return 0;
}

sub allowed {
    my ($subject, $role, $action, $path, $user_param, $o) = @_;
    return 1 if $subject eq 'admin';
    return 1 if has($policy->{authenticated}, $action);
    return 1 if $path =~ m{^/users/\{user\}} && $user_param eq $subject && has($policy->{self}, $action);
    # /api/v1.0/ acts on the default organization, where each user has its role
    return 1 if $role && $path =~ m{\{org\}|^/api/} && has($policy->{roles}{$role}{actions}, $action)
        && reaches($role, $o, 'nobody-here');
    # an action held under `own` passes the route's check; the handler then limits it to what
    # the principal created (t/3006 tests that part)
    return 1 if $role && $path =~ m{\{org\}} && has($policy->{roles}{$role}{own}, $action);
    return 0;
}

my ($checked, $wrong) = (0, 0);
for my $subject ('admin', map { "u-$_" } sort(keys %{ $policy->{roles} }), 'outsider') {
    $subject = 'u-outsider' if $subject eq 'outsider';
    my ($role) = $subject =~ /^u-(.*)$/;
    $role = undef if !$role || $role eq 'outsider';
    for my $op (@ops) {
        my ($method, $path, $o) = @$op;
        my $action = $o->{'x-purser-action'} or next;
        # The server admin may do anything: aim it at things that do not exist, so that
        # nothing is deleted. Others act on the real organization.
        my $target_org = $subject eq 'admin' ? 'nobody-here' : $org;
        my @user_params = $path =~ m{^/users/\{user\}} ? ($subject eq 'admin' ? 'nobody-here' : ($subject, 'admin')) : ('nobody-here');
        for my $user_param (@user_params) {
            (my $url = $path) =~ s/\{org\}/$target_org/g;
            $url =~ s/\{user\}/$user_param/g;
            $url =~ s/\{(client|key|name|rev|group|node|identifier|checksum|bucket|namespace|kind|version|tag)\}/nobody-here/g;
            $url =~ s/\{(other|entry)\}/0/g;
            $url =~ s/\{id\}/0000000000000000/g;
            my $body = ($method eq 'POST' || $method eq 'PUT') ? 'not json' : undef;
            my ($r, $j) = $s->api($method, $url, $body, $token{$subject});
            my $may = allowed($subject, $role, $action, $path, $user_param, $o);
            my $e = ref $j eq 'HASH' ? $j->{error} : undef;
            my $message = ref $e eq 'ARRAY' ? $e->[0] : ref $e eq 'HASH' ? $e->{message} : '';
            # the document API's Status document, asked as JSON
            $message = $j->{message} // '' if ref $j eq 'HASH' && ($j->{kind} // '') eq 'Status';
            if (($r->{headers}{'content-type'} // '') eq 'application/x-yaml' && length $r->{content}) {
                my ($status) = eval { YAML::XS::Load($r->{content}) };
                $message = $status->{message} // '' if ref $status eq 'HASH';
            }
            # a route about one policy group refuses in Chef's words (the log names the action)
            my $denial = $o->{'x-purser-policy-group'} ? qr/^missing (read|update|delete) permission$/
                                                       : qr/\Q'$action'\E/;
            my $ok = $may ? ($r->{status} != 401 && $r->{status} != 403)
                          : ($r->{status} == 403 && $message =~ $denial);
            $checked++;
            unless ($ok) {
                $wrong++;
                diag "$subject $method $url ($action): got $r->{status} $message, expected " . ($may ? 'allowed' : '403');
            }
        }
    }
}
ok $checked > 200, "$checked requests checked against the policy";
is $wrong, 0, 'every answer agrees with policies/default.yaml';

ok scalar(grep { /access denied/ && /"action":"delete_organization"/ } $s->log_lines('purser-fcgi.log')),
    'denials are logged with the action';

PurserStack::finish();

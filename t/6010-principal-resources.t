#!/usr/bin/perl
# 6010: the resource convention on organizations, users, clients, members and tokens (issue 35
# item 3), on Chef's own routes: every single object has a revision as its ETag (304 with
# If-None-Match), a write with a stale If-Match is 412 and changes nothing (none sent: accepted,
# as Chef's tools send none), PATCH is a merge patch (organizations and clients too); a list is
# Chef's shape unless a page is asked for (page_size, page_token, sort), then keyset pages of
# envelopes that neither repeat nor skip while users are added between pages; labels and OSIS's
# filters narrow either shape. Teleport's sub_kind and expires on the envelope: an expired
# cluster or user is 404, gone from lists, refused by authentication, with its delete event
# (reason expired); its name is free again.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use POSIX qw(strftime);
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
sub call { $s->call(@_) }
sub msg { PurserStack::error_message(@_) }
sub etag { my ($r) = @_; return $r->{headers}{etag} // '' }
sub rfc3339 { strftime('%Y-%m-%dT%H:%M:%SZ', gmtime($_[0])) }
# a page's items (none when the answer is no page), their names; an answer's keys (of an object)
sub items { ref $_[0] eq 'HASH' && ref $_[0]{items} eq 'ARRAY' ? $_[0]{items} : [] }
sub names { [ map { $_->{metadata}{name} } @{ items($_[0]) } ] }
sub hkeys { ref $_[0] eq 'HASH' ? [ sort keys %{ $_[0] } ] : ['(not an object)'] }
sub sql1 { my $v = $s->sql($_[0]); chomp $v; $v }

# ---- users: ETag, 304, If-Match ----
my ($r, $d) = call('POST', '/users', { username => 'ulla', display_name => 'Ulla', email => 'u@example.com',
    labels => { team => 'ops' }, create_key => JSON::PP::false });
is $r->{status}, 201, 'a user';
($r, $d) = call('GET', '/users/ulla');
is $r->{status}, 200, 'GET /users/ulla';
like etag($r), qr/^"[0-9a-f]{16}"$/, '  carries its revision as ETag: ' . etag($r);
is_deeply [ sort keys %$d ], [qw(active display_name email first_name labels last_name username)], "  in Chef's shape (and labels, active), no envelope";
my $u1 = etag($r);
($r) = call('GET', '/users/ulla', undef, 'if-none-match' => $u1);
is $r->{status}, 304, '  If-None-Match with it: 304';
($r, $d) = call('PUT', '/users/ulla', { display_name => 'Ulla Two' }, 'if-match' => $u1);
is $r->{status}, 200, 'PUT with the current If-Match: 200';
my $u2 = etag($r);
like $u2, qr/^"[0-9a-f]{16}"$/, '  the answer has the new ETag';
isnt $u2, $u1, '  a new revision';
($r, $d) = call('PUT', '/users/ulla', { display_name => 'Stale' }, 'if-match' => $u1);
is $r->{status}, 412, 'PUT with the old If-Match: 412';
like msg($d), qr/User 'ulla' has changed since it was read/, "  in Chef's error form, naming the user: " . msg($d);
is sql1("SELECT display_name FROM principals WHERE name = 'ulla'"), 'Ulla Two', '  and the store is unchanged';
($r, $d) = call('PATCH', '/users/ulla', { email => 'x@example.com' }, 'if-match' => $u1,
    'content-type' => 'application/merge-patch+json');
is $r->{status}, 412, 'PATCH with the old If-Match: 412';
is sql1("SELECT email FROM principals WHERE name = 'ulla'"), 'u@example.com', '  unchanged';
($r) = call('DELETE', '/users/ulla', undef, 'if-match' => $u1);
is $r->{status}, 412, 'DELETE with the old If-Match: 412';
is((call('GET', '/users/ulla'))[0]{status}, 200, '  the user is still there');
($r, $d) = call('PUT', '/users/ulla', { display_name => 'Ulla' });
is $r->{status}, 200, 'PUT without If-Match (as knife sends it): accepted';
isnt etag($r), $u2, '  and changes the revision';
($r, $d) = call('PUT', '/users/ulla', { display_name => 'Ulla' }, 'if-match' => etag($r));
is $r->{status}, 200, '  a write that changes nothing, with the current If-Match: 200';

# ---- merge patch ----
($r, $d) = call('PATCH', '/users/ulla', { labels => { team => undef, tier => 'gold' }, email => undef },
    'content-type' => 'application/merge-patch+json');
is $r->{status}, 200, 'PATCH a user with a merge patch';
is_deeply $d->{labels}, { tier => 'gold' }, '  null removed a label, the other added';
is $d->{email}, '', '  null emptied the email';
is $d->{display_name}, 'Ulla', '  what the patch left out is kept';
($r, $d) = call('PATCH', '/users/ulla', { username => 'other' });
is $r->{status}, 400, 'a patch that renames: 400';
like msg($d), qr/username/, '  naming the field';
($r, $d) = call('PATCH', '/users/ulla', { labels => { a => 'b' } }, 'content-type' => 'text/plain');
is $r->{status}, 415, 'PATCH as text/plain: 415';

# ---- organizations ----
my $o = $s->must('an organization', 'POST', '/organizations', { name => 'acme', full_name => 'Acme',
    labels => { tier => 'gold', region => 'eu' }, external_ids => ['osis-1'] });
($r, $d) = call('GET', '/organizations/acme');
like etag($r), qr/^"[0-9a-f]{16}"$/, 'GET an organization: an ETag';
my $o1 = etag($r);
($r, $d) = call('PATCH', '/organizations/acme', { labels => { region => undef }, full_name => 'Acme Inc.' },
    'content-type' => 'application/merge-patch+json', 'if-match' => $o1);
is $r->{status}, 200, 'PATCH an organization (merge patch, If-Match)';
is_deeply $d->{labels}, { tier => 'gold' }, '  a label removed, the other kept';
is $d->{full_name}, 'Acme Inc.', '  full_name changed';
is_deeply $d->{external_ids}, ['osis-1'], '  external ids kept';
($r, $d) = call('PUT', '/organizations/acme', { full_name => 'Stale' }, 'if-match' => $o1);
is $r->{status}, 412, 'PUT an organization with a stale If-Match: 412';
is sql1("SELECT full_name FROM organizations WHERE name = 'acme'"), 'Acme Inc.', '  unchanged';
($r, $d) = call('PATCH', '/organizations/acme', { full_name => undef });
is $r->{status}, 400, 'removing full_name: 400';
($r, $d) = call('PATCH', '/organizations/acme', { expires => rfc3339(time + 3600) });
is $r->{status}, 400, 'an organization does not expire: 400';
like msg($d), qr/expires/, '  naming the field';
($r, $d) = call('PATCH', '/organizations/acme', { sub_kind => 'tenant' });
is $d->{sub_kind}, 'tenant', 'an organization takes a sub_kind';
($r) = call('DELETE', '/organizations/acme', undef, 'if-match' => $o1);
is $r->{status}, 412, 'DELETE an organization with a stale If-Match: 412';
is((call('GET', '/organizations/acme'))[0]{status}, 200, '  it is still there');

# ---- clients ----
$s->must('a client', 'POST', "/organizations/$org/clients", { name => 'ci-runner', create_key => JSON::PP::false });
($r, $d) = call('GET', "/organizations/$org/clients/ci-runner");
like etag($r), qr/^"[0-9a-f]{16}"$/, 'GET a client: an ETag';
is_deeply [ sort keys %$d ], [qw(chef_type clientname json_class name orgname validator)], "  Chef's shape, exactly";
my $c1 = etag($r);
($r, $d) = call('PATCH', "/organizations/$org/clients/ci-runner", { labels => { role => 'ci' } },
    'content-type' => 'application/merge-patch+json', 'if-match' => $c1);
is $r->{status}, 200, 'PATCH a client (labels)';
isnt etag($r), $c1, '  a new ETag';
($r, $d) = call('PUT', "/organizations/$org/clients/ci-runner", { validator => JSON::PP::true }, 'if-match' => $c1);
is $r->{status}, 412, 'PUT a client with a stale If-Match: 412';
is sql1("SELECT validator FROM principals WHERE name = 'ci-runner'"), '0', '  unchanged';

# ---- tokens ----
$s->must('a user for tokens', 'POST', '/users', { username => 'tina', create_key => JSON::PP::false });
my $tok = $s->must('a token', 'POST', '/users/tina/tokens', { description => 'ci', labels => { use => 'ci' } });
($r, $d) = call('PATCH', "/users/tina/tokens/$tok->{id}", { active => JSON::PP::false });
is $r->{status}, 200, 'PATCH a token';
like etag($r), qr/^"[0-9a-f]{16}"$/, '  an ETag';
my $t1 = etag($r);
($r, $d) = call('PATCH', "/users/tina/tokens/$tok->{id}", { labels => { use => undef, team => 'b' } }, 'if-match' => $t1);
is $r->{status}, 200, "  its labels merged, with the current If-Match";
is_deeply $d->{labels}, { team => 'b' }, '  the labels merged';
($r, $d) = call('PATCH', "/users/tina/tokens/$tok->{id}", { active => JSON::PP::true }, 'if-match' => $t1);
is $r->{status}, 412, '  a stale If-Match: 412';
is sql1("SELECT active FROM api_tokens WHERE id = '$tok->{id}'"), '0', '  unchanged';
($r) = call('DELETE', "/users/tina/tokens/$tok->{id}", undef, 'if-match' => $t1);
is $r->{status}, 412, 'DELETE a token with a stale If-Match: 412';
is sql1("SELECT COUNT(*) FROM api_tokens WHERE id = '$tok->{id}'"), '1', '  still there';

# ---- Chef's shapes without the new parameters ----
($r, $d) = call('GET', '/users');
is ref $d, 'HASH', "GET /users: Chef's {name: uri}";
like $d->{tina}, qr{/users/tina$}, '  tina with her URL';
ok !exists $d->{items}, '  no page';
($r, $d) = call('GET', "/organizations/$org/users");
is ref $d, 'ARRAY', "GET members: Chef's list";
ok((grep { $_->{user}{username} eq 'admin' } @$d), '  of {user: {username, roles}}');
($r, $d) = call('GET', "/organizations/$org/clients");
like $d->{'ci-runner'}, qr{/clients/ci-runner$}, "GET clients: Chef's {name: uri}";
($r, $d) = call('GET', '/users/tina/tokens');
is ref $d, 'ARRAY', 'GET tokens: the list of tokens';
my $chef = $s->chef(path => '/users');
is $chef->{status}, 200, 'a Chef-signed GET /users: 200';
ok $chef->{json} && $chef->{json}{tina} && !exists $chef->{json}{items}, "  Chef's shape";
$chef = $s->chef(path => "/organizations/$org/clients/ci-runner", method => 'PUT',
                 body => encode_json({ name => 'ci-runner', validator => JSON::PP::false }));
is $chef->{status}, 200, 'a Chef-signed PUT of a client, without If-Match: 200';

# ---- pages: 250 users, keyset, users added between pages ----
my (@made, @gold);
for my $i (0 .. 249) {
    my $name = sprintf 'p%03d', $i * 2;
    my %labels = $i % 5 == 0 ? (tier => 'gold') : ();
    push @gold, $name if %labels;
    $s->must("user $name", 'POST', '/users', { username => $name, display_name => "P $i",
        create_key => JSON::PP::false, labels => \%labels });
    push @made, $name;
}
my (%seen, @order, $dups);
my ($token, $pages, $added) = ('', 0, 0);
do {
    ($r, $d) = call('GET', '/users?page_size=40' . ($token ? "&page_token=$token" : ''));
    is $r->{status}, 200, "page " . ($pages + 1) . ": 200" if $pages == 0;
    for my $n (@{ names($d) }) { $dups++ if $seen{$n}++; push @order, $n }
    $token = $d->{next_page_token} // '';
    $pages++;
    # users added between pages: before the cursor and after it (odd numbers, between the others)
    for my $i (map { $pages * 37 + $_ } 0 .. 2) {
        my $name = sprintf 'p%03d', ($i % 250) * 2 + 1;
        my ($cr) = call('POST', '/users', { username => $name, create_key => JSON::PP::false });
        $added++ if $cr->{status} == 201;
    }
} while ($token ne '' && $pages < 40);
ok $added > 0, "users were added between pages ($added)";
ok @order >= 250 && !$dups, 'no user is listed twice (' . scalar(@order) . ' listed)';
is scalar(grep { !$seen{$_} } @made), 0, 'every user that was there all along is listed (no gap)';
ok @order && join(',', @order) eq join(',', sort @order), '  in name order';
ok $pages >= 7, "  in pages of 40 ($pages)";
is $d->{next_page_token}, '', 'the last page says so';
my $first = items($d)->[0] // {};
is ref $first->{spec}, 'HASH', 'a page holds envelopes';
is $first->{kind}, 'User', '  of kind User';
my ($ur) = call('GET', '/users/' . ($first->{metadata}{name} // 'p000'));
is qq("@{[ $first->{metadata}{revision} // '' ]}"), etag($ur), "  whose metadata.revision is the user's ETag";

# ---- selectors and filters ----
($r, $d) = call('GET', '/users?page_size=1000&labels=tier%3Dgold');
is_deeply [ grep { /^p\d/ } @{ names($d) } ], \@gold, 'labels=tier=gold: the gold users, each once';
($r, $d) = call('GET', '/users?page_size=20&labels=tier%3Dgold');
is scalar(@{ items($d) }), 20, '  by pages too (20 of 50 and ulla)';
ok length($d->{next_page_token} // ''), '  with a next page';
($r, $d) = call('GET', '/users?labels=tier%3Dgold');
is ref $d, 'HASH', "labels alone: Chef's shape, narrowed";
is_deeply [ grep { /^p\d/ } @{ hkeys($d) } ], \@gold, '  to the gold users';
($r, $d) = call('GET', '/users?labels=tier!%3Dgold,team');
is_deeply hkeys($d), [], 'labels=tier!=gold,team: none has team now';
($r, $d) = call('GET', '/users?filter=display_name%3D%3DP%207&page_size=10');
is_deeply names($d), ['p014'], 'filter=display_name==P 7 (OSIS): that user';
($r, $d) = call('GET', '/users?filter=display_name%3D%3DP%207');
is_deeply hkeys($d), ['p014'], "  and in Chef's shape";
$s->must('a tenant', 'POST', '/organizations', { name => 'osisco', full_name => 'Osis Co', external_ids => ['osis-9'] });
$s->must('a member', 'POST', '/organizations/osisco/users', { username => 'p014', roles => ['operator'] });
$s->must('another', 'POST', '/organizations/osisco/users', { username => 'p016', roles => ['reader'] });
($r, $d) = call('GET', '/users?filter=tenant%3D%3Dosisco&page_size=10');
is_deeply names($d), ['p014', 'p016'], 'filter=tenant==osisco: the users of that organization';
($r, $d) = call('GET', '/users?filter=external_id%3D%3Dosis-9&page_size=10');
is_deeply names($d), ['p014', 'p016'], "filter=external_id==osis-9: the users of the organization that holds it (OSIS's cd_tenant_id)";
($r, $d) = call('GET', '/organizations?filter=external_id%3D%3Dosis-9&page_size=10');
is_deeply names($d), ['osisco'], 'organizations by external id, as a page';
($r, $d) = call('GET', '/organizations?filter=display_name%3D%3DOsis%20Co');
is_deeply hkeys($d), ['osisco'], "  by display name, in Chef's shape";
($r, $d) = call('GET', '/organizations/osisco/users?filter=role%3D%3Doperator&page_size=10');
is_deeply names($d), ['p014'], 'members filtered by role';
is items($d)->[0]{kind}, 'Member', '  Member envelopes';
is_deeply items($d)->[0]{spec}{roles}, ['operator'], '  with their roles';
($r, $d) = call('GET', '/organizations/osisco/users?filter=role%3D%3Doperator');
is_deeply [ map { $_->{user}{username} } @{ ref $d eq 'ARRAY' ? $d : [] } ], ['p014'], "  and in Chef's shape";
($r, $d) = call('GET', "/organizations/$org/clients?labels=role%3Dci&page_size=10");
is_deeply names($d), ['ci-runner'], 'clients by label';
($r, $d) = call('GET', "/organizations/$org/clients?filter=validator%3D%3Dtrue");
is_deeply hkeys($d), ["$org-validator"], 'clients filtered by validator';
($r, $d) = call('GET', '/users/tina/tokens?labels=team%3Db&page_size=10');
is_deeply names($d), [$tok->{id}], 'tokens by label';
($r, $d) = call('GET', '/users?page_size=5&sort=-display_name');
is scalar(@{ items($d) }), 5, 'sort=-display_name';
is_deeply [ map { $_->{spec}{display_name} } @{ items($d) } ],
    [ sort { $b cmp $a } map { $_->{spec}{display_name} } @{ items($d) } ], '  descending';
($r, $d) = call('GET', '/users?filter=shoe_size%3D%3D9');
is $r->{status}, 400, 'an unknown filter field: 400';
like msg($d), qr/shoe_size/, '  naming it';
($r, $d) = call('GET', '/users?labels=bad%20key%3Dx&page_size=5');
is $r->{status}, 400, 'a bad selector: 400';
like msg($d), qr/labels/, '  naming labels';
($r, $d) = call('GET', '/users?page_token=garbage');
is $r->{status}, 400, 'a page token not ours: 400';

# ---- sub_kind and expires: clusters and users ----
my $base = "/organizations/$org/clusters";
($r, $d) = call('POST', $base, { metadata => { name => 'brief', sub_kind => 'edge' }, spec => {} });
is $r->{status}, 201, 'a cluster with a sub_kind';
is $d->{metadata}{sub_kind}, 'edge', '  shown in metadata';
($r, $d) = call('GET', "$base?filter=sub_kind%3D%3Dedge");
is_deeply names($d), ['c-brief'], '  filter=sub_kind==edge finds it';
($r, $d) = call('POST', $base, { metadata => { name => 'bad1', sub_kind => 'Not Valid' }, spec => {} });
is $r->{status}, 400, 'a bad sub_kind: 400';
like msg($d), qr/metadata\.sub_kind must be 1 to 63/, '  naming it: ' . msg($d);
($r, $d) = call('POST', $base, { metadata => { name => 'bad2', expires => 'tomorrow' }, spec => {} });
is $r->{status}, 400, 'expires that is not RFC 3339: 400';
like msg($d), qr/metadata\.expires must be an RFC 3339 time/, '  naming it: ' . msg($d);
($r, $d) = call('POST', $base, { metadata => { name => 'bad3', expires => '2001-01-01T00:00:00Z' }, spec => {} });
is $r->{status}, 400, 'expires in the past: 400';
like msg($d), qr/metadata\.expires: .* is in the past/, '  saying so: ' . msg($d);
is sql1("SELECT COUNT(*) FROM resources WHERE name LIKE 'c-bad%'"), '0', '  nothing stored';
my $when = time + 4;
($r, $d) = call('POST', $base, { metadata => { name => 'fleeting', expires => rfc3339($when) }, spec => {} });
is $r->{status}, 201, 'a cluster that expires in 4 s';
is $d->{metadata}{expires}, rfc3339($when), '  its expiry in UTC';
$s->must('a user that expires', 'POST', '/users', { username => 'temp', expires => rfc3339($when),
    sub_kind => 'contractor', create_key => JSON::PP::false });
$s->must('who is a member', 'POST', "/organizations/$org/users", { username => 'temp' });
my $temp_token = $s->must('her token', 'POST', '/users/temp/tokens', {})->{token};
($r, $d) = call('GET', '/users/temp');
is $d->{expires}, rfc3339($when), 'a user with expires shows it';
is $d->{sub_kind}, 'contractor', '  and its sub_kind';
($r) = call('GET', '/users/temp', undef, authorization => "Bearer $temp_token");
is $r->{status}, 200, '  her token works before';
($r, $d) = call('GET', "/organizations/$org/events?since=0");
my $since = $d->{next};
sleep 1 while time <= $when + 1;
($r, $d) = call('GET', "$base/c-fleeting");
is $r->{status}, 404, 'after its expiry the cluster is 404';
($r, $d) = call('GET', $base);
ok !grep({ $_ eq 'c-fleeting' } @{ names($d) }), '  and gone from the list';
($r) = call('GET', '/users/temp', undef, authorization => "Bearer $temp_token");
is $r->{status}, 401, "the expired user's token is refused";
($r, $d) = call('GET', '/users');
ok !exists $d->{temp}, "the user is gone from Chef's list";
($r, $d) = call('GET', '/users?page_size=1000');
ok !grep({ $_ eq 'temp' } @{ names($d) }), '  and from the page';
($r) = call('GET', '/users/temp');
is $r->{status}, 404, '  and is 404';
($r, $d) = call('GET', "/organizations/$org/events?since=$since");
my ($ce) = grep { $_->{kind} eq 'cluster' && $_->{name} eq 'c-fleeting' } @{ $d->{events} };
is $ce->{op}, 'delete', 'the event feed says the cluster was deleted';
is $ce->{reason}, 'expired', '  because it expired';
is $ce->{actor}, 'purser', '  by the server';
my ($ue) = grep { $_->{kind} eq 'user' && $_->{name} eq 'temp' } @{ $d->{events} };
is $ue->{op}, 'delete', 'and that the user was deleted';
is $ue->{reason}, 'expired', '  because she expired';
is scalar(grep { $_->{kind} eq 'user' && $_->{name} eq 'temp' } @{ $d->{events} }), 1, '  once';
is sql1("SELECT COUNT(*) FROM principals WHERE name = 'temp'"), '0', 'her row is gone';
($r) = call('POST', '/users', { username => 'temp', create_key => JSON::PP::false });
is $r->{status}, 201, 'the name can be taken again';
($r) = call('POST', $base, { metadata => { name => 'fleeting' }, spec => {} });
is $r->{status}, 201, '  and the cluster id';

PurserStack::finish();

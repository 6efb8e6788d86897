#!/usr/bin/perl
# 3013: the policies and policy groups lists as pages (issue 38 item 2): with page_size,
# page_token or sort, GET .../policies answers {items, next_page_token, total}, each policy with
# its revision count and newest upload, and GET .../policy_groups each group the caller may read
# with what it points at; both sort, filter on name (== != and '*'), page by position to the end
# with nothing repeated or skipped; bad parameters are 400 naming them; without them Chef's
# shapes are unchanged (filter alone narrows them); a caller held on some groups sees only those,
# in the total too; purserctl lists the pages.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $s = PurserStack->new;
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org";
my $lock = sub { my ($name, $rev) = @_; { revision_id => $rev, name => $name, run_list => ['recipe[base::default]'],
    cookbook_locks => { base => { version => '1.0.0', identifier => "id-$rev" } } } };

# 23 policies: app01..app22 with (i % 3) + 1 revisions, and web_1 (an underscore)
for my $i (1 .. 22) {
    my $name = sprintf 'app%02d', $i;
    $s->must('rev', 'POST', "$base/policies/$name/revisions", $lock->($name, "$name-r$_")) for 1 .. $i % 3 + 1;
}
$s->must('rev', 'POST', "$base/policies/web_1/revisions", $lock->('web_1', 'w-r1'));
# 12 groups: g01..g12, g<n> points at app01..app<n % 4> (g04, g08, g12 at nothing: their
# pointer removed)
for my $g (1 .. 12) {
    my $group = sprintf "$base/policy_groups/g%02d", $g;
    $s->must('ptr', 'PUT', sprintf("$group/policies/app%02d", $_), $lock->(sprintf('app%02d', $_), sprintf('app%02d-r1', $_)))
        for 1 .. ($g % 4 || 1);
    $s->must('unptr', 'DELETE', "$group/policies/app01") unless $g % 4;
}
$s->must('ptr', 'PUT', "$base/policy_groups/g01/policies/web_1", $lock->('web_1', 'w-r1'));

# ---- policies ----
my $p = $s->must('page', 'GET', "$base/policies?page_size=10");
is $p->{total}, 23, 'policies: a page has the total of the whole list';
is scalar @{ $p->{items} }, 10, '  ten items';
is_deeply [ sort keys %{ $p->{items}[0] } ], [qw(latest_at name revision_count)], '  each a name, revision count and newest upload';
is_deeply [ @{ $p->{items}[1] }{qw(name revision_count)} ], ['app02', 3], '  app02 has 3 revisions';
like $p->{items}[0]{latest_at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, '  its newest upload\'s time';
my @names = map { $_->{name} } @{ $p->{items} };
while ($p->{next_page_token} ne '') {
    $p = $s->must('next', 'GET', "$base/policies?page_size=10&page_token=$p->{next_page_token}");
    push @names, map { $_->{name} } @{ $p->{items} };
}
is_deeply \@names, [ (map { sprintf 'app%02d', $_ } 1 .. 22), 'web_1' ], '  the pages to the end: every policy once, in order';

$p = $s->must('sorted', 'GET', "$base/policies?sort=-revision_count&page_size=4");
is_deeply [ map { $_->{name} } @{ $p->{items} } ], [qw(app20 app17 app14 app11)], 'sort=-revision_count: most first, names descending';
$p = $s->must('sorted', 'GET', "$base/policies?sort=revision_count&page_size=3");
is_deeply [ map { "$_->{name}:$_->{revision_count}" } @{ $p->{items} } ], [qw(app03:1 app06:1 app09:1)], 'sort=revision_count';
$p = $s->must('sorted', 'GET', "$base/policies?sort=-latest_at&page_size=2");
is $p->{items}[0]{name}, 'web_1', 'sort=-latest_at: the newest upload first';
$p = $s->must('sorted', 'GET', "$base/policies?sort=-name&page_size=2");
is_deeply [ map { $_->{name} } @{ $p->{items} } ], [qw(web_1 app22)], 'sort=-name';
$p = $s->must('glob', 'GET', "$base/policies?sort=name&filter=name==app1*");
is $p->{total}, 10, "filter=name==app1*: a '*' matches any text, and the total is what it selects";
$p = $s->must('not', 'GET', "$base/policies?sort=name&filter=name!=app*");
is_deeply [ map { $_->{name} } @{ $p->{items} } ], ['web_1'], '  !=';
$p = $s->must('literal', 'GET', "$base/policies?sort=name&filter=name==app_1");
is $p->{total}, 0, "  '_' is a character, not a wildcard";

my $chef = $s->must('chef', 'GET', "$base/policies");
is scalar(keys %$chef), 23, "without page parameters: Chef's {name: {uri, revisions}}";
is scalar(keys %{ $chef->{app02}{revisions} }), 3, '  with every revision';
$chef = $s->must('chef', 'GET', "$base/policies?filter=name==app2*");
is_deeply [ sort keys %$chef ], [qw(app20 app21 app22)], '  filter alone narrows it';
like $chef->{app21}{uri}, qr{/organizations/\Q$org\E/policies/app21$}, '  keeping its shape';

# ---- a policy's revisions ----
my $rv = $s->must('revisions page', 'GET', "$base/policies/app02/revisions?page_size=2");
is $rv->{total}, 3, "a policy's revisions: a page has the total";
is_deeply [ map { $_->{revision_id} } @{ $rv->{items} } ], [qw(app02-r1 app02-r2)], '  the first 2 by revision_id';
is_deeply [ sort keys %{ $rv->{items}[0] } ], [qw(created_at created_by policy_group_list revision_id)],
    '  each its upload, uploader and the groups pointing at it';
is_deeply $rv->{items}[0]{policy_group_list}, [qw(g02 g03 g06 g07 g10 g11)], '  app02-r1: the six groups that point at it';
is_deeply $rv->{items}[1]{policy_group_list}, [], '  app02-r2: none';
$rv = $s->must('next', 'GET', "$base/policies/app02/revisions?page_size=2&page_token=$rv->{next_page_token}");
is_deeply [ map { $_->{revision_id} } @{ $rv->{items} } ], ['app02-r3'], '  the next page: the last one';
is $rv->{next_page_token}, '', '  and no page after it';
$rv = $s->must('sorted', 'GET', "$base/policies/app02/revisions?sort=-created_at&page_size=1");
is $rv->{items}[0]{revision_id}, 'app02-r3', 'sort=-created_at: the newest upload first';
$rv = $s->must('filtered', 'GET', "$base/policies/app02/revisions?sort=revision_id&filter=revision_id==*r2");
is_deeply [ map { $_->{revision_id} } @{ $rv->{items} } ], ['app02-r2'], 'filter=revision_id==*r2 narrows a page';
$rv = $s->must('filtered', 'GET', "$base/policies/app02/revisions?sort=revision_id&filter=created_by!=admin");
is $rv->{total}, 0, '  created_by!=admin: none';
$rv = $s->must('narrowed', 'GET', "$base/policies/app02/revisions?filter=revision_id==*r2");
is_deeply [ keys %$rv ], ['app02-r2'], '  and alone narrows the map, keeping its shape (as for the policies)';
like $rv->{'app02-r2'}{uri}, qr{/policies/app02/revisions/app02-r2$}, '  (its uri)';
my ($res, $d) = $s->call('GET', "$base/policies/app02/revisions?sort=size");
is $res->{status}, 400, 'sort=size: 400';
like PurserStack::error_message($d), qr/^sort must be revision_id, created_at or created_by/, '  naming the keys';
($res, $d) = $s->call('GET', "$base/policies/app02/revisions?filter=body==x");
like PurserStack::error_message($d), qr/^filter: policy revisions filter on revision_id or created_by/, 'a filter on another field: 400 naming the fields';
($res, $d) = $s->call('GET', "$base/policies/nosuch/revisions?page_size=5");
is $res->{status}, 404, 'an unknown policy: 404, as without paging';
my $map = $s->must('chef', 'GET', "$base/policies/app02/revisions");
is_deeply [ sort keys %$map ], [qw(app02-r1 app02-r2 app02-r3)], 'without those parameters: the map by revision_id, as before';

# ---- policy groups ----
$p = $s->must('groups', 'GET', "$base/policy_groups?page_size=5");
is $p->{total}, 12, 'groups: the total';
is_deeply $p->{items}[0], { name => 'g01', policy_count => 2,
    policies => { app01 => { revision_id => 'app01-r1' }, web_1 => { revision_id => 'w-r1' } } }, '  each with what it points at';
is_deeply $p->{items}[3], { name => 'g04', policy_count => 0, policies => {} }, '  a group pointing at nothing';
@names = map { $_->{name} } @{ $p->{items} };
while ($p->{next_page_token} ne '') {
    $p = $s->must('next', 'GET', "$base/policy_groups?page_size=5&page_token=$p->{next_page_token}");
    push @names, map { $_->{name} } @{ $p->{items} };
}
is_deeply \@names, [ map { sprintf 'g%02d', $_ } 1 .. 12 ], '  the pages to the end';
$p = $s->must('sorted', 'GET', "$base/policy_groups?sort=-policy_count&page_size=4");
is_deeply [ map { "$_->{name}:$_->{policy_count}" } @{ $p->{items} } ], [qw(g11:3 g07:3 g03:3 g10:2)], 'sort=-policy_count';
$p = $s->must('filtered', 'GET', "$base/policy_groups?sort=name&filter=name==g1*");
is_deeply [ map { $_->{name} } @{ $p->{items} } ], [qw(g10 g11 g12)], 'filter=name==g1*';
$chef = $s->must('chef', 'GET', "$base/policy_groups");
is scalar(keys %$chef), 12, "without page parameters: Chef's {group: {uri, policies}}";
is $chef->{g03}{policies}{app02}{revision_id}, 'app02-r1', '  with its pointers';
$chef = $s->must('chef', 'GET', "$base/policy_groups?filter=name!=g0*");
is_deeply [ sort keys %$chef ], [qw(g10 g11 g12)], '  filter alone narrows it';

# a member held on some groups sees those only, in the page and its total
my ($r, $j) = $s->api('POST', '/users', { username => 'few' });
($r) = $s->api('POST', "$base/users", { username => 'few', roles => ['reader'], policy_groups => { reader => ['g1*', 'g02'] } });
is $r->{status}, 201, 'a reader limited to g1* and g02';
($r, $j) = $s->api('POST', '/users/few/tokens', {});
my $few = $j->{token};
($r, $j) = $s->api('GET', "$base/policy_groups?page_size=2", undef, $few);
is $j->{total}, 4, '  its page\'s total: the groups it may read';
is_deeply [ map { $_->{name} } @{ $j->{items} } ], [qw(g02 g10)], '  its first page';
($r, $j) = $s->api('GET', "$base/policy_groups?page_size=2&page_token=$j->{next_page_token}", undef, $few);
is_deeply [ map { $_->{name} } @{ $j->{items} } ], [qw(g11 g12)], '  and the next';
is $j->{next_page_token}, '', '  the last';

for ([ 'policies?sort=latest', qr/sort must be name, revision_count or latest_at/ ],
     [ 'policies?page_size=x', qr/page_size/ ], [ 'policies?page_token=-1', qr/page_token/ ],
     [ 'policies?filter=revision_count==1', qr/filter.*name.*revision_count/ ], [ 'policies?filter=name', qr/filter/ ],
     [ 'policy_groups?sort=policies', qr/sort must be name or policy_count/ ],
     [ 'policy_groups?filter=policy==app01', qr/filter.*name.*policy/ ]) {
    ($r, $j) = $s->call('GET', "$base/$_->[0]");
    is $r->{status}, 400, "$_->[0]: 400";
    like(JSON::PP->new->encode($j), $_->[1], '  naming what is wrong');
}

my $ctl = sub {
    local @ENV{qw(PURSER_URL PURSER_CA PURSER_ORG PURSER_TOKEN)} =
        map { $s->env($_) } qw(PURSER_URL PURSER_CA PURSER_ORG PURSER_ADMIN_TOKEN);
    open my $fh, '-|', PurserStack::build() . '/purserctl', 'get', @_ or die "purserctl: $!";
    local $/;
    <$fh> // '';
};
my $out = $ctl->(qw(policies --sort -revision_count --page-size 3));
like $out, qr/^NAME\s+REVISIONS\s+LATEST UPLOAD/m, 'purserctl get policies --sort: the rows as a table';
like $out, qr/^app20\s+3\s/m, '  a policy\'s row';
my @rows = map { /^(\S+)/ } grep { !/^NAME/ } split /\n/, $out;
is scalar @rows, 23, '  every page of 3 followed';
is_deeply [ @rows[6 .. 8] ], [qw(app02 app22 app19)], '  in the order asked';
$out = $ctl->(qw(policy-revisions --policy app02 --sort -created_at --page-size 2));
like $out, qr/^REVISION\s+CREATED\s+BY\s+GROUPS/m, 'purserctl get policy-revisions --policy --sort --page-size: a table';
is_deeply [ map { /^(\S+)/ } grep { !/^REVISION/ } split /\n/, $out ], [qw(app02-r3 app02-r2 app02-r1)], '  every page followed, newest first';
$out = $ctl->(qw(policy-groups --filter name==g1* --sort name));
like $out, qr/^NAME\s+POLICIES/m, 'purserctl get policy-groups --filter --sort';
like $out, qr/^g11\s+3$/m, '  a group\'s row';
unlike $out, qr/^g0/m, '  filtered';

$s->stop;
done_testing;

#!/usr/bin/perl
# 3012: the nodes list as pages of summaries (issue 38 item 3): with page_size, page_token or
# sort, GET .../nodes answers {items, next_page_token, total}, each node with its policy, group,
# the revision its group points at, and what its stored attributes say (platform, address,
# ohai_time); sorts, filters (== != and '*'), pages by position to the end with nothing repeated
# or skipped; bad parameters are 400 naming them; without them Chef's shape is unchanged
# (filter alone narrows it); purserctl lists the pages.
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
my $lock = sub { my ($rev) = @_; { revision_id => $rev, name => 'web', run_list => ['recipe[base::default]'],
    cookbook_locks => { base => { version => '1.0.0', identifier => "id-$rev" } } } };
$s->must('lock', 'PUT', "$base/policy_groups/prod/policies/web", $lock->('r-prod'));
$s->must('lock', 'PUT', "$base/policy_groups/dev/policies/web", $lock->('r-dev'));
for my $i (1 .. 25) {
    my $group = $i % 3 ? 'prod' : 'dev';
    $s->must('node', 'POST', "$base/nodes", { name => sprintf('web%02d', $i), policy_name => 'web', policy_group => $group,
        automatic => { platform => $i % 2 ? 'debian' : 'ubuntu', platform_version => '12', ipaddress => "10.0.0.$i",
                       fqdn => "web$i.example.com", ohai_time => 1700000000 + $i } });
}
$s->must('node', 'POST', "$base/nodes", { name => 'bare' });

my $p = $s->must('page', 'GET', "$base/nodes?page_size=10");
is $p->{total}, 26, 'a page: the total of the whole list';
is scalar @{ $p->{items} }, 10, '  ten items';
is $p->{items}[0]{name}, 'bare', '  by name';
is_deeply $p->{items}[1], { name => 'web01', policy_name => 'web', policy_group => 'prod', revision_id => 'r-prod',
    platform => 'debian', platform_version => '12', ipaddress => '10.0.0.1', fqdn => 'web1.example.com',
    ohai_time => 1700000001, updated_at => $p->{items}[1]{updated_at} }, '  each with its policy, group, revision and attributes';
like $p->{items}[1]{updated_at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, '  and when it was last saved';
is_deeply $p->{items}[0], { name => 'bare', updated_at => $p->{items}[0]{updated_at} }, '  a node without them: its name and time';
my @names = map { $_->{name} } @{ $p->{items} };
while ($p->{next_page_token} ne '') {
    $p = $s->must('next', 'GET', "$base/nodes?page_size=10&page_token=$p->{next_page_token}");
    push @names, map { $_->{name} } @{ $p->{items} };
}
is_deeply \@names, ['bare', map { sprintf 'web%02d', $_ } 1 .. 25], 'the pages to the end: every node once, in order';

$p = $s->must('sorted', 'GET', "$base/nodes?sort=-policy_group&page_size=3");
is_deeply [ map { $_->{name} } @{ $p->{items} } ], [qw(web25 web23 web22)], 'sort=-policy_group: prod first, the names descending too';
$p = $s->must('sorted', 'GET', "$base/nodes?sort=policy_group&page_size=3");
is_deeply [ map { $_->{name} } @{ $p->{items} } ], [qw(bare web03 web06)], 'sort=policy_group: none first, then dev, by name';
$p = $s->must('sorted', 'GET', "$base/nodes?sort=-name&page_size=2");
is_deeply [ map { $_->{name} } @{ $p->{items} } ], [qw(web25 web24)], 'sort=-name';
$p = $s->must('dev', 'GET', "$base/nodes?sort=name&filter=policy_group==dev");
is $p->{total}, 8, 'filter=policy_group==dev: its total';
is_deeply [ map { $_->{revision_id} } @{ $p->{items} } ], [('r-dev') x 8], '  each with the revision dev points at';
$p = $s->must('glob', 'GET', "$base/nodes?sort=name&filter=name==web1*");
is_deeply [ map { $_->{name} } @{ $p->{items} } ], [map { "web1$_" } 0 .. 9], "filter=name==web1*: a '*' matches any text";
$p = $s->must('not', 'GET', "$base/nodes?sort=name&filter=policy_group!=prod;name!=web0*");
is_deeply [ map { $_->{name} } @{ $p->{items} } ], [qw(bare web12 web15 web18 web21 web24)], '  != and ; (a node without a group is not prod)';
$p = $s->must('literal', 'GET', "$base/nodes?sort=name&filter=name==web_1");
is $p->{total}, 0, "  '_' is a character, not a wildcard";

my $chef = $s->must('chef', 'GET', "$base/nodes");
is scalar(keys %$chef), 26, "without page parameters: Chef's {name: uri}";
$chef = $s->must('chef', 'GET', "$base/nodes?filter=policy_group==dev");
is_deeply [ sort keys %$chef ], [ map { $_->{name} } @{ $s->must('dev', 'GET', "$base/nodes?sort=name&filter=policy_group==dev")->{items} } ],
    '  filter alone narrows it';
like $chef->{web03}, qr{/organizations/\Q$org\E/nodes/web03$}, '  to the node\'s URL';

for ([ 'sort=platform', qr/sort must be name, policy_group/ ], [ 'page_size=x', qr/page_size/ ],
     [ 'page_token=-1', qr/page_token/ ], [ 'filter=platform==debian', qr/filter.*platform/ ],
     [ 'filter=name', qr/filter/ ]) {
    my ($r, $j) = $s->call('GET', "$base/nodes?$_->[0]");
    is $r->{status}, 400, "$_->[0]: 400";
    like(JSON::PP->new->encode($j), $_->[1], '  naming what is wrong');
}

my $out = do {
    local @ENV{qw(PURSER_URL PURSER_CA PURSER_ORG PURSER_TOKEN)} =
        map { $s->env($_) } qw(PURSER_URL PURSER_CA PURSER_ORG PURSER_ADMIN_TOKEN);
    open my $ctl, '-|', PurserStack::build() . '/purserctl', qw(get nodes --sort name --page-size 5 --filter policy_group==dev)
        or die "purserctl: $!";
    local $/;
    <$ctl> // '';
};
like $out, qr/^NAME\s+POLICY\s+GROUP\s+REVISION\s+PLATFORM\s+ADDRESS/m, 'purserctl get nodes --sort: the summaries as a table';
like $out, qr/^web03\s+web\s+dev\s+r-dev\s+debian\s+10\.0\.0\.3/m, '  a node\'s row';

$s->stop;
done_testing;

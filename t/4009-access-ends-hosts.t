#!/usr/bin/perl
# 4009: access ends on every host within a second, not after cache.auth_ttl. Two purser hosts
# on one database (the second shares the first's keyring and admin, as tools/hosts' do), each
# with cache.auth_ttl 60 s and two workers: a credential, membership or grant changed through
# one host, or with the purser command, is seen by both workers of the other host within a
# second (each reads the newest row of auth_changes at most once a second and empties its
# cache when it moved). Without that, the other host would go on answering from its cache
# for the full minute.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Time::HiRes qw(sleep time);
use PurserStack;

my $one = PurserStack->new(workers => 2, auth_ttl => 60);
my $two = PurserStack->new(workers => 2, auth_ttl => 60,
    db_socket => $one->dir . '/run/mariadb.sock',
    db_password_file => $one->dir . '/secrets/db-password', secrets_from => $one->dir);
my $org = $one->env('PURSER_ORG');
my $in_org = "/organizations/$org";
my $purser = PurserStack::build() . '/purser';
sub msg { PurserStack::error_message(@_) }

# The distinct answers ("status message") of four requests at once to a host, so that both of
# its workers most likely serve one.
sub burst {
    my ($host, $path, %auth) = @_;
    return PurserStack::burst(sub {
        my ($r, $d) = $host->call('GET', $path, undef, %auth);
        return "$r->{status} " . (msg($d) // '');
    });
}

# What every worker of host answers for path a little over a second after a change made at
# `since` (two bursts, their distinct answers).
sub after_a_second {
    my ($host, $path, $since, %auth) = @_;
    my $left = $since + 1.1 - time;
    sleep $left if $left > 0;
    my %seen = map { $_ => 1 } map { split / \| / } burst($host, $path, %auth), burst($host, $path, %auth);
    return join ' | ', sort keys %seen;
}

sub changes { $one->sql('SELECT COUNT(*) FROM auth_changes') }

# ---- a token revoked through the other host ----
$one->must('user dave', 'POST', '/users', { username => 'dave', email => 'dave@example.com' });
$one->must('dave in the org', 'POST', "$in_org/users", { username => 'dave', roles => ['reader'] });
my $made = $one->must('dave token', 'POST', '/users/dave/tokens', { description => 'dave' });
my %dave = (authorization => "Bearer $made->{token}");
is burst($two, $in_org, %dave), '200 ', "dave's token, made on host one, reads the org on host two";
is burst($two, $in_org, %dave), '200 ', '  again (both its workers hold it now)';

my $before = changes();
my ($r, $d) = $one->call('DELETE', "/users/dave/tokens/$made->{id}");
is $r->{status}, 204, 'the token is revoked through host one';
cmp_ok changes(), '>', $before, '  which notes a change of access in the database';
is after_a_second($two, $in_org, time, %dave), '401 invalid token',
    '  host two refuses it in every worker within a second, not its cache.auth_ttl of 60 s';

# ---- a membership removed through the other host ----
my $made2 = $one->must('dave token 2', 'POST', '/users/dave/tokens', { description => 'dave 2' });
my %dave2 = (authorization => "Bearer $made2->{token}");
is burst($two, $in_org, %dave2), '200 ', "dave's second token reads the org on host two";
($r) = $one->call('DELETE', "$in_org/users/dave");
is $r->{status}, 200, 'dave is removed from the org through host one';
like after_a_second($two, $in_org, time, %dave2), qr/^403 [^|]*read_organization[^|]*$/,
    '  host two refuses him there in every worker within a second, naming the action';

# ---- a grant made with the purser command (no host made it) ----
$one->must('user erin', 'POST', '/users', { username => 'erin', email => 'erin@example.com' });
my $erin = $one->must('erin token', 'POST', '/users/erin/tokens', {});
my %erin = (authorization => "Bearer $erin->{token}");
my $refused = burst($two, $in_org, %erin);
like $refused, qr/^403 [^|]*$/, 'erin, in no org, is refused the org on host two (and cached)';
$before = changes();
my $out = `'$purser' -c '@{[ $one->env('PURSER_CONFIG') ]}' add-member '$org' erin reader 2>&1`;
is $?, 0, 'purser add-member gives her the reader role' or diag $out;
my $granted_at = time;
cmp_ok changes(), '>', $before, '  and notes the change in the database';
is after_a_second($two, $in_org, $granted_at, %erin), '200 ',
    '  host two lets her read the org in every worker within a second';
($r) = $one->call('GET', $in_org, undef, %erin);
is $r->{status}, 200, '  as host one does';

# a command that changes no access notes nothing
$before = changes();
$out = `'$purser' -c '@{[ $one->env('PURSER_CONFIG') ]}' gc-events 2>&1`;
is $?, 0, 'purser gc-events runs' or diag $out;
is changes(), $before, '  and notes no change of access';
$out = `'$purser' -c '@{[ $one->env('PURSER_CONFIG') ]}' migrate now 2>&1`;
is $? >> 8, 2, 'purser migrate refuses an argument it does not take';
like $out, qr/usage: purser migrate/, '  with its usage';

# ---- only the newest notes are kept ----
for (1 .. 110) { $one->call('POST', '/users/erin/tokens', { description => "n$_" }) }
cmp_ok changes(), '<=', 200, 'after 110 more changes, at most 200 notes are kept';
cmp_ok changes(), '>', 0, '  and the newest stays';

PurserStack::finish();

#!/usr/bin/perl
# 7009: the admin pages' organization switcher on a server of many organizations (issue 50
# item 5), in Debian's chromium (t/browser/switcher.mjs): from the sign-in on, the pages ask
# GET /organizations only for a page (page_size), never for Chef's whole map; the switcher
# lists the first 100 by name, the current one among them, and then "All organizations…",
# which opens the organizations' list. purserctl reads them a page at a time too (login's
# check, get organizations).
use strict;
use warnings;
use utf8;
binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use File::Path qw(make_path remove_tree);
use POSIX ();
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my @kids; # 120 organizations, from 4 writers (each makes its validator's key)
for my $w (0 .. 3) {
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        for my $i (grep { $_ % 4 == $w } 1 .. 120) {
            my ($r) = $s->api('POST', '/organizations', { name => sprintf('zz-many-%03d', $i) });
            POSIX::_exit(1) unless $r->{status} == 201;
        }
        POSIX::_exit(0);
    }
    push @kids, $pid;
}
for (@kids) { waitpid $_, 0; BAIL_OUT('an organization was not made') if $? }
my (undef, $all) = $s->api('GET', '/organizations');
my @names = sort keys %$all;
is scalar @names, 121, '121 organizations';

my $out = PurserStack::build() . '/test-output/7009-admin-switcher';
remove_tree($out);
make_path($out);
my %seen = PurserStack::browser_run('switcher', { url => $s->url, org => $org, admin => $s->env('PURSER_ADMIN_TOKEN'), out => $out });
diag $seen{error} if $seen{error};
my @asked = @{ $seen{asked} // [] };
ok @asked, 'the pages asked GET /organizations: ' . join(' ', map { "'$_'" } @asked);
is_deeply [ grep { $_ !~ /[?&]page_size=\d+/ } @asked ], [], '  always for a page (page_size), never the whole map';
my @options = @{ $seen{options} // [] };
my @listed = map { $_->[0] } grep { length $_->[0] } @options;
is scalar @listed, 100, 'the switcher lists 100 organizations';
is_deeply \@listed, [ @names[0 .. 99] ], '  the first 100 by name';
ok((grep { $_->[0] eq $org && $_->[2] } @options), '  the current one among them, selected');
is_deeply $options[-1], ['', 'All organizations…', JSON::PP::false], '  then "All organizations…"';
is $seen{'after all'}, '#/orgs', '  which opens the organizations\' list';
is_deeply $seen{problems} // [], [], 'no console error';

# purserctl
my $ctl = PurserStack::build() . '/purserctl';
my $access = $s->dir . '/log/nginx-access.log';
my $before = -s $access;
{
    local $ENV{PURSER_CTL_CONFIG} = $s->dir . '/ctl-config.yaml';
    my $login = `'$ctl' login --url '${\ $s->url}' --ca '${\ $s->env('PURSER_CA')}' --token '${\ $s->env('PURSER_ADMIN_TOKEN')}' 2>&1`;
    is $?, 0, 'purserctl login, no organization' or diag $login;
    my $json = `'$ctl' get organizations -o json 2>&1`;
    my $got = eval { decode_json($json) };
    is_deeply [ sort map { $_->{metadata}{name} } @{ $got->{items} // [] } ], \@names,
        'purserctl get organizations: every one of the 121' or diag substr($json, 0, 400);
}
open my $fh, '<', $access or die "$access: $!";
seek $fh, $before, 0;
my @lines = grep { m{"GET /organizations[ ?]} } <$fh>;
ok @lines >= 2, 'purserctl asked GET /organizations ' . scalar(@lines) . ' times';
is_deeply [ grep { !m{"GET /organizations\?(?:[^ "]*&)?page_size=\d+} } @lines ], [], '  each time for a page';

PurserStack::finish();

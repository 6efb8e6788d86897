# 9004: workers are replaced after fcgi.max_requests without a gap: a worker taking its last
# request tells the master, which starts the replacement while the old one finishes; each
# worker's limit is drawn between four fifths of max_requests and max_requests, so workers
# do not all retire together; nothing is refused meanwhile.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $max = 10;
my $s = PurserStack->new(workers => 2, max_requests => $max);
my $token = $s->env('PURSER_ADMIN_TOKEN');
my $ok = 0;
my $n = 120;
for (1 .. $n) {
    my ($r) = $s->api('GET', '/organizations/' . $s->env('PURSER_ORG'));
    $ok++ if $r->{status} == 200;
}
is $ok, $n, "$n requests through many worker generations, all answered";

my @lines = map { eval { JSON::PP->new->decode($_) } // () } $s->log_lines('purser-fcgi.log');
my @retired = grep { ($_->{msg} // '') =~ /serving its last request; replacement started/ } @lines;
ok @retired >= $n / $max - 2, scalar(@retired) . ' workers announced their last request, and were replaced then';
ok !grep({ ($_->{msg} // '') =~ /worker died/ } @lines), 'no worker is reported dead';
my %served;
$served{ $_->{pid} }++ for grep { defined $_->{status} && ($_->{path} // '') =~ m{^/organizations/} } @lines;
ok keys(%served) >= $n / $max, scalar(keys %served) . ' worker processes served the requests';
my @too_many = grep { $served{$_} > $max } keys %served;
is_deeply \@too_many, [], "none served more than max_requests ($max)";
my %counts = map { $_ => 1 } values %served;
ok keys(%counts) > 1 || keys(%served) < 3, 'the workers did not all retire after the same count (' . join(',', sort { $a <=> $b } values %served) . ')';

PurserStack::finish();

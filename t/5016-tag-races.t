#!/usr/bin/perl
# 5016: tags POSTed to one revision at once (issue 50). An existing tag is replaced, as Deckhand
# does (its update of an existing tag): every POST answers 201 with the tag as that POST wrote
# it, the last one's data stays, and a POST that changes nothing records no event.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $s = PurserStack->new(workers => 4);
my $org = $s->env('PURSER_ORG');
my $docs = "/organizations/$org/api/v1.0";
my $token = $s->env('PURSER_ADMIN_TOKEN');
my $doc = "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: one\n"
    . "  layeringDefinition: {abstract: false, layer: site}\n  storagePolicy: cleartext\ndata: {a: 1}\n";
my $rev = $s->yaml_call('PUT', "$docs/buckets/b/documents", $doc)->[0]{status}{revision};
ok $rev, "a revision to tag ($rev)";

# n POSTs of tag at once, the i-th with data(i): [status, answer] of each, in order
sub at_once {
    my ($n, $tag, $data) = @_;
    my @pids;
    for my $i (0 .. $n - 1) {
        my $pid = fork // die;
        if (!$pid) {
            my $r = $s->request('POST', "$docs/revisions/$rev/tags/$tag", { headers => {
                authorization => "Bearer $token", 'content-type' => 'application/x-yaml',
                accept => 'application/json' }, content => $data->($i) });
            open my $fh, '>', "$s->{dir}/tag-$i" or die;
            print $fh "$r->{status}\n$r->{content}";
            close $fh;
            POSIX::_exit(0);
        }
        push @pids, $pid;
    }
    waitpid $_, 0 for @pids;
    return map {
        open my $fh, '<', "$s->{dir}/tag-$_" or die;
        my ($status, $body) = split /\n/, do { local $/; <$fh> }, 2;
        [ $status, eval { JSON::PP->new->decode($body) } ]
    } 0 .. $n - 1;
}
use POSIX ();
sub tag_events {
    my ($tag) = @_;
    my ($r, $d) = $s->call('GET', "/organizations/$org/events?since=0&kinds=tag&page_size=1000");
    return scalar grep { $_->{name} eq "$rev/$tag" } @{ $d->{events} };
}

for my $round (1 .. 3) {
    my @same = at_once(16, "same$round", sub { "note: one\n" });
    is_deeply [ map { $_->[0] } @same ], [ (201) x 16 ], "round $round: 16 identical POSTs at once: 201 each";
    is_deeply [ map { $_->[1] } @same ], [ ({ "same$round" => { note => 'one' } }) x 16 ], '  with the same tag';
    is tag_events("same$round"), 1, '  and one event: the others changed nothing';

    my @own = at_once(16, "own$round", sub { "n: $_[0]\n" });
    is_deeply [ map { $_->[0] } @own ], [ (201) x 16 ], "round $round: 16 POSTs of different data at once: 201 each";
    is_deeply [ map { $_->[1] } @own ], [ map { { "own$round" => { n => $_ } } } 0 .. 15 ],
        '  each answering the tag as it wrote it';
    my ($r, $d) = $s->call('GET', "$docs/revisions/$rev/tags/own$round");
    ok defined $d->{"own$round"}{n} && $d->{"own$round"}{n} =~ /^\d+$/, "  one POST's data stays ($d->{\"own$round\"}{n})";
}

PurserStack::finish();

#!/usr/bin/perl
# 5014: cache.rendered_bytes bounds the rendered text a worker keeps, whatever the number of
# revisions: a revision whose rendered text is larger than the bound alone is rendered on each
# read and evicts nothing; smaller ones are kept (their hits counted in /metrics). One worker,
# so that every read meets the same cache.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use PurserStack;
use Test::More;

my $s = PurserStack->new(workers => 1, cache_rendered_bytes => 1048576, max_body => 8 << 20);

sub doc {
    my ($name, $data) = @_;
    return "---\nschema: example/Blob/v1\nmetadata:\n  schema: metadata/Document/v1\n"
        . "  name: $name\n  layeringDefinition: {abstract: false, layer: site}\ndata: $data\n";
}
sub metric {
    my ($name) = @_;
    my $r = $s->request('GET', '/metrics');
    return $r->{content} =~ /^\Q$name\E\{cache="rendered"\} (\S+)$/m ? $1 : 0;
}
sub rendered {
    my ($rev) = @_;
    my ($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev/rendered-documents");
    return ($r->{status}, scalar @$d, length $r->{content});
}

my $policy = "---\nschema: deckhand/LayeringPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n"
    . "  name: layering-policy\ndata:\n  layerOrder: [site]\n";
my ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/small/documents', $policy . doc('small', '{a: 1}'));
is $r->{status}, 200, 'a small revision';
my $small = $d->[0]{status}{revision};
my $blob = 'x' x 1000;
($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/big/documents',
    join('', map { doc("big-$_", "{blob: $blob}") } 1 .. 1200));
is $r->{status}, 200, 'a revision of 1,200 documents of 1 KB each';
my $big = $d->[0]{status}{revision};

my @first = rendered($small);
is $first[0], 200, 'the small revision rendered';
my $hits = metric('purser_cache_hits_total');
is_deeply [ rendered($small) ], \@first, '  and again, the same answer';
is metric('purser_cache_hits_total'), $hits + 1, '  from the cache';

my $misses = metric('purser_cache_misses_total');
my @one = rendered($big);
is $one[0], 200, 'the big revision rendered';
cmp_ok $one[2], '>', 1048576, "  its rendered text ($one[2] bytes) past cache.rendered_bytes";
is $one[1], 1202, '  all of its documents';
is_deeply [ rendered($big) ], \@one, '  and again, the same answer';
cmp_ok metric('purser_cache_misses_total'), '>=', $misses + 2, '  rendered each time: not kept';
is metric('purser_cache_hits_total'), $hits + 1, '  no hit';
is_deeply [ rendered($small) ], \@first, 'the small revision still answers the same';
is metric('purser_cache_hits_total'), $hits + 2, '  from the cache: the big one evicted nothing';

PurserStack::finish();

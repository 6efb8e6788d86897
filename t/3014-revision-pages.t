#!/usr/bin/perl
# 3014: the document revisions and a revision's documents as pages (issue 38 item 2). GET
# revisions with page_size or filter= (tag, bucket, text; '*' any text) answers a page with
# next_page_token and total, sorted by id or createdAt either way; GET revisions/{id}/documents
# and rendered-documents with page_size, page_token or filter= (name, schema, layer, bucket,
# text) answer one page of the documents (Deckhand's list), its total in X-Total-Count and the
# next page's token in X-Next-Page-Token. Pages partition the whole list (nothing repeated or
# skipped) in every sort; bad page_size, page_token and filter are 400 naming them; without the
# new parameters every answer is the one it was (Deckhand's); encrypted documents stay redacted;
# purserctl follows the pages.
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
my $docs = "/organizations/$org/api/v1.0";
my $json = JSON::PP->new->canonical;

sub doc {
    my ($schema, $name, $layer, $n, $extra) = @_;
    return "---\nschema: $schema\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . "  layeringDefinition:\n    abstract: false\n    layer: $layer\n" . ($extra // '')
        . "data:\n  n: $n\n";
}
my $policy = "---\nschema: deckhand/LayeringPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n"
    . "  name: layering-policy\ndata:\n  layerOrder:\n    - global\n    - site\n";
# bucket alpha: the policy and 25 things (site); bucket beta: 10 others (global) and a secret
my $alpha = $policy . join '', map { doc('example/Thing/v1', sprintf('thing-%02d', $_), 'site', $_) } 1 .. 25;
my $beta = join('', map { doc('example/Other/v1', sprintf('other-%02d', $_), 'global', $_) } 1 .. 10)
    . "---\nschema: deckhand/Passphrase/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: secret-1\n"
    . "  storagePolicy: encrypted\n  layeringDefinition:\n    abstract: false\n    layer: site\ndata: hunter2-secret\n";
$s->yaml_call('PUT', "$docs/buckets/alpha/documents", $alpha);
my $w = $s->yaml_call('PUT', "$docs/buckets/beta/documents", $beta);
my $rev = $w->[0]{status}{revision};
ok $rev, "the site written: revision $rev (37 documents)";
# 12 more revisions: 6 of bucket gamma, 6 of alpha again; tags on some
for my $i (1 .. 12) {
    my $bucket = $i <= 6 ? 'gamma' : 'alpha';
    my $body = $bucket eq 'alpha' ? $alpha . doc('example/Thing/v1', "extra-$i", 'site', $i)
                                  : doc('example/Other/v1', "gamma-$i", 'global', $i);
    my $r = $s->yaml_call('PUT', "$docs/buckets/$bucket/documents", $body);
    my $id = $r->[0]{status}{revision};
    $s->must('tag', 'POST', "$docs/revisions/$id/tags/" . ($i % 3 ? "release-$i" : "nightly-$i")) if $i % 2;
}

# ---- the revisions ----
my ($r, $all) = $s->call('GET', "$docs/revisions");
is $r->{status}, 200, 'GET revisions: 200';
my @ids = map { $_->{id} } @{ $all->{results} };
is scalar @ids, 14, '  14 revisions';
ok !exists $all->{total} && !exists $all->{next_page_token}, '  without the new parameters: Deckhand\'s list, no total or token';
is_deeply [ sort keys %$all ], [qw(count next prev results)], '  {count, next, prev, results}';

my $pages = sub {
    my ($query) = @_;
    my (@got, @totals, $token, $n);
    do {
        my $path = "$docs/revisions?$query" . (defined $token ? "&page_token=$token" : '');
        my ($res, $page) = $s->call('GET', $path);
        die "GET $path: $res->{status} $res->{content}" unless $res->{status} == 200;
        push @got, map { $_->{id} } @{ $page->{results} };
        push @totals, $page->{total};
        $token = $page->{next_page_token};
        die 'runaway' if ++$n > 50;
    } while ($token ne '');
    return (\@got, \@totals);
};
my ($got, $totals) = $pages->('page_size=4');
is_deeply $got, \@ids, 'page_size=4: the pages to the end give every revision once, in order';
is_deeply $totals, [ (14) x 4 ], '  each page says the total (14), 4 pages';
($got) = $pages->('page_size=5&sort=id&order=desc');
is_deeply $got, [ reverse @ids ], 'sort=id&order=desc: every revision once, newest first';
($got) = $pages->('page_size=3&sort=createdAt&order=desc');
is_deeply $got, [ reverse @ids ], 'sort=createdAt&order=desc: the same';
my $one = $s->must('page', 'GET', "$docs/revisions?page_size=2");
is_deeply [ map { $_->{id} } @{ $one->{results} } ], [ @ids[0, 1] ], 'a page\'s results are Deckhand\'s revisions';
ok exists $one->{results}[0]{validationPolicies} && exists $one->{results}[0]{buckets}, '  with buckets and validation policies';
is $one->{count}, 2, '  count: the page\'s';

# (a revision holds the buckets written before it: gamma from the third on)
my %has_gamma = map { $_->{id} => 1 } grep { grep { $_ eq 'gamma' } @{ $_->{buckets} } } @{ $all->{results} };
is scalar(keys %has_gamma), 12, '(12 revisions hold bucket gamma)';
($got, $totals) = $pages->('page_size=5&filter=' . uri('bucket==gamma'));
is_deeply [ sort { $a <=> $b } @$got ], [ sort { $a <=> $b } keys %has_gamma ], 'filter=bucket==gamma: the revisions that hold gamma, each once';
is $totals->[0], 12, '  total 12';
($got, $totals) = $pages->('filter=' . uri('tag==release-*'));
is $totals->[0], 4, 'filter=tag==release-*: a wildcard, 4 revisions';
($got) = $pages->('filter=' . uri('tag!=release-*'));
is scalar @$got, 10, 'filter=tag!=release-*: the 10 others';
($got) = $pages->('filter=' . uri('text==*ightly*'));
is scalar @$got, 2, 'filter=text==*ightly*: a tag or a bucket holds it (2 nightly tags)';
($got) = $pages->('filter=' . uri('text==gam*'));
is scalar @$got, 12, 'filter=text==gam*: a bucket';
($got) = $pages->('filter=' . uri('bucket==gamma;tag==nightly-*;text==*-9'));
is_deeply $got, [ $ids[10] ], 'conditions AND-ed: gamma, a nightly tag, and -9 (nightly-9\'s revision)';
($got) = $pages->('filter=' . uri('bucket==100%'));
is scalar @$got, 0, 'a % in a value is taken literally';
$one = $s->must('page', 'GET', "$docs/revisions?limit=3");
ok exists $one->{next_page_token} && !exists $one->{total}, 'limit (as before): keyset pages without a total';

for my $bad (['page_size=ten', 'page_size'], ['page_size=5&limit=5', 'page_size'],
             ['filter=' . uri('colour==red'), 'filter'], ['filter=bucket', 'filter'],
             ['page_size=2&page_token=zz', 'page_token'], ['page_size=2&sort=name', 'sort']) {
    my ($res, $d) = $s->call('GET', "$docs/revisions?$bad->[0]");
    is $res->{status}, 400, "revisions?$bad->[0]: 400";
    like PurserStack::error_message($d), qr/\Q$bad->[1]\E/, "  names $bad->[1]";
}

# ---- a revision's documents ----
my $documents = sub {
    my ($what, $query) = @_;
    my $path = "$docs/revisions/$rev/$what" . (length $query ? "?$query" : '');
    my $res = $s->request('GET', $path, { headers => { authorization => 'Bearer ' . $s->env('PURSER_ADMIN_TOKEN'),
        accept => 'application/json' } });
    die "GET $path: $res->{status} $res->{content}" unless $res->{status} == 200;
    return ($res, JSON::PP->new->decode($res->{content}));
};
my $names = sub { [ map { "$_->{schema} $_->{metadata}{name}" } @{ $_[0] } ] };
my $doc_pages = sub {
    my ($what, $query) = @_;
    my (@got, @totals, $token, $n);
    while (1) {
        my ($res, $list) = $documents->($what, $query . (defined $token ? "&page_token=$token" : ''));
        push @got, @{ $names->($list) };
        push @totals, $res->{headers}{'x-total-count'};
        $token = $res->{headers}{'x-next-page-token'};
        last unless defined $token;
        die 'runaway' if ++$n > 60;
    }
    return (\@got, \@totals);
};
for my $what ('documents', 'rendered-documents') {
    my ($res, $whole) = $documents->($what, '');
    ok !exists $res->{headers}{'x-total-count'}, "$what without the new parameters: no page headers";
    my $every = $names->($whole);
    ok @$every >= 36, "  every document (" . scalar(@$every) . ")";
    my ($yres) = $s->yaml('GET', "$docs/revisions/$rev/$what");
    ok !exists $yres->{headers}{'x-total-count'}, '  (as YAML too)';

    my ($pages_got, $pages_totals) = $doc_pages->($what, 'page_size=7');
    is_deeply $pages_got, $every, "  page_size=7: the pages give every document once, in the stored order";
    is_deeply [ grep { $_ != @$every } @$pages_totals ], [], '  X-Total-Count on each page: ' . scalar(@$every);
    is scalar @$pages_totals, int((@$every + 6) / 7), '  as many pages as it takes';
    for my $sort (['sort=metadata.name', sub { $a->[1] cmp $b->[1] }],
                  ['sort=metadata.name&order=desc', sub { $b->[1] cmp $a->[1] }],
                  ['sort=schema&sort=metadata.name', sub { $a->[0] cmp $b->[0] || $a->[1] cmp $b->[1] }],
                  ['sort=data.n&order=desc', undef], ['sort=status.bucket&order=desc', undef],
                  ['sort=metadata.layeringDefinition.layer', undef]) { # (ties: in the stored order)
        my ($got_sorted) = $doc_pages->($what, "page_size=6&$sort->[0]");
        my (undef, $unpaged) = $documents->($what, $sort->[0]);
        is_deeply $got_sorted, $names->($unpaged), "  $sort->[0]: the pages are the unpaged list's, in its order";
        if ($sort->[1]) {
            my $cmp = $sort->[1];
            is_deeply $got_sorted, [ map { join ' ', @$_ } sort $cmp map { [ split / / ] } @$every ], '    sorted so';
        }
    }
    my ($fres, $filtered) = $documents->($what, 'page_size=4&filter=' . uri('name==thing-1*'));
    is $fres->{headers}{'x-total-count'}, 10, "  filter=name==thing-1*: 10 (thing-10..19)";
    is_deeply [ map { $_->{metadata}{name} } @$filtered ], [ map { "thing-1$_" } 0 .. 3 ], '    the first 4 of them';
    is $fres->{headers}{'x-next-page-token'}, '4', '    X-Next-Page-Token: where the next page starts';
    ($fres) = $documents->($what, 'page_size=4&page_token=8&filter=' . uri('name==thing-1*'));
    ok !defined $fres->{headers}{'x-next-page-token'}, '    the last page has no X-Next-Page-Token';
    ($fres) = $documents->($what, 'filter=' . uri('text==example/Other*'));
    is $fres->{headers}{'x-total-count'}, 10, '  filter=text==example/Other*: a schema (10)';
    ($fres) = $documents->($what, 'filter=' . uri('bucket==beta;name!=secret-*'));
    is $fres->{headers}{'x-total-count'}, 10, '  filter=bucket==beta;name!=secret-*: 10';
    ($fres) = $documents->($what, 'filter=' . uri('layer==global'));
    is $fres->{headers}{'x-total-count'}, 10, '  filter=layer==global: 10';
    (undef, $filtered) = $documents->($what, 'page_size=5&schema=example/Other&metadata.name=other-03');
    is_deeply $names->($filtered), ['example/Other/v1 other-03'], '  Deckhand\'s filters narrow a page too';
    (undef, $filtered) = $documents->($what, 'page_size=100&cleartext-secrets=false&filter=' . uri('name==secret-1'));
    is_deeply [ map { $_->{data} } @$filtered ], ['[redacted]'], '  cleartext-secrets=false: the secret redacted on its page';
    for my $at (0, 20, 35) { # (a page of the documents as they lie: rendered ones read from the cache alone)
        my ($pres, $paged) = $documents->($what, "page_size=3&page_token=$at&cleartext-secrets=false");
        is_deeply $names->($paged), [ map { $every->[$_] } grep { $_ < @$every } $at .. $at + 2 ], "  page_token=$at, redacted: the same documents";
        ok !grep({ ($_->{metadata}{storagePolicy} // '') eq 'encrypted' && $_->{data} ne '[redacted]' } @$paged)
            && index($pres->{content}, 'hunter2') < 0, '    no secret on it';
    }
    my ($yaml_res, $yaml_docs) = $s->yaml('GET', "$docs/revisions/$rev/$what?page_size=3&page_token=3");
    is scalar @$yaml_docs, 3, '  as YAML: a page of 3 documents';
    is $yaml_res->{headers}{'x-total-count'}, scalar(@$every), '    with X-Total-Count';
    is $yaml_res->{headers}{'x-next-page-token'}, '6', '    and X-Next-Page-Token';
    is_deeply [ map { "$_->{schema} $_->{metadata}{name}" } @$yaml_docs ], [ @$every[3 .. 5] ], '    the 4th to 6th';
    for my $bad (['page_size=x', 'page_size'], ['page_token=-1', 'page_token'], ['limit=3&page_size=3', 'page_size'],
                 ['filter=' . uri('data==1'), 'filter'], ['filter=name', 'filter']) {
        my $path = "$docs/revisions/$rev/$what?$bad->[0]";
        my ($bres, $d) = $s->call('GET', $path);
        is $bres->{status}, 400, "  $bad->[0]: 400";
        like PurserStack::error_message($d), qr/\Q$bad->[1]\E/, "    names $bad->[1]";
    }
}

# ---- purserctl follows the pages ----
my $ctl = PurserStack::build() . '/purserctl';
{
    local $ENV{PURSER_URL} = $s->url;
    local $ENV{PURSER_TOKEN} = $s->env('PURSER_ADMIN_TOKEN');
    local $ENV{PURSER_ORG} = $org;
    local $ENV{PURSER_CA} = $s->env('PURSER_CA');
    local $ENV{PURSER_CTL_CONFIG} = $s->dir . '/ctl-config';
    my $out = `'$ctl' get revisions --page-size 4 --filter bucket==gamma -o json 2>&1`;
    my $d = eval { $json->decode($out) } // {};
    is_deeply [ sort { $a <=> $b } map { $_->{id} } @{ $d->{results} // [] } ], [ sort { $a <=> $b } keys %has_gamma ],
        'purserctl get revisions --page-size 4 --filter bucket==gamma: every page followed' or diag $out;
    $out = `'$ctl' get documents --revision $rev --page-size 5 --filter name==thing-* -o json 2>&1`;
    $d = eval { $json->decode($out) } // [];
    is scalar(@$d), 25, 'purserctl get documents --page-size 5 --filter name==thing-*: the 25 things, page by page' or diag $out;
    $out = `'$ctl' get documents --revision $rev --page-size 4 --filter name==other-* -o yaml 2>&1`;
    my $y = eval { YAML::XS::Load($out) } // [];
    is_deeply [ map { $_->{metadata}{name} } @$y ], [ map { sprintf 'other-%02d', $_ } 1 .. 10 ], '  -o yaml: the 10 others, every page' or diag $out;
}

sub uri { my ($t) = @_; $t =~ s/([^A-Za-z0-9_.~*-])/sprintf '%%%02X', ord $1/ge; $t }

$s->stop;
done_testing;

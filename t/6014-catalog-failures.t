#!/usr/bin/perl
# 6014: a revision that cannot be rendered never takes a catalog down (issue 49). A catalog
# whose newest revision fails (a substitution whose source is missing, Deckhand's 409; documents
# that need a LayeringPolicy none gives) is fetched as before, at its last good rendering, and
# the failure is visible: the cluster's status.catalog names the revision and the error, an
# event of kind "catalog" says it changed, and purser_catalog_render_failures_total counts it.
# A later revision that renders is the next commit and clears the error. A catalog that is not
# there (an unknown cluster, an unmanaged one) is a 404 with a message, not nginx's bare 500.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $url = $s->url;
my $admin = $s->env('PURSER_ADMIN_TOKEN');
my $work = tempdir('purser-catalog-XXXXXX', TMPDIR => 1, CLEANUP => 1);
$s->git_env($work);

sub git { PurserStack::git(@_) }
sub commits { my ($dir) = @_; my (undef, $out) = git('', '-C', $dir, 'rev-list', '--count', 'HEAD'); return $out =~ /(\d+)/ ? $1 : 0 }
sub put_bucket {
    my ($o, $bucket, $yaml) = @_;
    return $s->request('PUT', "/organizations/$o/api/v1.0/buckets/$bucket/documents", { headers => {
        authorization => "Bearer $admin", 'content-type' => 'application/x-yaml' }, content => $yaml })->{status};
}
sub doc {
    my ($name, $data, $extra) = @_;
    return "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . "  layeringDefinition: {abstract: false, layer: site}\n" . ($extra // '') . "data: $data\n";
}
my $layering = "---\nschema: deckhand/LayeringPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n"
    . "  name: layering\ndata:\n  layerOrder: [global, site]\n";
my $missing_source = "  substitutions:\n    - dest: {path: .password}\n      src: {schema: example/Secret/v1, name: nowhere, path: .}\n";
sub cluster { my ($o, $name) = @_; my (undef, $c) = $s->call('GET', "/organizations/$o/clusters/$name"); return $c }
sub events_of { my ($o, $kind) = @_; my (undef, $d) = $s->call('GET', "/organizations/$o/events?since=0&kinds=$kind"); return @{ $d->{events} // [] } }
sub failures { my $m = $s->request('GET', '/metrics')->{content}; return $m =~ /^purser_catalog_render_failures_total (\d+)$/m ? $1 : undef }
sub revision_id { my ($o) = @_; my (undef, $d) = $s->call('GET', "/organizations/$o/api/v1.0/revisions", undef, accept => 'application/json'); return $d->{results}[-1]{id} }

# ---- a catalog with a good rendering, then a revision that does not render ----
is put_bucket($org, 'site', $layering . doc('web', '{color: blue}')), 200, 'revision 1: renders';
my ($r, $d) = $s->call('POST', "/organizations/$org/clusters", { metadata => { name => 'edge' }, spec => { git_repo => { type => 'auto' } } });
is $r->{status}, 201, 'cluster c-edge with a catalog';
my $cat = "$work/edge";
my ($st, $out) = git($admin, 'clone', "$url/git/$org/catalogs/c-edge.git", $cat);
is $st, 0, 'its catalog cloned' or diag $out;
is commits($cat), 1, '  one commit';
my $good = do { local $/; open my $fh, '<', "$cat/documents/site/example/Kind/v1/web.yaml" or die; <$fh> };
is failures(), 0, 'no render failure counted yet';

is put_bucket($org, 'site', $layering . doc('web', '{color: green}', $missing_source)), 200,
    'revision 2: a substitution whose source is missing (it does not render)';
my $bad = revision_id($org);
($r) = $s->call('GET', "/organizations/$org/api/v1.0/revisions/$bad/rendered-documents", undef, accept => 'application/json');
is $r->{status}, 409, '  (rendered-documents answers 409)';
($st, $out) = git($admin, '-C', $cat, 'pull', '-q', '--ff-only');
is $st, 0, 'the catalog is still fetched' or diag $out;
is commits($cat), 1, '  at its last good rendering (no commit)';
is do { local $/; open my $fh, '<', "$cat/documents/site/example/Kind/v1/web.yaml" or die; <$fh> }, $good, '  the document as it last rendered';
my $c = cluster($org, 'c-edge');
is $c->{status}{catalog}{error}{revision}, $bad, 'the cluster\'s status.catalog names the revision that failed';
like $c->{status}{catalog}{error}{message} // '', qr/nowhere|source|substitution/i, '  and why';
is $c->{status}{catalog}{revision}, 1, '  and the revision the catalog serves';
my @ev = events_of($org, 'catalog');
is scalar(@ev), 1, 'one event of kind catalog';
is $ev[0]{name} // '', 'c-edge', '  naming the cluster';
is failures(), 1, 'purser_catalog_render_failures_total counts it';
($st, $out) = git($admin, '-C', $cat, 'pull', '-q', '--ff-only');
is $st, 0, 'fetched again' or diag $out;
is scalar(events_of($org, 'catalog')), 1, '  no second event for the same revision';
is failures(), 1, '  nor a second count';

# ---- a later revision that renders: a commit, and the error cleared ----
is put_bucket($org, 'site', $layering . doc('web', '{color: red}')), 200, 'revision 3: renders again';
($st, $out) = git($admin, '-C', $cat, 'pull', '-q', '--ff-only');
is $st, 0, 'fetched' or diag $out;
is commits($cat), 2, '  one new commit';
like do { local $/; open my $fh, '<', "$cat/documents/site/example/Kind/v1/web.yaml" or die; <$fh> }, qr/color: red/, '  with the new rendering';
$c = cluster($org, 'c-edge');
ok !exists $c->{status}{catalog}{error}, 'status.catalog has no error any more';
is $c->{status}{catalog}{revision}, revision_id($org), '  and names the revision it serves';
is scalar(events_of($org, 'catalog')), 2, '  (an event for that too)';

# ---- a catalog whose only revision needs a LayeringPolicy there is none of ----
($r) = $s->api('POST', '/organizations', { name => 'bare', full_name => 'Bare' });
is $r->{status}, 201, 'organization bare';
is put_bucket('bare', 'site', doc('web', '{color: blue}') . doc('db', '{size: 1}')), 200,
    'its revision 1: layered documents without a LayeringPolicy';
($r) = $s->call('GET', '/organizations/bare/api/v1.0/revisions/1/rendered-documents', undef, accept => 'application/json');
isnt $r->{status}, 200, "  (rendered-documents refuses it: $r->{status})";
($r) = $s->call('POST', '/organizations/bare/clusters', { metadata => { name => 'fresh' }, spec => { git_repo => { type => 'auto' } } });
($st, $out) = git($admin, 'ls-remote', "$url/git/bare/catalogs/c-fresh.git");
is $st, 0, 'its catalog is fetched (empty: nothing rendered yet)' or diag $out;
$c = cluster('bare', 'c-fresh');
is $c->{status}{catalog}{error}{revision}, 1, '  the status names revision 1 as failed';
is failures(), 2, '  and the metric counts it';

# ---- no catalog there: 404 with a message ----
($r) = $s->call('POST', "/organizations/$org/clusters", { metadata => { name => 'own' }, spec => { git_repo => { type => 'unmanaged', url => 'ssh://git@example.com/own.git' } } });
for my $case (["$org/catalogs/c-nowhere", 'an unknown cluster'], ["$org/catalogs/c-own", 'an unmanaged cluster'], ['no-such-org', 'an unknown organization']) {
    my ($path, $what) = @$case;
    $r = $s->request('GET', "/git/$path.git/info/refs?service=git-upload-pack", { headers => { authorization => "Bearer $admin" } });
    is $r->{status}, 404, "$what: 404";
    my $e = eval { JSON::PP->new->decode($r->{content}) } // {};
    like $e->{error}{message} // '', qr/no such repository/, '  with a message';
}
($st, $out) = git($admin, 'ls-remote', "$url/git/$org/catalogs/c-own.git");
like $out, qr/404|not found/i, 'git ls-remote of the unmanaged cluster\'s catalog: not found';

PurserStack::finish();

#!/usr/bin/perl
# 6001: the resource convention on clusters (issue 12): create (201, 409), get (404 naming kind
# and name, ETag, 304, HEAD), PUT and PATCH conditional on the revision (412 missing or stale),
# merge-patch null removing a fact, DELETE (204, 412 with a stale If-Match), strict validation
# naming the field, ids ("c-" added, generated, DNS labels), lists with keyset pages, label
# selectors, filters and sort, and a corrupted row logged and skipped.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org/clusters";
my $json = JSON::PP->new->canonical;

sub call { $s->call(@_) }
sub err { PurserStack::error_message(@_) }
sub count { my $n = $s->sql("SELECT COUNT(*) FROM resources WHERE kind = 'cluster'"); chomp $n; $n }

# ---- create ----
my ($r, $d) = call('POST', $base, { metadata => { name => 'alpha', labels => { env => 'prod', tier => 'web' },
    annotations => { 'example.com/owner' => 'team a' }, description => 'the first' },
    spec => { display_name => 'Alpha', facts => { region => 'eu', cloud => 'x' }, git_repo => { url => 'ssh://git@example.com/alpha.git', type => 'auto' } } });
is $r->{status}, 201, 'POST creates a cluster: 201';
is $d->{metadata}{name}, 'c-alpha', '  its id has c- added';
is $d->{kind}, 'Cluster', '  kind';
is $d->{version}, 'v1', '  version';
is_deeply $d->{metadata}{labels}, { env => 'prod', tier => 'web' }, '  labels kept';
is $d->{spec}{facts}{region}, 'eu', '  spec kept';
like $d->{metadata}{revision}, qr/^[0-9a-f]{16}$/, '  an opaque revision';
is $r->{headers}{etag}, qq("$d->{metadata}{revision}"), '  sent as the ETag';
like $d->{metadata}{created_at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, '  created_at in UTC';
like $d->{bootstrap_token}{token}, qr/^[0-9a-f]{64}$/, '  the bootstrap token, shown once';
like $d->{bootstrap_token}{install_url}, qr{/install/bootstrap\.json\?token=[0-9a-f]{64}$}, '  with its install URL';
ok $d->{status}{bootstrap_token}{expires_at}, '  status says when it expires';
my $token = $d->{bootstrap_token}{token};
my $rev1 = $d->{metadata}{revision};
my $stored = $s->sql("SELECT CONCAT(labels, annotations, description, spec, status) FROM resources WHERE name = 'c-alpha'");
like $stored, qr/bootstrap_token/, 'the stored cluster holds its token state';
unlike $stored, qr/\Q$token\E/, '  but not the token (only its hash, elsewhere)';

($r, $d) = call('POST', $base, { metadata => { name => 'c-alpha' }, spec => {} });
is $r->{status}, 409, 'the same id again: 409';
like err($d), qr/Cluster 'c-alpha' already exists/, '  naming kind and id';
($r, $d) = call('POST', $base, { spec => { display_name => 'Generated' } });
is $r->{status}, 201, 'no id: one is generated';
like $d->{metadata}{name}, qr/^c-[a-z]+-[a-z]+-\d{4}$/, "  readable: $d->{metadata}{name}";
call('DELETE', "$base/$d->{metadata}{name}");

my $n = count();
for my $bad (
    [{ spec => { facts => { cores => 8 } } }, qr/spec\.facts\.cores must be a string/],
    [{ spec => { color => 'red' } }, qr/spec\.color: unknown field/],
    [{ metadata => { name => 'Has Caps' } }, qr/metadata\.name: 'c-Has Caps' is not a cluster id/],
    [{ metadata => { name => 'x' x 70 } }, qr/metadata\.name/],
    [{ metadata => { name => 'ok1', labels => { 'bad key!' => 'v' } } }, qr/metadata\.labels: key 'bad key!'/],
    [{ metadata => { name => 'ok2', labels => { env => 'not valid' } } }, qr/metadata\.labels: value 'not valid'/],
    [{ metadata => { name => 'ok3', owner => 'me' } }, qr/metadata\.owner: unknown field/],
    [{ metadata => { name => 'ok4' }, spec => { git_repo => { type => 'magic' } } }, qr/spec\.git_repo\.type must be auto or unmanaged/],
    [{ metadata => { name => 'ok5' }, kind => 'Node' }, qr/kind must be 'Cluster'/],
    [{ metadata => { name => 'ok6' }, extra => 1 }, qr/extra: unknown field/],
) {
    ($r, $d) = call('POST', $base, $bad->[0]);
    is $r->{status}, 400, 'invalid: 400 ' . $json->encode($bad->[0]);
    like err($d), $bad->[1], '  naming the field: ' . err($d);
}
is count(), $n, 'and nothing was stored';

# ---- get, ETag, 304, HEAD ----
($r, $d) = call('GET', "$base/c-alpha");
is $r->{status}, 200, 'GET: 200';
is $d->{metadata}{revision}, $rev1, '  the same revision';
ok !exists $d->{bootstrap_token}, '  the token is not shown again';
($r) = call('GET', "$base/c-alpha", undef, 'if-none-match' => qq("$rev1"));
is $r->{status}, 304, 'If-None-Match with the ETag: 304';
($r) = call('GET', "$base/c-alpha", undef, 'if-none-match' => '"other"');
is $r->{status}, 200, 'another ETag: 200';
($r) = call('HEAD', "$base/c-alpha");
is $r->{status}, 200, 'HEAD: 200';
is $r->{content} // '', '', '  without a body';
is $r->{headers}{etag}, qq("$rev1"), '  with the ETag';
{ # HEAD on every GET route of the API (as /docs lists them) answers as GET, without a body
    my (undef, $docs) = call('GET', '/docs');
    my ($routes, $wrong) = (0, 0);
    for my $path (sort keys %{ $docs->{paths} }) {
        next unless $docs->{paths}{$path}{get};
        (my $url = $path) =~ s/\{org\}/$org/g;
        $url =~ s/\{(\w+)\}/x/g;
        my ($g) = call('GET', $url);
        my ($h) = call('HEAD', $url);
        $routes++;
        unless ($h->{status} == $g->{status} && ($h->{content} // '') eq ''
                && ($h->{headers}{'content-type'} // '') eq ($g->{headers}{'content-type'} // '')) {
            $wrong++;
            diag "HEAD $url: $h->{status}, GET $g->{status}";
        }
    }
    ok $routes > 40, "HEAD tried on $routes GET routes";
    is $wrong, 0, '  each answers as GET does, without a body';
}
($r, $d) = call('GET', "$base/c-nothing");
is $r->{status}, 404, 'an unknown cluster: 404';
is err($d), "Cluster 'c-nothing' was not found", '  naming the kind and the id, no table';

# ---- PUT ----
my $put = { metadata => { name => 'c-alpha', labels => { env => 'prod' } }, spec => { display_name => 'Alpha 2', facts => { region => 'us' } } };
($r, $d) = call('PUT', "$base/c-alpha", $put);
is $r->{status}, 412, 'PUT without a revision: 412';
is $d->{error}{code}, 'compare_failed', '  compare_failed';
like err($d), qr/re-read it and retry/, '  saying to re-read and retry';
($r, $d) = call('PUT', "$base/c-alpha", $put, 'if-match' => '"0000000000000000"');
is $r->{status}, 412, 'PUT with a stale If-Match: 412';
($r, $d) = call('PUT', "$base/c-alpha", { %$put, metadata => { %{ $put->{metadata} }, revision => $rev1 } });
is $r->{status}, 200, 'PUT with metadata.revision: 200';
is $d->{spec}{display_name}, 'Alpha 2', '  spec replaced';
is_deeply $d->{metadata}{labels}, { env => 'prod' }, '  labels replaced';
is_deeply $d->{metadata}{annotations}, {}, '  annotations replaced (none given)';
isnt $d->{metadata}{revision}, $rev1, '  a new revision';
my $rev2 = $d->{metadata}{revision};
($r, $d) = call('PUT', "$base/c-alpha", { %$put, metadata => { %{ $put->{metadata} }, revision => $rev1 } });
is $r->{status}, 412, 'the old revision again: 412';
($r, $d) = call('PUT', "$base/c-alpha", { metadata => { name => 'c-other' }, spec => {} }, 'if-match' => qq("$rev2"));
is $r->{status}, 400, 'PUT that renames: 400';
($r, $d) = call('PUT', "$base/c-alpha", { spec => { facts => { n => 1 } } }, 'if-match' => qq("$rev2"));
is $r->{status}, 400, 'PUT with an invalid spec: 400';
($r, $d) = call('GET', "$base/c-alpha");
is $d->{metadata}{revision}, $rev2, '  and the cluster is unchanged';

# ---- PATCH ----
($r, $d) = call('PATCH', "$base/c-alpha", { spec => { facts => { zone => 'a' } } }, 'content-type' => 'application/merge-patch+json');
is $r->{status}, 412, 'PATCH without a revision: 412';
($r, $d) = call('PATCH', "$base/c-alpha", { spec => { facts => { zone => 'a' } } }, 'if-match' => qq("$rev2"),
                'content-type' => 'application/json-patch+json');
is $r->{status}, 415, 'PATCH as a JSON Patch (RFC 6902): 415';
like err($d), qr/merge-patch\+json.*application\/json/, '  naming the media types it takes';
($r, $d) = call('PATCH', "$base/c-alpha", { spec => { facts => { zone => 'a' } } }, 'content-type' => 'application/merge-patch+json', 'if-match' => qq("$rev2"));
is $r->{status}, 200, 'PATCH: 200';
is_deeply $d->{spec}{facts}, { region => 'us', zone => 'a' }, '  merged';
($r, $d) = call('PATCH', "$base/c-alpha", { metadata => { annotations => { via => 'json' } } }, 'if-match' => qq("$d->{metadata}{revision}"));
is $r->{status}, 200, 'PATCH as plain JSON: the same merge patch, 200';
is_deeply $d->{metadata}{annotations}, { via => 'json' }, '  merged';
my $rev3 = $d->{metadata}{revision};
($r, $d) = call('PATCH', "$base/c-alpha", { metadata => { revision => $rev3, labels => { team => 'b' } }, spec => { facts => { region => undef } } }, 'content-type' => 'application/merge-patch+json');
is $r->{status}, 200, 'PATCH with metadata.revision and a null: 200';
is_deeply $d->{spec}{facts}, { zone => 'a' }, '  null removed the fact (RFC 7396)';
is_deeply $d->{metadata}{labels}, { env => 'prod', team => 'b' }, '  labels merged';
($r, $d) = call('PATCH', "$base/c-alpha", { spec => { facts => { zone => 5 } } }, 'content-type' => 'application/merge-patch+json', 'if-match' => qq("$d->{metadata}{revision}"));
is $r->{status}, 400, 'a PATCH that makes an invalid spec: 400';
like err($d), qr/spec\.facts\.zone must be a string/, '  naming the field';

# ---- DELETE ----
call('POST', $base, { metadata => { name => 'doomed' } });
($r, $d) = call('DELETE', "$base/c-doomed", undef, 'if-match' => '"0000000000000000"');
is $r->{status}, 412, 'DELETE with a stale If-Match: 412';
($r) = call('DELETE', "$base/c-doomed");
is $r->{status}, 204, 'DELETE: 204';
($r) = call('GET', "$base/c-doomed");
is $r->{status}, 404, '  gone';
is $s->sql("SELECT COUNT(*) FROM bootstrap_tokens b LEFT JOIN resources r ON r.id = b.resource_id WHERE r.id IS NULL") + 0, 0, '  with its bootstrap token';

# ---- lists ----
for my $i (1 .. 30) {
    my $env = $i % 3 == 0 ? 'prod' : $i % 3 == 1 ? 'dev' : 'test';
    my %labels = (env => $env, ($i % 2 ? (zone => 'a') : (zone => 'b')), ($i % 5 == 0 ? (legacy => 'yes') : ()));
    ($r) = call('POST', $base, { metadata => { name => sprintf('l%02d', $i), labels => \%labels },
        spec => { display_name => sprintf('N%02d', 31 - $i), facts => { region => $i <= 10 ? 'eu' : 'us' } } });
    die "create l$i: $r->{status} $r->{content}" unless $r->{status} == 201;
}
sub all_pages {
    my ($query, $size) = @_;
    my (@names, $token, $pages);
    do {
        my $q = $query . "&page_size=$size" . (defined $token && length $token ? "&page_token=$token" : '');
        my ($res, $data) = call('GET', "$base?$q");
        die "list $q: $res->{status} $res->{content}" unless $res->{status} == 200;
        push @names, map { $_->{metadata}{name} } @{ $data->{items} };
        $token = $data->{next_page_token};
        $pages++;
    } while (length $token && $pages < 100);
    return @names;
}
my @all = all_pages('', 7);
is_deeply [ grep { /^c-l/ } @all ], [ map { sprintf('c-l%02d', $_) } 1 .. 30 ], 'pages of 7 walk every cluster in name order';
my %seen = map { $_ => 1 } @all;
is scalar(@all), scalar(keys %seen), '  without a duplicate';
my @prod = all_pages('labels=env%3Dprod', 4);
is_deeply \@prod, [ 'c-alpha', map { sprintf('c-l%02d', $_) } grep { $_ % 3 == 0 } 1 .. 30 ], 'labels=env=prod (walked by the label index)';
my @sel = all_pages('labels=' . uri('env in (dev,test),zone!=a,!legacy'), 5);
is_deeply \@sel, [ map { sprintf('c-l%02d', $_) } grep { $_ % 3 != 0 && $_ % 2 == 0 && $_ % 5 != 0 } 1 .. 30 ], 'env in (dev,test),zone!=a,!legacy';
my @legacy = all_pages('labels=legacy', 100);
is scalar(@legacy), 6, 'an existence selector: legacy';
my @notin = all_pages('labels=' . uri('env notin (prod),legacy'), 100);
is_deeply \@notin, [ map { sprintf('c-l%02d', $_) } grep { $_ % 5 == 0 && $_ % 3 != 0 } 1 .. 30 ], 'env notin (prod),legacy';
my @eu = all_pages('filter=' . uri('facts.region==eu'), 3);
is_deeply \@eu, [ map { sprintf('c-l%02d', $_) } 1 .. 10 ], 'filter=facts.region==eu';
my @dn = all_pages('filter=' . uri('display_name==N05'), 3);
is_deeply \@dn, ['c-l26'], 'filter=display_name==N05';
# a name pattern, as the other lists take one (* any text; _ and % only themselves)
my @glob = all_pages('filter=' . uri('name==c-l2*'), 4);
is_deeply \@glob, [ map { sprintf('c-l%02d', $_) } 20 .. 29 ], 'filter=name==c-l2*: the names that begin so, paged';
my @inner = all_pages('filter=' . uri('name==*l1*'), 100);
is_deeply \@inner, [ map { sprintf('c-l%02d', $_) } 10 .. 19 ], 'filter=name==*l1*: the names that hold it';
my @not = grep { /^c-l/ } all_pages('filter=' . uri('name!=c-l*'), 100);
is_deeply \@not, [], 'filter=name!=c-l*: none of them';
is_deeply [ all_pages('filter=' . uri('name==c-l_1*'), 100) ], [], "  in a pattern '_' is itself, not any character";
is_deeply [ all_pages('filter=' . uri('name==c-l%*'), 100) ], [], "  and '%' too";
my @by_title = grep { /^c-l/ } all_pages('sort=display_name', 6);
is_deeply \@by_title, [ map { sprintf('c-l%02d', $_) } reverse 1 .. 30 ], 'sort=display_name, paged';
my @desc = grep { /^c-l/ } all_pages('sort=-name', 8);
is_deeply \@desc, [ map { sprintf('c-l%02d', $_) } reverse 1 .. 30 ], 'sort=-name, paged';
my @created = grep { /^c-l/ } all_pages('sort=created_at', 9);
is_deeply \@created, [ map { sprintf('c-l%02d', $_) } 1 .. 30 ], 'sort=created_at, paged';
($r, $d) = call('GET', "$base?page_size=5000");
is scalar(@{ $d->{items} }), scalar(@all), 'page_size over 1000 is clamped, not refused';
for my $bad (['labels=' . uri('env in (a'), qr/labels: /], ['labels=' . uri('Bad Key=x'), qr/labels/],
             ['filter=' . uri('color==red'), qr/filter: 'color' is not a field of Cluster/],
             ['filter=nonsense', qr/filter: 'nonsense' is not field==value/],
             ['sort=size', qr/sort must be name, created_at or display_name/],
             ['page_size=ten', qr/page_size must be an integer/],
             ['page_token=garbage', qr/page_token is not one this server made/]) {
    ($r, $d) = call('GET', "$base?$bad->[0]");
    is $r->{status}, 400, "$bad->[0]: 400";
    like err($d), $bad->[1], '  naming the parameter: ' . err($d);
}
($r, $d) = call('GET', "$base?page_size=5&sort=name");
($r, $d) = call('GET', "$base?page_size=5&sort=-name&page_token=$d->{next_page_token}");
is $r->{status}, 400, 'a page token used with another sort: 400';

# A row damaged in the database: logged and skipped, the page still answers.
$s->sql("UPDATE resources SET spec = '{not json' WHERE name = 'c-l05'");
my @damaged = all_pages('', 7);
ok !(grep { $_ eq 'c-l05' } @damaged), 'a damaged row is skipped';
is scalar(@damaged), scalar(@all) - 1, '  and every other cluster is listed';
ok grep({ /no longer decodes/ && /c-l05/ } $s->log_lines('purser-fcgi.log')), '  and it is logged with its name';
($r, $d) = call('PUT', "$base/c-l05", { metadata => { name => 'c-l05' }, spec => {} }, 'if-match' => '*');
is $r->{status}, 200, '  PUT (If-Match: *) repairs it';

sub uri { my ($t) = @_; $t =~ s/([^A-Za-z0-9_.~-])/sprintf('%%%02X', ord $1)/ge; $t }

PurserStack::finish();

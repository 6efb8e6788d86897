#!/usr/bin/perl
# 6012: the document history and the clusters' catalogs as git repositories (issue 37), with
# real git over the stack's nginx (git-http-backend through fcgiwrap, purser's check first):
# the log matches the revisions (author, time, buckets, one commit each), a diff between two
# tags matches the API's diff, a new revision arrives as exactly one new commit on fetch, a
# reader without access is refused (401 without a credential, 403 without
# read_cleartext_document; a token as a basic password is taken), a push is refused, a rebuild (and a repository lost and written
# again) gives the same ids, an encrypted document's value is in no object of any repository
# (only its marker is), a purge and a rollback are commits; a cluster clones its own catalog
# and not another's, its catalog commits only when what it renders changes, the install
# manifest and git_repo.url carry the catalog's URL; an organization's repositories go with it,
# and one made again under its name starts afresh.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use JSON::PP;
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $url = $s->url;
my $admin = $s->env('PURSER_ADMIN_TOKEN');
my $work = tempdir('purser-git-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $secret = 'hunter2-' . join '', map { ('a' .. 'z')[rand 26] } 1 .. 24;
$s->git_env($work);

sub git { PurserStack::git(@_) }
sub git_in { my ($dir, $token, @args) = @_; return git($token, '-C', $dir, @args) }
sub lines { my ($status, $out) = @_; return grep { length } split /\n/, $out }

sub put_bucket {
    my ($bucket, $yaml, $token) = @_;
    my $r = $s->request('PUT', "/api/v1.0/buckets/$bucket/documents", { headers => {
        authorization => 'Bearer ' . ($token // $admin), 'content-type' => 'application/x-yaml' },
        content => $yaml });
    return $r->{status};
}
sub doc {
    my ($schema, $name, $layer, $data, %more) = @_;
    my $policy = $more{encrypted} ? "  storagePolicy: encrypted\n" : '';
    my $labels = $more{labels} ? "  labels: {" . join(', ', map { "$_: $more{labels}{$_}" } sort keys %{ $more{labels} }) . "}\n" : '';
    return "---\nschema: $schema\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . "  layeringDefinition: {abstract: false, layer: $layer}\n$policy$labels" . "data: $data\n";
}
my $layering = "---\nschema: deckhand/LayeringPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n"
    . "  name: layering\ndata:\n  layerOrder: [global, site]\n";
sub revisions { my (undef, $d) = $s->call('GET', '/api/v1.0/revisions', undef, accept => 'application/json'); return $d->{results} }

# ---- a history: three revisions, an encrypted document, tags ----
is put_bucket('global', $layering . doc('example/Kind/v1', 'alpha', 'global', '{x: 1}')
    . doc('example/Kind/v1', 'alpha', 'site', '{x: 2}')), 200, 'revision 1: a bucket with two layers of one name';
is put_bucket('site', doc('deckhand/Passphrase/v1', 'db-password', 'site', $secret, encrypted => 1)
    . doc('example/Kind/v1', 'beta', 'site', '{y: 1}', labels => { app => 'web' })), 200,
    'revision 2: a second bucket with an encrypted document';
is put_bucket('global', $layering . doc('example/Kind/v1', 'alpha', 'global', '{x: 10}')
    . doc('example/Kind/v1', 'alpha', 'site', '{x: 2}')), 200, 'revision 3: one document changed';
my ($r) = $s->call('POST', '/api/v1.0/revisions/1/tags/first', undef, accept => 'application/json');
is $r->{status}, 201, 'tag first on revision 1';
($r) = $s->call('POST', '/api/v1.0/revisions/3/tags/v1.0', undef, accept => 'application/json');
is $r->{status}, 201, 'tag v1.0 on revision 3';

# ---- the access check as an API route (what nginx asks) ----
($r) = $s->call('GET', "/organizations/$org/git-access?service=git-upload-pack");
is $r->{status}, 204, 'GET git-access?service=git-upload-pack: 204 for the admin';
($r, my $d) = $s->call('GET', "/organizations/$org/git-access?service=git-receive-pack");
is $r->{status}, 403, 'service=git-receive-pack: 403';
like PurserStack::error_message($d), qr/read-only/, '  saying the repositories are read-only';
($r, $d) = $s->call('GET', "/organizations/$org/git-access?service=bogus");
is $r->{status}, 400, 'an unknown service: 400';
like PurserStack::error_message($d), qr/service/, '  naming it';
($r) = $s->call('GET', "/organizations/$org/git-access?service=git-upload-pack", undef, authorization => '');
is $r->{status}, 401, 'no credential: 401';

# ---- clone: the log matches the revisions ----
my $clone = "$work/history";
my ($st, $out) = git($admin, 'clone', "$url/git/$org.git", $clone);
is $st, 0, 'git clone of the organization\'s history' or diag $out;
my @log = lines(git_in($clone, '', 'log', '--reverse', '--format=%H|%an|%at|%s|%(trailers:key=Purser-Revision,valueonly,separator=)'));
my $revs = revisions();
is scalar @log, scalar @$revs, 'one commit per revision (' . scalar(@$revs) . ')';
my %tz_epoch;
for my $i (0 .. $#$revs) {
    my ($id, $author, $time, $subject, $trailer) = split /\|/, $log[$i] // '';
    my $rev = $revs->[$i];
    is $trailer, $rev->{id}, "commit $i records revision $rev->{id}";
    is $author, 'admin', '  authored by the revision\'s principal';
    my ($y, $mo, $dd, $h, $mi, $sec) = $rev->{createdAt} =~ /^(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)/;
    require Time::Local;
    is $time, Time::Local::timegm($sec, $mi, $h, $dd, $mo - 1, $y), '  at the revision\'s time';
    like $subject, qr/^Revision $rev->{id}: /, '  its subject names the revision';
}
like $log[1], qr/\|Revision 2: site\|/, 'revision 2\'s message names the bucket changed (site)';
like $log[2], qr/\|Revision 3: global\|/, 'revision 3\'s names global';
is join(',', lines(git_in($clone, '', 'tag', '-l'))), 'first,v1.0', 'Deckhand\'s tags are git tags';
my ($tag_rev) = lines(git_in($clone, '', 'log', '-1', '--format=%(trailers:key=Purser-Revision,valueonly,separator=)', 'v1.0'));
is $tag_rev, 3, '  v1.0 is revision 3\'s commit';

# the tree: one file per document as posted, by bucket, layer, schema and name
ok -f "$clone/global/deckhand/LayeringPolicy/v1/layering.yaml", 'a control document at <bucket>/<schema>/<name>.yaml';
ok -f "$clone/global/global/example/Kind/v1/alpha.yaml" && -f "$clone/global/site/example/Kind/v1/alpha.yaml",
    'two layers of one name: <bucket>/<layer>/<schema>/<name>.yaml each';
($r) = $s->request('GET', '/api/v1.0/revisions/3/documents?schema=example/Kind/v1&metadata.name=alpha&metadata.layeringDefinition.layer=global',
    { headers => { authorization => "Bearer $admin" } });
my $file = do { local $/; open my $fh, '<', "$clone/global/global/example/Kind/v1/alpha.yaml" or die; <$fh> };
my ($api_doc) = $r->{content} =~ /^---\n(.*?)status:\n/s;
is $file, $api_doc, 'the file is the document as the API sends it (its status aside)';
ok -f "$clone/site/site/deckhand/Passphrase/v1/db-password.encrypted", 'the encrypted document is a marker';
ok !-e "$clone/site/site/deckhand/Passphrase/v1/db-password.yaml", '  and no file of its content';

# ---- a diff between two tags matches the API's diff ----
my %top_first = map { $_ => 1 } lines(git_in($clone, '', 'ls-tree', '--name-only', 'first'));
my %top_last = map { $_ => 1 } lines(git_in($clone, '', 'ls-tree', '--name-only', 'v1.0'));
my %changed = map { (split m{/})[0] => 1 } lines(git_in($clone, '', 'diff', '--name-only', 'first', 'v1.0'));
my %from_git = map { $_ => !$top_first{$_} ? 'created' : !$top_last{$_} ? 'deleted' : $changed{$_} ? 'modified' : 'unmodified' }
    keys %top_first, keys %top_last;
($r, $d) = $s->call('GET', '/api/v1.0/revisions/1/diff/3', undef, accept => 'application/json');
my %api = %$d;
is_deeply \%from_git, \%api, 'git diff first v1.0, bucket by bucket, is the API\'s diff of revisions 1 and 3';
($st, $out) = git_in($clone, '', 'diff', 'first', 'v1.0', '--', 'global/global/example/Kind/v1/alpha.yaml');
like $out, qr/^-  x: 1$/m, 'the diff shows the old value';
like $out, qr/^\+  x: 10$/m, '  and the new';

# ---- a new revision arrives as exactly one new commit ----
my ($before) = lines(git_in($clone, '', 'rev-parse', 'origin/main'));
is put_bucket('site', doc('deckhand/Passphrase/v1', 'db-password', 'site', $secret, encrypted => 1)
    . doc('example/Kind/v1', 'beta', 'site', '{y: 2}', labels => { app => 'web' })), 200, 'revision 4';
($st, $out) = git_in($clone, $admin, 'fetch', 'origin');
is $st, 0, 'git fetch' or diag $out;
is join(',', lines(git_in($clone, '', 'rev-list', "$before..origin/main"))) =~ tr/,// + 1, 1, '  brings exactly one new commit';
my ($subject) = lines(git_in($clone, '', 'log', '-1', '--format=%s', 'origin/main'));
is $subject, 'Revision 4: site', '  revision 4\'s';
($st, $out) = git_in($clone, $admin, 'fetch', 'origin');
is join(',', lines(git_in($clone, '', 'rev-list', "$before..origin/main"))) =~ tr/,// + 1, 1, 'a second fetch brings nothing more';

# ---- who may read ----
($r, $d) = $s->api('POST', '/users', { username => 'nora', email => 'nora@example.com' });
($r, $d) = $s->api('POST', '/users/nora/tokens', { description => 'git' });
my $nora = $d->{token};
($st, $out) = git($nora, 'clone', "$url/git/$org.git", "$work/nora");
isnt $st, 0, 'a user who is not a member cannot clone';
like $out, qr/403/, '  answered 403';
($st, $out) = git('', 'ls-remote', "$url/git/$org.git");
isnt $st, 0, 'no credential: refused';
like $out, qr/401|could not read Username|Authentication failed/, '  as unauthenticated';
($r) = $s->api('POST', "/organizations/$org/users", { username => 'nora', roles => ['validator'] });
$s->wait_auth_cache;
($st, $out) = git($nora, 'ls-remote', "$url/git/$org.git");
isnt $st, 0, 'a member without read_cleartext_document (validator) cannot fetch';
($r) = $s->api('DELETE', "/organizations/$org/users/nora");
($r) = $s->api('POST', "/organizations/$org/users", { username => 'nora', roles => ['reader'] });
$s->wait_auth_cache;
($st, $out) = git($nora, 'ls-remote', "$url/git/$org.git");
is $st, 0, 'a reader can' or diag $out;
(my $basic_url = $url) =~ s{^https://}{https://git:$nora\@};
($st, $out) = git('', 'ls-remote', "$basic_url/git/$org.git");
is $st, 0, 'the token as a basic password (as Argo CD and Flux send it) is taken too' or diag $out;
(my $bad_url = $url) =~ s{^https://}{https://git:purser_not-a-token\@};
($st, $out) = git('', 'ls-remote', "$bad_url/git/$org.git");
isnt $st, 0, '  a wrong one is refused';
($st, $out) = git($admin, 'ls-remote', "$url/git/no-such-org.git");
isnt $st, 0, 'an organization that does not exist: refused';
($st, $out) = git($admin, 'ls-remote', "$url/git/$org.git/../x");
isnt $st, 0, 'a path that is not a repository: refused';

# ---- a push is refused ----
git_in($clone, '', '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '-q', '--allow-empty', '-m', 'not purser\'s');
($st, $out) = git_in($clone, $admin, 'push', 'origin', 'HEAD:main');
isnt $st, 0, 'git push is refused';
like $out, qr/403/, '  answered 403';
($st, $out) = git_in($clone, $admin, 'push', 'origin', 'HEAD:refs/heads/other');
isnt $st, 0, '  to a new branch too';
my ($server_head) = lines(git($admin, 'ls-remote', "$url/git/$org.git", 'refs/heads/main'));
my ($fetched) = lines(git_in($clone, '', 'rev-parse', 'origin/main'));
is +(split /\t/, $server_head)[0], $fetched, '  the server\'s branch is unchanged';

# ---- a rebuild gives identical ids ----
my $purser = PurserStack::build() . '/purser';
my $config = $s->dir . '/purser.yaml';
my $repo = $s->dir . "/git/$org.git";
my @refs_before = lines(git('', '--git-dir', $repo, 'show-ref'));
($st, $out) = (system("$purser -c $config git-rebuild $org > $work/rebuild.log 2>&1") >> 8, '');
is $st, 0, 'purser git-rebuild';
is_deeply [lines(git('', '--git-dir', $repo, 'show-ref'))], \@refs_before, '  the same branch and tags, the same ids';
system('rm', '-rf', $repo);
($st) = system("$purser -c $config git-sync $org > $work/sync.log 2>&1") >> 8;
is $st, 0, 'purser git-sync of a repository lost';
is_deeply [lines(git('', '--git-dir', $repo, 'show-ref'))], \@refs_before, '  writes it again with the same ids';
my $sync_out = do { local $/; open my $fh, '<', "$work/sync.log"; <$fh> };
like $sync_out, qr/4 commits written/, '  (4 commits)';
{ open my $fh, '>', "$repo/refs/heads/main" or die; print $fh "0123456789abcdef0123456789abcdef01234567\n"; }
($st, $out) = git($admin, 'ls-remote', "$url/git/$org.git");
is $st, 0, 'a branch damaged (it names no commit): the next fetch is served' or diag $out;
is_deeply [lines(git('', '--git-dir', $repo, 'show-ref'))], \@refs_before, '  the repository written again with the same ids';

# ---- a rollback and a purge are commits ----
($r) = $s->call('POST', '/api/v1.0/rollback/1', undef, accept => 'application/json');
is $r->{status}, 201, 'rollback to revision 1 (revision 5)';
($st, $out) = git_in($clone, $admin, 'fetch', 'origin');
my ($rollback_tree) = lines(git_in($clone, '', 'rev-parse', 'origin/main^{tree}'));
my ($first_tree) = lines(git_in($clone, '', 'rev-parse', 'first^{tree}'));
is $rollback_tree, $first_tree, '  its commit has revision 1\'s tree';
($r) = $s->call('DELETE', '/api/v1.0/revisions', undef, accept => 'application/json');
is $r->{status}, 204, 'purge every revision';
is put_bucket('global', $layering . doc('example/Kind/v1', 'gamma', 'global', '{z: 1}')), 200, 'a new revision 1';
($st, $out) = git_in($clone, $admin, 'fetch', 'origin');
my @after = lines(git_in($clone, '', 'log', '--format=%s', 'origin/main'));
is_deeply [@after[0 .. 2]], ['Revision 1: global', 'Purge: every revision deleted; the revisions that follow count from 1 again', 'Revision 5: global, site'],
    'the purge is a commit (with an empty tree) that the new revisions build on';
my ($purge_tree) = lines(git_in($clone, '', 'rev-parse', 'origin/main~1^{tree}'));
is $purge_tree, '4b825dc642cb6eb9a060e54bf8d69288fbee4904', '  the empty tree';
is join(',', lines(git_in($clone, '', 'log', '-1', '--format=%ct', 'origin/main~1'))),
    join(',', lines(git_in($clone, '', 'log', '-1', '--format=%ct', 'origin/main~2'))),
    '  at the time of the revision it follows (deterministic: another host writes the same)';
is join(',', lines(git_in($clone, $admin, 'ls-remote', '--tags', 'origin'))), '', '  the purged tags are gone';
@refs_before = lines(git('', '--git-dir', $repo, 'show-ref'));
system("$purser -c $config git-rebuild $org > $work/rebuild2.log 2>&1");
is_deeply [lines(git('', '--git-dir', $repo, 'show-ref', 'refs/heads/main'))], [grep { m{refs/heads/main} } @refs_before],
    'a rebuild after a purge gives the same ids (on the purge commit)';

# ---- catalogs ----
is put_bucket('site', doc('deckhand/Passphrase/v1', 'db-password', 'site', $secret, encrypted => 1)
    . doc('example/Kind/v1', 'beta', 'site', '{y: 3}', labels => { app => 'web' })
    . doc('example/Kind/v1', 'other', 'site', '{y: 4}')
    . doc('example/Manifest/v1', 'web-config', 'site', "\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: web, namespace: default}\n  data: {color: blue}", labels => { app => 'web' })), 200,
    'a site bucket with labelled documents and a Kubernetes object';
my %token;
for my $c (['one', { type => 'auto', select => { buckets => ['site'], labels => { app => 'web' } } }], ['two', { type => 'auto' }], ['three', { type => 'unmanaged', url => 'ssh://git@example.com/three.git' }]) {
    ($r, $d) = $s->call('POST', "/organizations/$org/clusters", { metadata => { name => $c->[0] }, spec => { git_repo => $c->[1] } });
    is $r->{status}, 201, "cluster $c->[0] registered";
    my $name = $d->{metadata}{name};
    if ($c->[1]{type} eq 'auto') {
        is $d->{spec}{git_repo}{url}, "$url/git/$org/catalogs/$name.git", '  its git_repo.url is the catalog\'s';
    } else {
        is $d->{spec}{git_repo}{url}, 'ssh://git@example.com/three.git', '  unmanaged: its own url kept';
    }
    my ($m, $manifest) = $s->call('GET', "/install/bootstrap.json?token=$d->{bootstrap_token}{token}", undef, authorization => '');
    is $manifest->{git_repo}{url}, $d->{spec}{git_repo}{url}, '  the install manifest carries it';
    $token{ $c->[0] } = $manifest->{token};
}
($r, $d) = $s->call('POST', "/organizations/$org/clusters", { metadata => { name => 'bad' }, spec => { git_repo => { type => 'auto', select => { bucket => ['x'] } } } });
is $r->{status}, 400, 'a selector with an unknown field: 400';
like PurserStack::error_message($d), qr/spec\.git_repo\.select\.bucket/, '  naming it';

my $cat = "$work/catalog-one";
($st, $out) = git($token{one}, 'clone', "$url/git/$org/catalogs/c-one.git", $cat);
is $st, 0, 'a cluster clones its own catalog with its own credential' or diag $out;
is join(',', sort map { s{^\Q$cat\E/}{}r } split /\n/, `find $cat -type f -not -path '*/.git/*'`),
    'documents/site/example/Kind/v1/beta.yaml,documents/site/example/Manifest/v1/web-config.yaml,manifests/site/example/Manifest/v1/web-config.yaml',
    '  the rendered documents its selector picks (bucket site, label app=web), a Kubernetes object\'s data in manifests/';
my $manifest = do { local $/; open my $fh, '<', "$cat/manifests/site/example/Manifest/v1/web-config.yaml" or die; <$fh> };
like $manifest, qr/^kind: ConfigMap$/m, '  the manifest is the object itself';
(my $argo_url = $url) =~ s{^https://}{https://argocd:$token{one}\@};
($st, $out) = git('', 'ls-remote', "$argo_url/git/$org/catalogs/c-one.git");
is $st, 0, '  also with its token as a basic password (as Argo CD sends it)' or diag $out;
($st, $out) = git($token{one}, 'ls-remote', "$url/git/$org/catalogs/c-two.git");
isnt $st, 0, 'and not another cluster\'s catalog';
like $out, qr/403/, '  answered 403';
($st, $out) = git($token{three}, 'ls-remote', "$url/git/$org/catalogs/c-three.git");
isnt $st, 0, 'an unmanaged cluster has no catalog here';
($r) = $s->call('GET', "/organizations/$org/clusters/c-one/git-access?service=git-upload-pack");
is $r->{status}, 204, 'GET .../clusters/{id}/git-access: 204 for the admin (who may read the cluster)';
($r) = $s->call('GET', "/organizations/$org/clusters/c-one/git-access?service=git-upload-pack", undef, authorization => "Bearer $token{two}");
is $r->{status}, 403, '  403 for another cluster\'s credential';
($r) = $s->call('GET', "/organizations/$org/clusters/c-three/git-access?service=git-upload-pack");
is $r->{status}, 404, '  404 for a cluster whose git_repo is not auto';
($st, $out) = git($nora, 'ls-remote', "$url/git/$org/catalogs/c-two.git");
is $st, 0, 'a reader of the clusters can fetch a catalog' or diag $out;
my $cat2 = "$work/catalog-two";
($st, $out) = git($token{two}, 'clone', "$url/git/$org/catalogs/c-two.git", $cat2);
ok -f "$cat2/documents/site/deckhand/Passphrase/v1/db-password.encrypted", 'an encrypted document in a catalog is a marker';
ok -f "$cat2/documents/global/example/Kind/v1/gamma.yaml", '  beside every bucket\'s documents (no selector)';

my @cat_log = lines(git_in($cat, '', 'log', '--format=%H'));
is put_bucket('global', $layering . doc('example/Kind/v1', 'gamma', 'global', '{z: 2}')), 200, 'a revision outside the selection';
($st, $out) = git_in($cat, $token{one}, 'pull', '-q', '--ff-only');
is scalar(lines(git_in($cat, '', 'log', '--format=%H'))), scalar @cat_log, '  no catalog commit';
is put_bucket('site', doc('deckhand/Passphrase/v1', 'db-password', 'site', $secret, encrypted => 1)
    . doc('example/Kind/v1', 'beta', 'site', '{y: 5}', labels => { app => 'web' })
    . doc('example/Kind/v1', 'other', 'site', '{y: 4}')
    . doc('example/Manifest/v1', 'web-config', 'site', "\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: web, namespace: default}\n  data: {color: green}", labels => { app => 'web' })), 200,
    'a revision that changes what it renders';
($st, $out) = git_in($cat, $token{one}, 'pull', '-q', '--ff-only');
is $st, 0, '  git pull' or diag $out;
is scalar(lines(git_in($cat, '', 'log', '--format=%H'))), @cat_log + 1, '  one catalog commit';
like do { local $/; open my $fh, '<', "$cat/manifests/site/example/Manifest/v1/web-config.yaml" or die; <$fh> }, qr/color: green/, '  with the new rendering';

# a selection changed is a commit at the same revision; a PUT without url gets it back
my %rev = map { (undef, my $c) = $s->call('GET', "/organizations/$org/clusters/$_"); ($_ => $c->{metadata}{revision}) } qw(c-one c-two);
($r, $d) = $s->call('PATCH', "/organizations/$org/clusters/c-one", { spec => { git_repo => { select => { labels => undef } } } },
    'content-type' => 'application/merge-patch+json', 'if-match' => qq("$rev{'c-one'}"));
is $r->{status}, 200, 'the cluster\'s selector widened (labels dropped)';
($st, $out) = git_in($cat, $token{one}, 'pull', '-q', '--ff-only');
is scalar(lines(git_in($cat, '', 'log', '--format=%H'))), @cat_log + 2, '  one more catalog commit';
ok -f "$cat/documents/site/example/Kind/v1/other.yaml", '  with the document the labels left out before';
($r, $d) = $s->call('PUT', "/organizations/$org/clusters/c-two", { metadata => { name => 'c-two' }, spec => { git_repo => { type => 'auto' } } },
    'if-match' => qq("$rev{'c-two'}"));
is $r->{status}, 200, 'c-two replaced without a url';
is $d->{spec}{git_repo}{url}, "$url/git/$org/catalogs/c-two.git", '  its git_repo.url is filled in again';

# ---- an organization or cluster deleted and made again under its name starts afresh ----
sub put_org_bucket {
    my ($o, $yaml) = @_;
    return $s->request('PUT', "/organizations/$o/api/v1.0/buckets/b/documents", { headers => {
        authorization => "Bearer $admin", 'content-type' => 'application/x-yaml' }, content => $yaml })->{status};
}
($r) = $s->api('POST', '/organizations', { name => 'temp', full_name => 'Temporary' });
is $r->{status}, 201, 'organization temp';
is put_org_bucket('temp', doc('example/Kind/v1', 'old-secret-plan', 'global', '{plan: 1}')), 200, '  a revision';
($st, $out) = git($admin, 'ls-remote', "$url/git/temp.git");
is $st, 0, '  its history fetched' or diag $out;
($r) = $s->api('DELETE', '/organizations/temp?force=true');
is $r->{status}, 200, 'organization temp deleted';
ok !-e $s->dir . '/git/temp.git', '  and its repository with it';
($r) = $s->api('POST', '/organizations', { name => 'temp', full_name => 'Temporary again' });
is $r->{status}, 201, 'and made again';
is put_org_bucket('temp', doc('example/Kind/v1', 'new', 'global', '{plan: 2}')), 200, '  a revision';
($st, $out) = git($admin, 'clone', "$url/git/temp.git", "$work/temp");
is $st, 0, '  cloned' or diag $out;
is scalar(lines(git_in("$work/temp", '', 'log', '--format=%s'))), 1, '  one commit: nothing of the old organization\'s';
is scalar(grep { /old-secret-plan/ } split /\n/, `git --git-dir='${\ $s->dir}/git/temp.git' cat-file --batch-all-objects --batch 2>&1`), 0,
    '  and none of its objects is left in the repository';

# ---- a role that reads clusters but not documents fetches no catalog (it holds documents) ----
{
    my $default = do { open my $fh, '<', PurserStack::root() . '/policies/default.yaml' or die; local $/; <$fh> };
    my $policy = $s->dir . '/policy-fleet.yaml';
    open my $fh, '>', $policy or die;
    print $fh $default, "  fleet:\n    description: lists the clusters\n    actions:\n      - read_organization\n      - read_cluster\n";
    close $fh;
    $s->use_policy_file($policy);
    my @old = $s->worker_pids;
    kill 'HUP', $s->master_pid;
    ok PurserStack::wait_for(5, sub { my %old = map { $_ => 1 } @old; my @now = $s->worker_pids; @now && !grep { $old{$_} } @now }),
        'reloaded with a role fleet: read_cluster without read_cleartext_document';
    $s->api('POST', '/users', { username => 'fay', email => 'fay@example.com' });
    my ($r2, $d2) = $s->api('POST', '/users/fay/tokens', {});
    my $fay = $d2->{token};
    $s->api('POST', "/organizations/$org/users", { username => 'fay', roles => ['fleet'] });
    ($r2) = $s->call('GET', "/organizations/$org/clusters/c-two", undef, authorization => "Bearer $fay");
    is $r2->{status}, 200, '  fay (fleet) reads the cluster';
    ($r2, $d2) = $s->call('GET', "/organizations/$org/clusters/c-two/git-access?service=git-upload-pack", undef, authorization => "Bearer $fay");
    is $r2->{status}, 403, '  but may not fetch its catalog';
    like PurserStack::error_message($d2), qr/read_cleartext_document/, '  saying which action she lacks';
    ($st, $out) = git($fay, 'ls-remote', "$url/git/$org/catalogs/c-two.git");
    isnt $st, 0, '  git ls-remote with her token is refused';
    ($st, $out) = git($nora, 'ls-remote', "$url/git/$org/catalogs/c-two.git");
    is $st, 0, '  while a reader still fetches it' or diag $out;
}

# ---- the encrypted value is in no object of any repository ----
my @repos = ((map { s{/objects$}{}r } split /\n/, `find ${\ $s->dir}/git -type d -name objects`), "$clone/.git", "$cat/.git", "$cat2/.git");
ok @repos >= 6, 'repositories to search: ' . scalar @repos;
my ($objects, $found) = PurserStack::git_objects_holding([$secret, 'hunter2'], @repos);
ok $objects > 20, "objects read ($objects)";
is $found, 0, 'the encrypted document\'s value is in none of them';

PurserStack::finish();

#!/usr/bin/perl
# 5015: secrets stay sealed through every rendering (issue 49). Sites made at random (chains of
# substitutions by path, src.pattern and dest.pattern, abstract parents encrypted or not, merge,
# replace and delete actions), the two leaks the issue found among them, are written as
# revisions of one bucket; then no value of an encrypted document ("S3CRET" in every one of
# them) is in any redacted output: rendered-documents?cleartext-secrets=false for the admin
# and for a reader without read_encrypted_document, the deepdiff between the revisions, a
# cluster's catalog fetched through git with the cluster's own credential and a reader's, and
# every object of every repository on disk. What did not come from a secret is still shown.
# A catalog written before the render's marks (its format record missing, a leaked file
# committed in it) is written again, history too, and no object of the old commits is left.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use JSON::PP;
use PurserStack;

my $s = PurserStack->new(workers => 1);
my $org = $s->env('PURSER_ORG');
my $url = $s->url;
my $admin = $s->env('PURSER_ADMIN_TOKEN');
my $work = tempdir('purser-marks-XXXXXX', TMPDIR => 1, CLEANUP => 1);
$s->git_env($work);

sub git { PurserStack::git(@_) }

# ---- a reader without read_encrypted_document, and a cluster whose catalog is the bucket ----
my (undef, $d) = $s->api('POST', '/users', { username => 'rita', email => 'rita@example.com' });
(undef, $d) = $s->api('POST', '/users/rita/tokens', { description => 'reads' });
my $rita = $d->{token};
my ($r) = $s->api('POST', "/organizations/$org/users", { username => 'rita', roles => ['reader'] });
is $r->{status}, 201, 'rita joins as a reader';
($r, $d) = $s->call('POST', "/organizations/$org/clusters",
    { metadata => { name => 'edge' }, spec => { git_repo => { type => 'auto', select => { buckets => ['site'] } } } });
is $r->{status}, 201, 'a cluster whose catalog is the site bucket';
my ($m, $manifest) = $s->call('GET', "/install/bootstrap.json?token=$d->{bootstrap_token}{token}", undef, authorization => '');
my $cluster = $manifest->{token};
ok $cluster, '  its own credential, redeemed';

# ---- the sites ----
my $seed = 49;
sub pick { my $n = shift; $seed = ($seed * 1103515245 + 12345) % 2**31; return int($seed / 65536) % $n }
my $layering = "---\nschema: deckhand/LayeringPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n"
    . "  name: layering\ndata:\n  layerOrder: [global, site]\n";
sub thing {
    my (%t) = @_;
    my $def = "{abstract: " . ($t{abstract} ? 'true' : 'false') . ", layer: $t{layer}"
        . ($t{parent} ? ", parentSelector: {name: $t{parent}}, actions: [$t{actions}]" : '') . '}';
    return "---\nschema: example/Thing/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: $t{name}\n"
        . "  storagePolicy: " . ($t{encrypted} ? 'encrypted' : 'cleartext') . "\n"
        . "  labels: {name: $t{name}}\n  layeringDefinition: $def\n"
        . ($t{subs} && @{ $t{subs} } ? "  substitutions:\n" . join('', map { "  - $_\n" } @{ $t{subs} }) : '')
        . "data: $t{data}\n";
}
sub data_of { my ($tag, $id) = @_; return "{k: $tag-$id-0, nested: {a: $tag-$id-1, c: $tag-$id-2, list: [$tag-$id-3, $tag-$id-4]}, url: 'scheme://PH\@$tag-$id-url'}" }
sub sub_of {
    my ($from, $src, $dest, %more) = @_;
    return "{src: {schema: example/Thing/v1, name: $from, path: '$src'"
        . ($more{pattern} ? ", pattern: '$more{pattern}'" : '') . "}, dest: {path: '$dest'"
        . ($more{dest_pattern} ? ", pattern: '$more{dest_pattern}'" : '') . '}}';
}

# The issue's two: a passphrase substituted into a's url, which b copies; a child merged onto
# an encrypted abstract parent.
my $found = $layering
    . "---\nschema: deckhand/Passphrase/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: pass\n"
    . "  storagePolicy: encrypted\n  layeringDefinition: {abstract: false, layer: site}\ndata: S3CRET-passphrase\n"
    . thing(name => 'a', layer => 'site', data => "{url: 'https://user:PH\@db', x: PLAIN-a}",
        subs => ["{src: {schema: deckhand/Passphrase/v1, name: pass, path: .}, dest: {path: .url, pattern: PH}}"])
    . thing(name => 'b', layer => 'site', data => '{copied: PLAIN-old, y: PLAIN-b}', subs => [sub_of('a', '.url', '.copied')])
    . thing(name => 'vault', layer => 'global', abstract => 1, encrypted => 1, data => '{token: S3CRET-token, nested: {keep: S3CRET-kept}}')
    . thing(name => 'child', layer => 'site', parent => 'vault', actions => '{method: merge, path: .}',
        data => '{mine: PLAIN-mine, nested: {over: PLAIN-over}}');

sub random_site {
    my ($n) = @_;
    my $yaml = $layering;
    my (@abstract, @encrypted);
    my $count = 4 + pick(9);
    for my $i (0 .. $count - 1) {
        $abstract[$i] = pick(3) == 0;
        $encrypted[$i] = pick(3) == 0;
        my %t = (name => "d$i", layer => $abstract[$i] ? 'global' : 'site', abstract => $abstract[$i],
            encrypted => $encrypted[$i], data => data_of($encrypted[$i] ? 'S3CRET' : 'PLAIN', "$n-$i"), subs => []);
        if (!$abstract[$i] && !$encrypted[$i]) { # (an encrypted one takes nothing from others)
            my @parents = grep { $abstract[$_] } 0 .. $i - 1;
            if (@parents && pick(4)) {
                my @actions;
                for (0 .. pick(3)) {
                    my $method = (qw(merge replace delete))[pick(3)];
                    my $path = $method eq 'delete' ? '.nested.c' : (qw(. .nested .k))[pick(3)];
                    push @actions, "{method: $method, path: '$path'}";
                    last if $method eq 'delete';
                }
                @t{qw(parent actions)} = ("d$parents[pick(scalar @parents)]", join ', ', @actions);
            }
            for (1 .. pick(4)) {
                my @sources = grep { !$abstract[$_] } 0 .. $i - 1 or last;
                my $from = "d$sources[pick(scalar @sources)]";
                my $kind = pick(4);
                push @{ $t{subs} },
                    $kind == 0 ? sub_of($from, (qw(.k .nested .nested.a .nested.list .url))[pick(5)], (qw(.k .nested.a .fresh .nested .nested.list[1]))[pick(5)])
                  : $kind == 1 ? sub_of($from, '.nested.a', '.url', dest_pattern => 'PH')
                  : $kind == 2 ? sub_of($from, '.k', (qw(.k .fresh .nested.a))[pick(3)], pattern => '(S3C.ET|PLAIN)-[0-9-]+')
                  :              sub_of($from, '.', '.whole');
            }
        }
        $yaml .= thing(%t);
    }
    return $yaml;
}

my @sites = ($found, map { random_site($_) } 1 .. 8);
my ($leaks, $shown, $rendered, $marked) = (0, 0, 0, 0);
my $cat = "$work/catalog";
my @revisions;
for my $n (0 .. $#sites) {
    $r = $s->request('PUT', '/api/v1.0/buckets/site/documents', { headers => {
        authorization => "Bearer $admin", 'content-type' => 'application/x-yaml' }, content => $sites[$n] });
    is $r->{status}, 200, "site $n written" or diag $r->{content};
    my (undef, $revs) = $s->call('GET', '/api/v1.0/revisions', undef, accept => 'application/json');
    push @revisions, $revs->{results}[-1]{id};
    for my $who (['admin', $admin], ['rita', $rita]) {
        my $got = $s->request('GET', "/api/v1.0/revisions/$revisions[-1]/rendered-documents?cleartext-secrets=false",
            { headers => { authorization => "Bearer $who->[1]" } });
        $leaks++, diag "site $n: $who->[0] reads a secret ($got->{status}):\n$got->{content}\nof\n$sites[$n]" if index($got->{content}, 'S3CRET') >= 0;
        next unless $got->{status} == 200 && $who->[0] eq 'admin';
        $rendered++;
        $marked += () = $got->{content} =~ /\[redacted\]/g;
        # every value of a cleartext document that came from no secret is still there
        my @plain = $sites[$n] =~ /(PLAIN-[0-9a-z-]+)/g;
        $shown += grep { index($got->{content}, $_) >= 0 } @plain;
    }
    if ($n == 0) {
        my $got = $s->request('GET', "/api/v1.0/revisions/$revisions[-1]/rendered-documents?cleartext-secrets=false",
            { headers => { authorization => "Bearer $admin" } });
        like $got->{content}, qr/PLAIN-b/, 'b is rendered, its own value shown';
        like $got->{content}, qr/copied: '\[redacted\]'/, '  the passphrase it took from a second hand redacted';
        like $got->{content}, qr/mine: PLAIN-mine/, 'child: its own values shown';
        like $got->{content}, qr/token: '\[redacted\]'/, '  its encrypted parent\'s redacted';
        my ($st, $out) = git($cluster, 'clone', "$url/git/$org/catalogs/c-edge.git", $cat);
        is $st, 0, 'the cluster clones its catalog' or diag $out;
        ok -f "$cat/documents/site/example/Thing/v1/b.encrypted", '  b, which a secret reached second hand, is a marker';
        ok -f "$cat/documents/site/example/Thing/v1/child.encrypted", '  child, layered onto an encrypted parent, is a marker';
        ok -f "$cat/documents/site/example/Thing/v1/a.encrypted", '  a, whose url a secret was written into, is a marker';
        ok !-e "$cat/documents/site/example/Thing/v1/b.yaml", '  b is in no file of its own';
    } else {
        my ($st, $out) = git($cluster, '-C', $cat, 'pull', '-q', '--ff-only');
        is $st, 0, "  the catalog follows" or diag $out;
    }
    if ($n > 0) {
        for my $who (['admin', $admin], ['rita', $rita]) {
            my $got = $s->request('GET', "/api/v1.0/revisions/$revisions[-2]/deepdiff/$revisions[-1]",
                { headers => { authorization => "Bearer $who->[1]", accept => 'application/json' } });
            $leaks++, diag "deepdiff $n: $who->[0] reads a secret" if index($got->{content}, 'S3CRET') >= 0;
        }
    }
}
ok $rendered >= 6, "$rendered of " . scalar(@sites) . ' sites render';
ok $marked > 2 * @sites, "values redacted: $marked";
ok $shown > 20, "values that came from no secret shown: $shown";
is $leaks, 0, 'no secret in any redacted rendering or deepdiff, for the admin or a reader';

# ---- the catalog ----
my ($st, $out) = git('', '-C', $cat, 'log', '--format=%H');
my @commits = grep { length } split /\n/, $out;
ok @commits >= 6, 'the catalog: a commit for each revision that changed it: ' . scalar @commits;
($st, $out) = git($rita, '-C', $cat, 'fetch', "$url/git/$org/catalogs/c-edge.git");
is $st, 0, 'a reader fetches it too' or diag $out;

sub objects_holding { my ($what, @dirs) = @_; return PurserStack::git_objects_holding([$what], @dirs) }
my @repos = ((map { s{/objects$}{}r } split /\n/, `find ${\ $s->dir}/git -type d -name objects`), "$cat/.git");
my ($objects, $holding) = objects_holding('S3CRET', @repos);
ok $objects > 50, "objects read in " . scalar(@repos) . " repositories: $objects";
is $holding, 0, 'no secret in any object of any repository, on the server or in the clone';

# ---- a catalog written before the marks: rewritten, history too ----
my $bare = $s->dir . "/git/$org/catalogs/c-edge.git";
ok -f "$bare/purser-format", 'a catalog records its format';
my $old = "$work/old";
($st, $out) = git('', 'clone', '-q', $bare, $old);
open my $fh, '>', "$old/documents/site/example/Thing/v1/b.yaml" or die;
print $fh "data: {copied: 'https://user:S3CRET-passphrase\@db'}\n";
close $fh;
my ($last) = $revisions[-1];
system('git', '-C', $old, 'add', '-A') == 0 or die;
($st, $out) = git('', '-C', $old, '-c', 'user.name=old', '-c', 'user.email=old@example.com', 'commit', '-q',
    '-m', "Revision $last: as an old purser wrote it\n\nPurser-Revision: $last\n");
($st, $out) = git('', '-C', $old, 'push', '-q', $bare, 'HEAD:main');
is $st, 0, 'a leaked value committed into the catalog, as the old render wrote it' or diag $out;
unlink "$bare/purser-format";
(undef, $holding) = objects_holding('S3CRET', $bare);
is $holding, 1, '  it is on disk';
my @before = grep { length } split /\n/, (git('', '--git-dir', $bare, 'log', '--format=%s%x09%an%x09%at', 'main'))[1];

my $fresh = "$work/fresh";
($st, $out) = git($cluster, 'clone', "$url/git/$org/catalogs/c-edge.git", $fresh);
is $st, 0, 'the next fetch' or diag $out;
(undef, $holding) = objects_holding('S3CRET', $bare, "$fresh/.git");
is $holding, 0, '  leaves the leaked value in no object on disk, nor in the new clone';
my @after = grep { length } split /\n/, (git('', '--git-dir', $bare, 'log', '--format=%s%x09%an%x09%at', 'main'))[1];
is_deeply \@after, [@before[1 .. $#before]], '  the history written again: the same commits (subject, author, time) but the leaked one';
ok -f "$bare/purser-format", '  and its format recorded';
($st, $out) = git('', '-C', $fresh, 'log', '--format=%H');
is scalar(grep { length } split /\n/, $out), scalar @commits, '  a clone has the same number of commits as before';

# ---- the write's schema validation quotes no secret (its entries a reader may read) ----
my $checked = $layering
    . "---\nschema: deckhand/DataSchema/v1\nmetadata:\n  schema: metadata/Control/v1\n  name: example/Checked/v1\n"
    . "data:\n  type: object\n  properties:\n    creds: {type: object, additionalProperties: false, properties: {user: {type: integer}}}\n"
    . "---\nschema: deckhand/DataSchema/v1\nmetadata:\n  schema: metadata/Control/v1\n  name: example/Vault/v1\n"
    . "data: {type: object, additionalProperties: false, properties: {user: {}}}\n"
    . "---\nschema: deckhand/DataSchema/v1\nmetadata:\n  schema: metadata/Control/v1\n  name: example/Hidden/v1\n"
    . "  storagePolicy: encrypted\ndata: {type: object, properties: {v: {type: string, pattern: '^S3CRET-schema-pattern\$'}}}\n"
    . "---\nschema: example/Vault/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: vault\n  storagePolicy: encrypted\n"
    . "  layeringDefinition: {abstract: false, layer: site}\ndata: {user: S3CRET-user, S3CRET-keyname: S3CRET-value}\n"
    . "---\nschema: example/Checked/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: app\n"
    . "  layeringDefinition: {abstract: false, layer: site}\n"
    . "  substitutions:\n  - {src: {schema: example/Vault/v1, name: vault, path: .}, dest: {path: .creds}}\n"
    . "data: {creds: {}}\n"
    . "---\nschema: example/Hidden/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: hid\n"
    . "  layeringDefinition: {abstract: false, layer: site}\ndata: {v: PLAIN-nomatch}\n"
    . "---\nschema: example/Checked/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: plain\n"
    . "  layeringDefinition: {abstract: false, layer: site}\ndata: {creds: {PLAIN-extra: 1}}\n";
$r = $s->request('PUT', '/api/v1.0/buckets/site/documents', { headers => {
    authorization => "Bearer $admin", 'content-type' => 'application/x-yaml' }, content => $checked });
is $r->{status}, 200, 'a revision whose secrets fail their schemas (an encrypted DataSchema among them)' or diag $r->{content};
my (undef, $revs) = $s->call('GET', '/api/v1.0/revisions', undef, accept => 'application/json');
my $bad = $revs->{results}[-1]{id};
for my $path ("/api/v1.0/revisions/$bad/validations/deckhand-schema-validation/entries/0",
              "/api/v1.0/revisions/$bad/validations/detail",
              "/api/v1.0/revisions/$bad/rendered-documents?cleartext-secrets=false") {
    for my $who (['admin', $admin], ['rita', $rita]) {
        my $got = $s->request('GET', $path, { headers => { authorization => "Bearer $who->[1]", accept => 'application/json' } });
        is index($got->{content}, 'S3CRET'), -1, "$who->[0]: $path ($got->{status}) quotes no secret"
            or diag $got->{content};
    }
}
my $entry = $s->request('GET', "/api/v1.0/revisions/$bad/validations/deckhand-schema-validation/entries/0",
    { headers => { authorization => "Bearer $rita", accept => 'application/json' } });
like $entry->{content}, qr/PLAIN-extra/, '  a failure of what came from no secret is still named';
like $entry->{content}, qr/not shown: it would quote the secret/, '  the others say why they say less';
my $errors = eval { decode_json($entry->{content})->{errors} } // [];
is_deeply [ sort map { "$_->{name} $_->{path}" } grep { $_->{name} eq 'app' } @$errors ], ['app .data.creds', 'app .data.creds'],
    '  a failure inside a secret is told where the secret starts, not below it';
ok((grep { $_->{name} eq 'hid' && $_->{path} eq '.data' && !exists $_->{validation_schema} } @$errors),
    '  one against an encrypted DataSchema tells nothing of the schema');

PurserStack::finish();

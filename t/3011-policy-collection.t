# 3011: the Policyfile RFC's list of a policy's revisions (GET policies/{name}/revisions) and
# collection through the API (POST collect_policies): the revisions no group points at beyond
# the newest N of each policy, the cookbook artifacts no remaining revision's cookbook_locks
# name, and the stored files only those artifacts used (a file an open sandbox lists stays);
# a dry run that lists and changes nothing, the real run that removes exactly that with its
# events, bad input refused naming the field, RBAC; `purser gc-policies`, which runs the same
# code, saying the same; and collections racing artifact uploads.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use Digest::MD5 qw(md5_hex);
use POSIX ();
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $base = "/organizations/$org";
my $admin = $s->env('PURSER_ADMIN_USER');

# A lock of policy NAME at revision REV naming the cookbooks (name => identifier) given.
sub lock_for {
    my ($name, $rev, %cookbooks) = @_;
    return { revision_id => $rev, name => $name, run_list => ['recipe[base::default]'],
             cookbook_locks => { map { $_ => { version => '1.0.0', identifier => $cookbooks{$_} } } keys %cookbooks } };
}
sub upload { my ($name, $rev, %cb) = @_; $s->must("revision $name/$rev", 'POST', "$base/policies/$name/revisions", lock_for($name, $rev, %cb)) }
sub point { my ($group, $name, $rev, %cb) = @_; $s->must("lock $group/$name", 'PUT', "$base/policy_groups/$group/policies/$name", lock_for($name, $rev, %cb)) }

# Files through a sandbox as chef push stores them; the sandbox is committed unless open => 1.
sub store_files {
    my ($contents, %o) = @_;
    my %by_sum = map { md5_hex($_) => $_ } @$contents;
    my $sb = $s->must('sandbox', 'POST', "$base/sandboxes", { checksums => { map { $_ => undef } keys %by_sum } });
    for my $sum (sort keys %by_sum) {
        next unless $sb->{checksums}{$sum}{needs_upload};
        my ($r) = $s->call('PUT', "$base/file_store/$sum", $by_sum{$sum}, 'content-type' => 'application/x-binary');
        die "upload $sum: $r->{status}\n" unless $r->{status} == 200;
    }
    $s->must('commit', 'PUT', "$base/sandboxes/$sb->{sandbox_id}", { is_completed => JSON::PP::true() }) unless $o{open};
}
sub artifact_body {
    my ($name, $id, @files) = @_;
    return { name => $name, identifier => $id, version => '1.0.0', chef_type => 'cookbook_version',
             metadata => { name => $name, version => '1.0.0', dependencies => {} },
             all_files => [ map { { name => "f$_", path => "files/default/f$_", checksum => md5_hex($files[$_]),
                                    specificity => 'default' } } 0 .. $#files ] };
}
sub artifact { my ($name, $id, @files) = @_; $s->must("artifact $name/$id", 'PUT', "$base/cookbook_artifacts/$name/$id", artifact_body($name, $id, @files)) }

sub revisions_of { my ($r, $j) = $s->api('GET', "$base/policies/$_[0]"); return [ sort keys %{ $j->{revisions} // {} } ] }
sub artifacts { my ($r, $j) = $s->api('GET', "$base/cookbook_artifacts"); return [ sort map { my $n = $_; map { "$n/$_->{identifier}" } @{ $j->{$n}{versions} } } keys %{ $j // {} } ] }
sub file_status { ($s->call('GET', "$base/file_store/" . md5_hex($_[0])))[0]{status} }
sub last_seq {
    my $since = 0;
    while (1) {
        my ($r, $j) = $s->api('GET', "$base/events?since=$since&page_size=1000");
        return $since unless @{ $j->{events} // [] };
        $since = $j->{next};
    }
}
sub events_after {
    my ($since, $kinds) = @_;
    my ($r, $j) = $s->api('GET', "$base/events?since=$since&page_size=1000&kinds=$kinds");
    return [ map { "$_->{kind} $_->{name} $_->{op} $_->{actor}" } @{ $j->{events} // [] } ];
}
# What a collection answer lists, as sortable lines.
sub listed {
    my ($j) = @_;
    return [ (map { "revision $_->{policy}/$_->{revision_id}" } @{ $j->{revisions} // [] }),
             (map { "cookbook artifact $_->{name}/$_->{identifier}" } @{ $j->{cookbook_artifacts} // [] }),
             (map { "file $_" } @{ $j->{files} // [] }) ];
}
# Everything collection could touch, to hold "nothing changed".
sub state_of {
    return { web => revisions_of('web'), db => revisions_of('db'), artifacts => artifacts(),
             files => { map { $_ => file_status($_) } @_ }, seq => last_seq() };
}

# ---- the state: files, artifacts using them, revisions naming the artifacts ------------------
my ($f_shared, $f_only, $f_kept, $f_open) = ("shared file\n", "only a-old's file\n", "only a-used's file\n", "a-orphan's file\n");
my @files = ($f_shared, $f_only, $f_kept, $f_open);
store_files([$f_shared, $f_only, $f_kept, $f_open]);
artifact('base', 'a-pointed', $f_kept);
artifact('base', 'a-old', $f_shared, $f_only);
artifact('base', 'a-used', $f_shared, $f_kept);
artifact('base', 'a-orphan', $f_open);
artifact('dbcb', 'd-old');
artifact('dbcb', 'd-new');
store_files([$f_open], open => 1); # a push under way names it: it stays while the sandbox is open

point('prod', 'web', 'w1', base => 'a-pointed');
upload('web', 'w2', base => 'a-old');
upload('web', 'w3', base => 'a-old');
upload('web', 'w4', base => 'a-used');
upload('db', 'd1', dbcb => 'd-old');
upload('db', 'd2', dbcb => 'd-new');

# ---- GET policies/{name}/revisions ----------------------------------------------------------
my ($r, $j) = $s->api('GET', "$base/policies/web/revisions");
is $r->{status}, 200, 'GET policies/web/revisions: 200 (the RFC\'s list of the available revisions)';
is_deeply [ sort keys %{ $j // {} } ], [qw(w1 w2 w3 w4)], '  keyed by revision_id, every revision of web';
my @order = ($r->{content} // '') =~ /"(w\d)":\{/g;
is_deeply \@order, [qw(w1 w2 w3 w4)], '  oldest first';
is $j->{w1}{uri}, $s->url . "$base/policies/web/revisions/w1", '  each with its uri';
is_deeply $j->{w1}{policy_group_list}, ['prod'], '  the groups that point at it';
is_deeply $j->{w2}{policy_group_list}, [], '  none for a revision no group points at';
is $j->{w2}{created_by}, $admin, '  who uploaded it';
like $j->{w2}{created_at} // '', qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, '  and when';
is_deeply [ sort keys %{ $j->{w2} } ], [qw(created_at created_by policy_group_list uri)], '  and nothing else';
my ($one) = $s->api('GET', "$base/policies/web");
is_deeply [ sort keys %{ (JSON::PP->new->decode($one->{content}))->{revisions} } ], [ sort keys %$j ],
    '  the same revisions GET policies/web shows';
($r, $j) = $s->api('GET', "$base/policies/nope/revisions");
is $r->{status}, 404, 'an unknown policy: 404';
like PurserStack::error_message($j), qr/Cannot load policy nope/, '  in Chef\'s words';

# RBAC: a reader reads them; the validator role (no read_policy) is refused.
my %token;
for my $role (qw(reader operator validator)) {
    $s->must("user $role", 'POST', '/users', { username => "c-$role" });
    $s->must("member $role", 'POST', "$base/users", { username => "c-$role", roles => [$role] });
    $token{$role} = $s->must("token $role", 'POST', "/users/c-$role/tokens", {})->{token};
}
($r, $j) = $s->api('GET', "$base/policies/web/revisions", undef, $token{reader});
is $r->{status}, 200, 'a reader lists the revisions';
($r, $j) = $s->api('GET', "$base/policies/web/revisions", undef, $token{validator});
is $r->{status}, 403, 'a principal without read_policy: 403';
like PurserStack::error_message($j), qr/'read_policy'/, '  naming the action';
# A grant limited to policy groups sees only the groups it may read pointing at a revision.
point('prod', 'cache', 'c1', base => 'a-pointed');
point('staging', 'cache', 'c1', base => 'a-pointed');
$s->must('user release', 'POST', '/users', { username => 'c-release' });
$s->must('member release', 'POST', "$base/users", { username => 'c-release', roles => ['release'] });
my $release = $s->must('token release', 'POST', '/users/c-release/tokens', {})->{token};
($r, $j) = $s->api('GET', "$base/policies/cache/revisions");
is_deeply $j->{c1}{policy_group_list}, [qw(prod staging)], 'the admin sees every group pointing at a revision';
($r, $j) = $s->api('GET', "$base/policies/cache/revisions", undef, $release);
is $r->{status}, 200, 'a member whose role reads policy groups only on prod* lists them';
is_deeply $j->{c1}{policy_group_list}, ['prod'], '  seeing only the groups it may read';

# ---- collection: refused input changes nothing -----------------------------------------------
my $before = state_of(@files);
for my $case ([{}, qr/Field 'keep' missing/, 400], [{ keep => -1 }, qr/Field 'keep' invalid/, 400],
              [{ keep => '1' }, qr/Field 'keep' invalid/, 400], [{ keep => 1.5 }, qr/Field 'keep' invalid/, 400],
              [{ keep => 1, dry_run => 'yes' }, qr/Field 'dry_run' invalid/, 400],
              [{ keep => 1, kept => 2 }, qr/Field 'kept'/, 400],
              [{ keep => 1, policies => 'web' }, qr/Field 'policies' invalid/, 400],
              [{ keep => 1, policies => ['we b'] }, qr/Field 'policies' invalid/, 400],
              [{ keep => 1, policies => ['web', 'nope'] }, qr/Cannot load policy nope/, 404],
              ['[1]', qr/JSON object/i, 400], ['{"keep": 1', qr/JSON/, 400]) {
    my ($body, $message, $status) = @$case;
    ($r, $j) = $s->api('POST', "$base/collect_policies", $body);
    my $shown = ref $body ? JSON::PP->new->canonical->encode($body) : $body;
    is $r->{status}, $status, "collect $shown: $status";
    like PurserStack::error_message($j), $message, "  naming what is wrong";
}
is_deeply state_of(@files), $before, 'nothing changed: revisions, artifacts, files and events';

# RBAC: collect_policies is the admin role's alone.
for my $role (qw(reader operator)) {
    ($r, $j) = $s->api('POST', "$base/collect_policies", { keep => 0 }, $token{$role});
    is $r->{status}, 403, "an $role may not collect: 403";
    like PurserStack::error_message($j), qr/'collect_policies'/, '  naming the action';
}
is_deeply state_of(@files), $before, '  and nothing changed';

# ---- the dry run lists what would go and removes nothing -------------------------------------
my @expected = sort('revision web/w2', 'revision web/w3', 'revision db/d1',
                    'cookbook artifact base/a-old', 'cookbook artifact base/a-orphan', 'cookbook artifact dbcb/d-old',
                    'file ' . md5_hex($f_only));
($r, $j) = $s->api('POST', "$base/collect_policies", { keep => 1, dry_run => JSON::PP::true() });
is $r->{status}, 200, 'collect {keep: 1, dry_run: true}: 200';
is_deeply [ sort @{ listed($j) } ], \@expected,
    '  lists the unpointed revisions past the newest one of each policy, the artifacts no other revision names, '
    . 'and the file only those artifacts used';
is $j->{dry_run}, JSON::PP::true(), '  says it was a dry run';
is $j->{keep}, 1, '  and what it kept';
is_deeply state_of(@files), $before, '  and nothing changed: revisions, artifacts, files, no event';
my $dry = $j;

# ---- the real run removes exactly that ---------------------------------------------------------
my $seq = last_seq();
($r, $j) = $s->api('POST', "$base/collect_policies", { keep => 1 });
is $r->{status}, 200, 'collect {keep: 1}: 200';
is_deeply [ sort @{ listed($j) } ], \@expected, '  removed what the dry run listed';
is $j->{dry_run}, JSON::PP::false(), '  not a dry run';
is_deeply revisions_of('web'), [qw(w1 w4)], '  web keeps w1 (prod points at it) and w4 (the newest)';
is_deeply revisions_of('db'), ['d2'], '  db keeps d2 (the newest)';
is_deeply artifacts(), [qw(base/a-pointed base/a-used dbcb/d-new)], '  the artifacts a remaining revision names stay';
is file_status($f_only), 404, '  the file only a removed artifact used is gone';
is file_status($f_shared), 200, '  a file a kept artifact uses too stays';
is file_status($f_kept), 200, '  a kept artifact\'s own file stays';
is file_status($f_open), 200, '  a file an open sandbox lists stays';
is_deeply [ sort @{ events_after($seq, 'policy_revision,cookbook_artifact') } ],
    [ sort('policy_revision web/w2 delete admin', 'policy_revision web/w3 delete admin', 'policy_revision db/d1 delete admin',
           'cookbook_artifact base/a-old delete admin', 'cookbook_artifact base/a-orphan delete admin',
           'cookbook_artifact dbcb/d-old delete admin') ],
    '  each removal is an event, as the API\'s deletes write';
($r, $j) = $s->api('PUT', "$base/cookbook_artifacts/base/a-again", artifact_body('base', 'a-again', $f_only));
is $r->{status}, 400, 'an artifact naming the removed file is refused';
like PurserStack::error_message($j), qr/hasn't yet been uploaded/, '  (the file is really gone)';

$seq = last_seq();
($r, $j) = $s->api('POST', "$base/collect_policies", { keep => 1 });
is_deeply listed($j), [], 'collect again: nothing more to remove';
is last_seq(), $seq, '  and no event';

# ---- policies: only those policies' revisions ---------------------------------------------------
upload('web', 'w5', base => 'a-used');
upload('db', 'd3', dbcb => 'd-new');
($r, $j) = $s->api('POST', "$base/collect_policies", { keep => 1, policies => ['db'] });
is $r->{status}, 200, 'collect {keep: 1, policies: [db]}: 200';
is_deeply listed($j), ['revision db/d2'], '  removes db\'s older revision only';
is_deeply revisions_of('web'), [qw(w1 w4 w5)], '  web untouched';
is_deeply revisions_of('db'), ['d3'], '  db keeps its newest';

# ---- keep 0: every revision no group points at --------------------------------------------------
($r, $j) = $s->api('POST', "$base/collect_policies", { keep => 0, dry_run => JSON::PP::true(), policies => undef });
is $r->{status}, 200, 'collect {keep: 0, dry_run: true, policies: null}: 200 (null: every policy)';
is_deeply [ sort @{ listed($j) } ], [ sort('revision db/d3', 'revision web/w4', 'revision web/w5', 'cookbook artifact dbcb/d-new',
                                           'cookbook artifact base/a-used', 'file ' . md5_hex($f_shared)) ],
    'keep 0 (dry run): every unpointed revision, then what only they used';

# ---- purser gc-policies: the same code, the same answer -----------------------------------------
my $purser = PurserStack::build() . '/purser';
my $cfg = $s->dir . '/purser.yaml';
my $f_tool = "a file only a-tool uses\n";
store_files([$f_tool]);
artifact('base', 'a-tool', $f_tool);
upload('web', 'w6', base => 'a-tool');
upload('web', 'w7', base => 'a-used');
$before = state_of(@files, $f_tool);
($r, $j) = $s->api('POST', "$base/collect_policies", { keep => 1, dry_run => JSON::PP::true() });
my @api_lines = sort @{ listed($j) };
is_deeply \@api_lines, [ sort('revision web/w4', 'revision web/w5', 'revision web/w6', 'cookbook artifact base/a-tool',
                              'file ' . md5_hex($f_tool)) ], 'the API\'s dry run for the tool\'s case';
my $out = `'$purser' -c '$cfg' gc-policies --keep 1 --dry-run --org '$org' 2>&1`;
is $?, 0, 'purser gc-policies --keep 1 --dry-run --org ORG: exit 0';
my @tool = sort map { /^would remove \Q$org\E(?:\/(\S+) revision (\S+)| (cookbook artifact|file) (\S+))$/
                          ? ($1 ? "revision $1/$2" : "$3 $4") : () } split /\n/, $out;
is_deeply \@tool, \@api_lines, '  lists what the API\'s dry run lists' or diag $out;
like $out, qr/^3 revision\(s\) would be removed$/m, '  with the counts';
like $out, qr/^1 cookbook artifact\(s\) would be removed$/m, '  (one cookbook artifact)';
like $out, qr/^1 file\(s\) would be removed$/m, '  (one file)';
is_deeply state_of(@files, $f_tool), $before, '  and changes nothing';

$seq = last_seq();
$out = `'$purser' -c '$cfg' gc-policies --keep 1 --org '$org' 2>&1`;
is $?, 0, 'purser gc-policies --keep 1 --org ORG: exit 0';
@tool = sort map { /^removed \Q$org\E(?:\/(\S+) revision (\S+)| (cookbook artifact|file) (\S+))$/
                       ? ($1 ? "revision $1/$2" : "$3 $4") : () } split /\n/, $out;
is_deeply \@tool, \@api_lines, '  removes the same' or diag $out;
like $out, qr/^3 revision\(s\) removed$/m, '  and counts them';
is_deeply revisions_of('web'), [qw(w1 w7)], '  web keeps w1 (pointed) and w7 (newest)';
ok !grep({ $_ eq 'base/a-tool' } @{ artifacts() }), '  a-tool is gone';
is file_status($f_tool), 404, '  and its file';
is_deeply [ sort @{ events_after($seq, 'policy_revision,cookbook_artifact') } ],
    [ sort('policy_revision web/w4 delete purser gc-policies', 'policy_revision web/w5 delete purser gc-policies',
           'policy_revision web/w6 delete purser gc-policies', 'cookbook_artifact base/a-tool delete purser gc-policies') ],
    '  with the same events, by purser gc-policies';

$out = `'$purser' -c '$cfg' gc-policies --dry-run 2>&1`;
is $? >> 8, 2, 'gc-policies without --keep: usage (exit 2)';
like $out, qr/usage: purser gc-policies --keep N \[--dry-run\] \[--org ORG\]/, '  naming the options';
$out = `'$purser' -c '$cfg' gc-policies --keep 1 --org nosuch 2>&1`;
is $? >> 8, 1, 'an unknown organization: exit 1';
like $out, qr/nosuch/, '  naming it';

# ---- racing an artifact upload: never an artifact without its file --------------------------
# Each round: a file only an unused artifact uses, a lock that names an artifact not stored yet,
# then at once a collection and the PUT of that artifact (naming the same file). Either the
# PUT stores it first (the file stays) or the collection removes the file first (the PUT is
# 400); an artifact stored while its file is removed is the bug (with a check that does not
# lock the file, each of three runs of these rounds let it through).
my %race;
my @dangling;
for my $round (1 .. 20) {
    my $content = "raced file $round\n";
    store_files([$content]);
    artifact('race', "old$round", $content);
    point('g-race', 'race', "r$round", race => "new$round");
    pipe(my $reader, my $writer) or die "pipe: $!";
    my @kids;
    for my $who (qw(collect put)) {
        my $pid = fork // die "fork: $!";
        if (!$pid) {
            close $reader;
            local $ENV{PURSER_OPENAPI_CHECK} = 0; # a child's TAP would garble the parent's
            my ($res) = $who eq 'collect' ? $s->call('POST', "$base/collect_policies", { keep => 0 })
                : $s->call('PUT', "$base/cookbook_artifacts/race/new$round", artifact_body('race', "new$round", $content));
            syswrite $writer, "$who $res->{status}\n";
            POSIX::_exit(0); # not exit: the END block would stop the stack
        }
        push @kids, $pid;
    }
    close $writer;
    $race{$_}++ for map { chomp; $_ } <$reader>;
    waitpid($_, 0) for @kids;
    my ($res) = $s->call('GET', "$base/cookbook_artifacts/race/new$round");
    push @dangling, "new$round" if $res->{status} == 200 && file_status($content) != 200;
}
is_deeply \@dangling, [], 'collections racing artifact uploads: every stored artifact has its file';
is $race{'collect 200'}, 20, '  every collection answered 200';
is(($race{'put 201'} // 0) + ($race{'put 400'} // 0), 20, '  every upload stored (201) or refused for the missing file (400)')
    or diag join ', ', map { "$_: $race{$_}" } sort keys %race;

PurserStack::finish();

#!/usr/bin/perl
# 6013: a push is refused by purser's own check, however the request spells it (issue 49): the
# service is read as git-http-backend reads it (the last service= of the query, percent-decoded,
# name and value), by nginx (which hands purser the client's query) and by purser. To see that
# purser's check stands alone, the repository is made to accept pushes (http.receivepack true):
# a reader's info/refs?service=git%2Dreceive-pack, or with service= repeated, gets purser's 403
# and never git's receive-pack advertisement, and a push does not land.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use PurserStack;

my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
my $admin = $s->env('PURSER_ADMIN_TOKEN');
my $work = tempdir('purser-git-service-XXXXXX', TMPDIR => 1, CLEANUP => 1);
$s->git_env($work);

my $layering = "---\nschema: deckhand/LayeringPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n"
    . "  name: layering\ndata:\n  layerOrder: [global]\n";
my $r = $s->request('PUT', '/api/v1.0/buckets/b/documents', { headers => { authorization => "Bearer $admin",
    'content-type' => 'application/x-yaml' }, content => $layering });
is $r->{status}, 200, 'a revision';

# a reader: reads the history, may not write
$s->api('POST', '/users', { username => 'rita', email => 'rita@example.com' });
my (undef, $d) = $s->api('POST', '/users/rita/tokens', {});
my $rita = $d->{token};
($r) = $s->api('POST', "/organizations/$org/users", { username => 'rita', roles => ['reader'] });
is $r->{status}, 201, 'rita is a reader';

# ---- purser's check itself, as an API route ----
my $check = "/organizations/$org/git-access";
for my $case (['service=git%2Dreceive-pack', 403, 'percent-encoded'],
              ['service=git-upload-pack&service=git-receive-pack', 403, 'repeated, the last a push'],
              ['s%65rvice=git-receive-pack', 403, 'the name percent-encoded'],
              ['service=git-upload-pack&s%65rvice=git%2dreceive%2Dpack', 403, 'both, repeated'],
              ['service=git-receive-pack&service=git-upload-pack', 204, 'repeated, the last a fetch'],
              ['service=git%2Dupload-pack', 204, 'a fetch percent-encoded']) {
    my ($query, $status, $what) = @$case;
    ($r, $d) = $s->call('GET', "$check?$query", undef, authorization => "Bearer $rita");
    is $r->{status}, $status, "git-access?$query ($what): $status";
    like PurserStack::error_message($d), qr/read-only/, '  purser\'s refusal of a push' if $status == 403;
}

# ---- through nginx, with the repository accepting pushes: only purser's check refuses ----
my $repo = $s->dir . "/git/$org.git";
ok -d $repo, 'the repository was written by the checks';
is system('git', '--git-dir', $repo, 'config', 'http.receivepack', 'true'), 0,
    'the repository made to accept pushes (http.receivepack true)';
my %rita = (headers => { authorization => "Bearer $rita" });
for my $query ('service=git%2Dreceive-pack', 'service=git-upload-pack&service=git-receive-pack',
               's%65rvice=git-receive-pack', 'service=git-receive-pack') {
    my $checks = () = grep { /"status":403/ && /git-access/ } $s->log_lines('purser-fcgi.log');
    $r = $s->get("/git/$org.git/info/refs?$query", \%rita);
    is $r->{status}, 403, "info/refs?$query with a reader's token: 403";
    unlike $r->{headers}{'content-type'} // '', qr/receive-pack/, '  not git\'s receive-pack advertisement';
    my $after = () = grep { /"status":403/ && /git-access/ } $s->log_lines('purser-fcgi.log');
    is $after, $checks + 1, '  refused by purser\'s check (its log has one more 403 of git-access)';
}
$r = $s->get("/git/$org.git/info/refs?service=git-receive-pack&service=git-upload-pack", \%rita);
is $r->{status}, 200, 'info/refs whose last service is git-upload-pack: served';
like $r->{headers}{'content-type'}, qr/upload-pack-advertisement/, '  as git reads it, an upload-pack';
$r = $s->get("/git/$org.git/info/refs", \%rita);
is $r->{status}, 200, 'info/refs without a service (the dumb protocol\'s read): served';

# a real push, with the admin's token
my $clone = "$work/clone";
my $out = `git -c 'http.extraHeader=Authorization: Bearer $admin' clone -q '${\ $s->url}/git/$org.git' '$clone' 2>&1`;
is $?, 0, 'cloned' or diag $out;
my ($before) = `git --git-dir '$repo' rev-parse refs/heads/main` =~ /(\S+)/;
system('git', '-C', $clone, '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '-q', '--allow-empty', '-m', 'not purser\'s');
$out = `git -C '$clone' -c 'http.extraHeader=Authorization: Bearer $admin' push origin HEAD:main 2>&1`;
isnt $?, 0, 'git push, even by the admin and to a repository that accepts pushes, is refused';
like $out, qr/403/, '  answered 403';
my ($after) = `git --git-dir '$repo' rev-parse refs/heads/main` =~ /(\S+)/;
is $after, $before, '  the branch is unchanged';

PurserStack::finish();

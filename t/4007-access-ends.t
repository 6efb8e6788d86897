#!/usr/bin/perl
# 4007: where access ends (issue 32 item 4), each end held after waiting out cache.auth_ttl: a
# deactivated user's every token and every key is refused (401); a removed membership refuses
# the user in that organization (403) and nowhere else; a client's deleted key, and a key whose
# expiration_date has passed, are refused while its other key still works; a token works until
# the second its expires_at names, which is at least expires_in after it was asked for, and one
# about to expire is not cached (seen on a second stack, whose cache outlives the token); a
# change is made only with its note for the other hosts, in one transaction.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use POSIX qw(strftime);
use Time::HiRes qw(sleep time);
use Time::Local qw(timegm);
use PurserStack;

my $s = PurserStack->new(workers => 2, auth_ttl => 1);
my $org = $s->env('PURSER_ORG');
sub call { $s->call(@_) }
sub msg { PurserStack::error_message(@_) }

# Writes a private key for signing; returns its file.
sub keyfile {
    my ($name, $pem) = @_;
    my $file = $s->dir . "/$name.pem";
    open my $fh, '>', $file or die "$file: $!";
    print $fh $pem;
    close $fh;
    return $file;
}

sub burst { PurserStack::burst(@_) }

# A GET with a bearer token, or signed (Chef) by a user or client with a key file, in a burst.
sub by_token {
    my ($token, $path) = @_;
    return burst(sub {
        my ($r, $d) = call('GET', $path, undef, authorization => "Bearer $token");
        return ($r->{status}, msg($d));
    });
}

sub by_key {
    my ($name, $key, $path) = @_;
    return burst(sub {
        my $r = $s->chef(user => $name, key => $key, path => $path);
        return ($r->{status}, msg($r->{json}));
    });
}

# A new key of a user or client (its keys path), made by the server; returns its key file.
sub new_key {
    my ($keys, $name, $file) = @_;
    my $made = $s->must("key $name", 'POST', $keys, { name => $name,
        create_key => JSON::PP::true, expiration_date => 'infinity' });
    return keyfile($file, $made->{private_key});
}

sub sleep_until {
    my ($when) = @_;
    my $left = $when - time;
    sleep $left if $left > 0;
}

sub epoch_of {
    my ($iso) = @_;
    my @t = ($iso // '') =~ /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z$/ or return undef;
    return timegm($t[5], $t[4], $t[3], $t[2], $t[1] - 1, $t[0]);
}

sub iso_utc { strftime('%Y-%m-%dT%H:%M:%SZ', gmtime $_[0]) }

my $in_org = "/organizations/$org";

# ---- 1. a deactivated user: both its tokens and both its keys ----
my $bob = $s->must('user bob', 'POST', '/users', { username => 'bob', email => 'bob@example.com' });
$s->must('bob reads', 'POST', "$in_org/users", { username => 'bob', roles => ['reader'] });
my %bob_keys = (default => keyfile('bob-default', $bob->{private_key}));
$bob_keys{second} = new_key('/users/bob/keys', 'second', 'bob-second');
my @bob_tokens = map {
    $s->must("token $_", 'POST', '/users/bob/tokens', { description => "bob $_" })->{token}
} 1, 2;
is by_key('bob', $bob_keys{$_}, $in_org), '200 ', "bob's key '$_' signs" for sort keys %bob_keys;
is by_token($bob_tokens[$_], $in_org), '200 ', "bob's token " . ($_ + 1) . ' works' for 0, 1;

my ($r, $d) = call('PATCH', '/users/bob', { active => JSON::PP::false },
                   'content-type' => 'application/merge-patch+json');
is $r->{status}, 200, 'bob is deactivated';
$s->wait_auth_cache;
is by_key('bob', $bob_keys{$_}, $in_org),
    "401 Failed to authenticate as 'bob'. Ensure that your node_name and client key are correct.",
    "  within cache.auth_ttl his key '$_' is refused" for sort keys %bob_keys;
is by_token($bob_tokens[$_], $in_org), "401 the token's user or client is deactivated",
    '  and his token ' . ($_ + 1) for 0, 1;
is by_token($bob_tokens[0], '/users/bob'), "401 the token's user or client is deactivated",
    '  on his own user too';

# ---- 2. a removed membership: refused in that organization, nowhere else ----
$s->must('organization ends', 'POST', '/organizations', { name => 'ends', full_name => 'Ends' });
my $carol = $s->must('user carol', 'POST', '/users',
                     { username => 'carol', email => 'carol@example.com' });
my $carol_key = keyfile('carol', $carol->{private_key});
my $carol_token = $s->must('carol token', 'POST', '/users/carol/tokens', {})->{token};
for my $o ($org, 'ends') {
    $s->must("carol in $o", 'POST', "/organizations/$o/users",
             { username => 'carol', roles => ['reader', 'operator'] });
}
is by_token($carol_token, $in_org), '200 ', "carol's token reads $org";
is by_key('carol', $carol_key, $in_org), '200 ', '  and her key';

($r, $d) = call('DELETE', "$in_org/users/carol");
is $r->{status}, 200, "carol is removed from $org";
$s->wait_auth_cache;
($r, $d) = call('GET', $in_org, undef, authorization => "Bearer $carol_token");
my $said = msg($d);
like $said, qr/read_organization/, '  a refusal names the action';
is by_token($carol_token, $in_org), "403 $said",
    '  within cache.auth_ttl her token is refused there';
is by_key('carol', $carol_key, $in_org), "403 $said", '  and her key';
is by_token($carol_token, '/organizations/ends'), '200 ', '  while she still reads ends by token';
is by_key('carol', $carol_key, '/organizations/ends'), '200 ', '  and by key';
is by_token($carol_token, '/users/carol'), '200 ', '  and authenticates: her own user by token';
is by_key('carol', $carol_key, '/users/carol'), '200 ', '  and by key';

# ---- 3. a client's deleted key, and a key past its expiration_date ----
my $node = $s->must('client', 'POST', "$in_org/clients", { name => 'ends-node' });
my $keys = "$in_org/clients/ends-node/keys";
my %node_keys = (default => keyfile('node-default', $node->{private_key}));
$node_keys{$_} = new_key($keys, $_, "node-$_") for qw(second brief);
is by_key('ends-node', $node_keys{$_}, $in_org), '200 ', "the client's key '$_' signs"
    for sort keys %node_keys;

($r) = call('DELETE', "$keys/second");
is $r->{status}, 200, "the client's key 'second' is deleted";
$s->wait_auth_cache;
is by_key('ends-node', $node_keys{second}, $in_org),
    "401 Invalid signature for user or client 'ends-node'",
    '  within cache.auth_ttl a request signed with it is refused';
is by_key('ends-node', $node_keys{default}, $in_org), '200 ',
    "  while the client's other key works";

my $expires = int(time) + 5;
($r, $d) = call('PUT', "$keys/brief", { expiration_date => iso_utc($expires) });
is $r->{status}, 200, "the key 'brief' expires in a few seconds";
is $d->{expiration_date}, iso_utc($expires), '  at the time given';
is by_key('ends-node', $node_keys{brief}, $in_org), '200 ', '  it signs until then';
# (its refusal is checked after section 4, which runs while the key's seconds pass)

# A token about to expire is not cached, as its refusal must not wait for the cache: seen on a
# stack whose cache outlives the token (one worker, so the use before is the one cached). Its
# token is asked for here, and its refusal checked after section 4, which runs meanwhile.
my $long_ttl = PurserStack->new(workers => 1, auth_ttl => 30);
($r, $d) = $long_ttl->call('POST', '/users/admin/tokens',
                           { description => 'brief', expires_in => 2 });
is $r->{status}, 201, 'with cache.auth_ttl 30 s, a token that expires in 2 s';
my ($soon, $soon_at) = ($d->{token}, epoch_of($d->{expires_at}));
($r) = $long_ttl->call('GET', '/users/admin', undef, authorization => "Bearer $soon");
is $r->{status}, 200, '  works';

# ---- 4. a token's expires_at, to the second ----
# Asked for half-way through a second, so that a whole second dropped from now + expires_in
# would make expires_at fall short of it.
my $half = int(time) + 0.5;
sleep_until($half < time + 0.1 ? $half + 1 : $half);
my $asked = time;
($r, $d) = call('POST', '/users/carol/tokens', { description => 'brief', expires_in => 3 });
my $answered = time;
is $r->{status}, 201, 'a token that expires in 3 s';
my ($brief, $id) = @$d{qw(token id)};
my $expires_at = epoch_of($d->{expires_at});
ok defined $expires_at, "  says when, in ISO 8601 UTC: $d->{expires_at}";
cmp_ok $expires_at, '>=', $asked + 3, '  at least expires_in after it was asked for';
cmp_ok $expires_at, '<', $answered + 4, '  and less than a second more';
($r, $d) = call('GET', '/users/carol/tokens');
my ($listed) = grep { $_->{id} eq $id } @$d;
is $listed->{expires_at}, iso_utc($expires_at), '  the listing shows the same expires_at';
sleep_until($expires_at - 0.5);
($r) = call('GET', '/users/carol', undef, authorization => "Bearer $brief");
is $r->{status}, 200, '  it works until shortly before then';
sleep_until($expires_at + 0.05);
is by_token($brief, '/users/carol'), '401 token expired', '  and is refused from expires_at on';

# the token of the stack whose cache outlives it (asked for before section 4)
sleep_until($soon_at + 0.05);
($r, $d) = $long_ttl->call('GET', '/users/admin', undef, authorization => "Bearer $soon");
is $r->{status}, 401, '  and is refused from its expires_at on, long before the cache would end';
is msg($d), 'token expired', '  as expired';

# the client key 'brief' of section 3, its expiration_date passed meanwhile
sleep_until($expires);
$s->wait_auth_cache;
is by_key('ends-node', $node_keys{brief}, $in_org),
    "401 Invalid signature for user or client 'ends-node'",
    '  and is refused once its expiration_date has passed';
is by_key('ends-node', $node_keys{default}, $in_org), '200 ',
    "  while the client's other key works";

# ---- 5. a change and its note for the other hosts are one transaction (issue 50) ----
# With the note refused (a trigger on auth_changes), the revocation is refused with it and the
# token goes on working; without the trigger the same revocation is made and noted.
($r, $d) = call('POST', '/users/admin/tokens', { description => 'noted' });
my ($noted, $noted_id) = @$d{qw(token id)};
$s->sql("CREATE TRIGGER refuse_note BEFORE INSERT ON auth_changes FOR EACH ROW "
    . "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no note'");
($r) = call('DELETE', "/users/admin/tokens/$noted_id");
cmp_ok $r->{status}, '>=', 500, 'a revocation whose note cannot be written fails';
$s->sql('DROP TRIGGER refuse_note');
is by_token($noted, '/users/admin'), '200 ', '  and the token was not revoked';
my $changes = $s->sql('SELECT COUNT(*) FROM auth_changes');
($r) = call('DELETE', "/users/admin/tokens/$noted_id");
is $r->{status}, 204, 'with the note possible, the revocation is made';
cmp_ok $s->sql('SELECT COUNT(*) FROM auth_changes'), '>', $changes, '  and noted';
is by_token($noted, '/users/admin'), '401 invalid token', '  the token is refused at once';

PurserStack::finish();

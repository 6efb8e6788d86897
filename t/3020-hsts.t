#!/usr/bin/perl
# 3020: every answer over HTTPS carries Strict-Transport-Security (issue 49), whoever makes it:
# purser (an answer and an error), nginx's static pages (a page and a file not found), nginx's
# own refusals (413, a malformed request, a git repository that is not one, 401 asking for a
# basic credential), and the end of a wait on the event feed (woken by nchan, and timed out).
# Plain HTTP (the redirect) carries none (RFC 6797 7.2). The production site is held to the same
# rule as the local stack's: every block with add_header of its own repeats the line, as nginx
# inherits none into such a block.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use IO::Socket::SSL;
use PurserStack;

my $HSTS = 'max-age=31536000';
my $s = PurserStack->new(workers => 2, max_body => 65536);
my $org = $s->env('PURSER_ORG');
my $admin = $s->env('PURSER_ADMIN_TOKEN');

sub hsts_of { my ($r) = @_; return $r->{headers}{'strict-transport-security'} // '(none)' }
sub answer {
    my ($what, $status, $r) = @_;
    is $r->{status}, $status, "$what: $status";
    is hsts_of($r), $HSTS, "  with Strict-Transport-Security";
}
my %bearer = (headers => { authorization => "Bearer $admin", accept => 'application/json' });

answer('purser, GET /healthz', 200, $s->get('/healthz'));
answer('purser, an organization', 200, $s->get("/organizations/$org", \%bearer));
answer('purser, an error (no such organization)', 404, $s->get('/organizations/no-such-org', \%bearer));
answer('purser, unauthenticated', 401, $s->get("/organizations/$org"));
answer('static: the admin pages', 200, $s->get('/admin/'));
answer('static: a file that is not there', 404, $s->get('/admin/no-such-file.js'));
answer('nginx: a body over the limit', 413, $s->request('PUT', "/organizations/$org/nodes/n1",
    { headers => { authorization => "Bearer $admin", 'content-type' => 'application/json' },
      content => '{"x":"' . ('a' x 70000) . '"}' }));
answer('nginx: not a repository', 404, $s->get('/git/not/a/repository'));
answer('nginx: a git repository without a credential (401 asking for basic)', 401,
    $s->get("/git/$org.git/info/refs?service=git-upload-pack"));

# a request nginx cannot read (a header line without a colon): its own 400
{
    my ($host, $port) = $s->url =~ m{^https://([^:/]+):(\d+)};
    my $sock = IO::Socket::SSL->new(PeerHost => $host, PeerPort => $port,
        SSL_ca_file => $s->env('PURSER_CA'), SSL_verifycn_name => $host) or die "connect: $SSL_ERROR";
    print $sock "GET /healthz HTTP/1.1\r\nHost: $host\r\nThis line is not a header\r\n\r\n";
    local $/;
    my $raw = <$sock> // '';
    my ($code) = $raw =~ m{^HTTP/1\.[01] (\d+)};
    is $code, 400, 'nginx: a malformed request: 400';
    like $raw, qr/^Strict-Transport-Security: \Q$HSTS\E\r$/mi, '  with Strict-Transport-Security';
}

# the event feed's waits, held by nginx: timed out, and woken by a write
answer('a wait that times out (nginx\'s empty page)', 200,
    $s->get("/organizations/$org/events?since=999999&wait=1", \%bearer));
{
    my (undef, $d) = $s->call('GET', "/organizations/$org/events?last=1");
    my $next = $d->{next};
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        sleep 1; # the parent's wait under way (nothing tells when nginx holds it), so the write wakes it
        $s->{pid} = -1; # (no TAP from the child)
        $s->call('POST', "/organizations/$org/nodes", { name => 'woken', chef_environment => '_default',
            json_class => 'Chef::Node', chef_type => 'node', run_list => [], normal => {} });
        POSIX::_exit(0);
    }
    my $r = $s->get("/organizations/$org/events?since=$next&wait=10", \%bearer);
    waitpid $pid, 0;
    answer('a wait woken by a write (nchan\'s answer through nginx)', 200, $r);
    like $r->{content}, qr/"woken"/, '  carrying the write\'s event';
}

# plain HTTP: a redirect, without the header
{
    my $plain = HTTP::Tiny->new(max_redirect => 0)->get($s->env('PURSER_HTTP_URL') . '/healthz');
    is $plain->{status}, 301, 'plain HTTP is redirected';
    ok !exists $plain->{headers}{'strict-transport-security'}, '  and carries no Strict-Transport-Security';
}

# the configuration files: the TLS server has the line, and so has every block of it that has
# add_header of its own (nginx inherits add_header only into a block with none)
for my $file (qw(nginx/purser.conf.in nginx/purser-site.conf.in)) {
    my $text = do { local $/; open my $fh, '<', PurserStack::root() . "/$file" or die; <$fh> };
    my ($tls) = $text =~ /(server \{\s*listen \S+ ssl;.*)\z/s;
    ok $tls && $tls =~ /^ {4,8}add_header Strict-Transport-Security "\Q$HSTS\E" always;$/m, "$file: the TLS server sets it";
    my @blocks = $tls =~ /^\s*(location [^{]+)\{((?:[^{}]|\{[^{}]*\})*)\}/mg;
    my @missing;
    while (my ($name, $body) = splice @blocks, 0, 2) {
        push @missing, $name if $body =~ /add_header/ && $body !~ /add_header Strict-Transport-Security "\Q$HSTS\E" always;/;
    }
    ok scalar(() = $tls =~ /location /g) > 10, "$file: its locations read";
    is join(', ', @missing), '', "$file: every location with add_header of its own repeats it";
}
my $watch = `'${\ PurserStack::root()}/tools/watch-locations' /run/x.sock`;
my @watch = split /\n/, $watch;
is scalar(@watch), 60, 'tools/watch-locations: 60 locations (wait=1..60)';
is scalar(grep { /add_header Strict-Transport-Security "\Q$HSTS\E" always;/ } @watch), 60, '  each with it';

PurserStack::finish();

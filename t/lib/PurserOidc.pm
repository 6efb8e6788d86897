package PurserOidc;
# The sign-in tests' OpenID Provider (t/oidc/provider.mjs: npm's oidc-provider on loopback) and
# a browser's part of the authorization code flow, spoken over HTTP: the provider's login form,
# its redirects and cookies, up to purser's callback.
use strict;
use warnings;
use File::Basename qw(dirname);
use Cwd qw(abs_path);
use HTTP::Tiny;
use JSON::PP;

my @started;

# start(DIR, users => {...}, clients => [...]): the provider, its issuer read from its first line.
sub start {
    my ($class, $dir, %config) = @_;
    my $file = "$dir/oidc-provider.json";
    open my $fh, '>', $file or die "$file: $!";
    print $fh JSON::PP->new->canonical->encode(\%config);
    close $fh;
    my $script = abs_path(dirname(__FILE__) . '/../oidc/provider.mjs');
    my $pid = open my $out, '-|';
    die "fork: $!" unless defined $pid;
    if (!$pid) {
        open STDERR, '>', "$dir/oidc-provider.log";
        exec 'node', $script, $file or die "node: $!";
    }
    my $line = <$out>;
    my $issuer = $line && eval { JSON::PP::decode_json($line)->{issuer} }
        or die "the test provider did not start (see $dir/oidc-provider.log)\n";
    my $self = bless { pid => $pid, out => $out, issuer => $issuer, owner => $$,
        http => HTTP::Tiny->new(max_redirect => 0, timeout => 30, keep_alive => 0) }, $class;
    push @started, $self;
    return $self;
}

sub issuer { $_[0]{issuer} }

sub stop {
    my ($self) = @_;
    return unless $self->{pid} && $$ == $self->{owner};
    kill 'TERM', $self->{pid};
    waitpid $self->{pid}, 0;
    $self->{pid} = 0;
}

END { $_->stop for @started }

# control(PATH, BODY): the provider's control path (/_control/rotate, user, fault).
sub control {
    my ($self, $path, $body) = @_;
    my $r = $self->{http}->request('POST', "$self->{issuer}/_control/$path",
        { headers => { 'content-type' => 'application/json' }, content => encode_json($body // {}) });
    die "control $path: $r->{status} $r->{content}\n" unless $r->{status} == 200;
    return decode_json($r->{content});
}

# A browser's cookies for the provider (every cookie sent back everywhere: one host, one test).
sub _cookies {
    my ($jar, $res) = @_;
    my $set = $res->{headers}{'set-cookie'} // [];
    for my $c (ref $set ? @$set : ($set)) {
        my ($pair) = split /;/, $c;
        my ($name, $value) = split /=/, $pair, 2;
        if (($value // '') eq '' || $c =~ /expires=Thu, 01 Jan 1970/i) { delete $jar->{$name} }
        else { $jar->{$name} = $value }
    }
}

sub _unescape {
    my ($text) = @_;
    $text =~ s/&#x([0-9a-fA-F]+);/chr hex $1/ge;
    $text =~ s/&#(\d+);/chr $1/ge;
    $text =~ s/&quot;/"/g; $text =~ s/&lt;/</g; $text =~ s/&gt;/>/g; $text =~ s/&amp;/&/g;
    return $text;
}
sub _form { my ($v) = @_; $v =~ s/([^A-Za-z0-9._~-])/sprintf '%%%02X', ord $1/ge; $v }

# login(URL, USER, PASSWORD, UNTIL): follows the provider's redirects from URL (its authorization
# URL, as purser's start answered), signing in at its form, until a Location starts with UNTIL
# (purser's callback). Returns that Location, or (undef, the provider's last page) when it
# stopped elsewhere (a refused login).
sub login {
    my ($self, $url, $user, $password, $until) = @_;
    my %jar;
    my ($method, $content) = ('GET', undef);
    for (1 .. 20) {
        my %headers = (cookie => join('; ', map { "$_=$jar{$_}" } sort keys %jar));
        $headers{'content-type'} = 'application/x-www-form-urlencoded' if defined $content;
        my $r = $self->{http}->request($method, $url, { headers => \%headers,
            defined $content ? (content => $content) : () });
        _cookies(\%jar, $r);
        ($method, $content) = ('GET', undef);
        if ($r->{status} =~ /^30[1-8]$/) {
            my $next = $r->{headers}{location};
            $next = "$self->{issuer}$next" if $next =~ m{^/};
            return $next if index($next, $until) == 0;
            $url = $next;
            next;
        }
        if ($r->{status} == 200 && $r->{content} =~ /op\.deviceConfirmForm|document\.forms\[0\]\.submit\(\)/
            && $r->{content} =~ /<form[^>]*method="post" action="([^"]+)"/) {
            # a form a browser sends on its own (the device grant's confirmation, its button;
            # a form_post answer, its script): its hidden fields sent back
            my $action = _unescape($1);
            my @fields = $r->{content} =~ /<input type="hidden" name="([\w.-]+)" value="([^"]*)"/g;
            my @pairs;
            while (my ($name, $value) = splice @fields, 0, 2) { push @pairs, "$name=" . _form(_unescape($value)) }
            ($method, $content) = ('POST', join '&', @pairs);
            $url = $action =~ m{^/} ? "$self->{issuer}$action" : $action;
            next;
        }
        return (undef, $r->{content}) unless $r->{status} == 200 && $r->{content} =~ /name="login"/;
        return (undef, $r->{content}) if $r->{content} =~ /role="alert"/;
        ($method, $content) = ('POST', "login=$user&password=$password");
    }
    return (undef, 'too many redirects');
}

1;

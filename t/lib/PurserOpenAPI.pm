# PurserOpenAPI: checks what a test sends and receives against the stack's own GET /docs, with
# Debian's JSON::Validator (its OpenAPI 3 schema). PurserStack calls check() on every request
# it makes: an answer that does not match its operation (status, content type, body) fails
# the test, and so does a request body the server accepted (2xx) that its operation's request
# schema refuses (a refused one may be malformed on purpose). The counts of each test file go
# to build/test-output/openapi/, which t/9999 adds up.
package PurserOpenAPI;
use strict;
use warnings;
use JSON::PP;
use JSON::Validator::Schema::OpenAPIv3;
use File::Path qw(make_path);

sub new {
    my ($class, $doc) = @_;
    my $schema = JSON::Validator::Schema::OpenAPIv3->new($doc);
    my @templates;
    for my $path (keys %{ $doc->{paths} }) {
        my @parts = split m{/}, $path, -1;
        my $literal = grep { !/^\{/ } @parts;
        push @templates, [$path, [ map { /^\{/ ? undef : $_ } @parts ], $literal];
    }
    # the most literal segments first: /revisions/{id}/validations/detail before .../{name}
    @templates = sort { $b->[2] <=> $a->[2] || $a->[0] cmp $b->[0] } @templates;
    return bless { schema => $schema, templates => \@templates, doc => $doc,
                   counts => { answers => 0, requests => 0, mismatches => 0, unmatched => 0 } },
        $class;
}

# The path template of a concrete path (without its query) and its parameters, or ().
sub template {
    my ($self, $path) = @_;
    my @parts = split m{/}, $path, -1;
    T: for my $t (@{ $self->{templates} }) {
        my $want = $t->[1];
        next if @$want != @parts;
        for my $i (0 .. $#parts) {
            next T if defined $want->[$i] ? $want->[$i] ne $parts[$i] : !length $parts[$i];
        }
        my @names = $t->[0] =~ /\{([^}]+)\}/g;
        my @values = map { $parts[$_] } grep { !defined $want->[$_] } 0 .. $#parts;
        my %params;
        @params{@names} = map { s/%([0-9A-Fa-f]{2})/chr hex $1/ger } @values;
        return ($t->[0], \%params);
    }
    return ();
}

# The query string as {name: value} (the last of a repeated name).
sub query_of {
    my ($query) = @_;
    my %q;
    for my $pair (split /&/, $query // '') {
        my ($k, $v) = map { (s/\+/ /gr) =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ger } split /=/, $pair, 2;
        $q{$k} = $v // '' if defined $k && length $k;
    }
    return \%q;
}

# The body as the validator takes it: decoded by its content type.
sub body_of {
    my ($type, $text) = @_;
    return { exists => 0 } unless defined $text && length $text;
    $type = lc(($type // '') =~ s/;.*//r);
    my $value;
    if ($type eq 'application/json' || $type =~ /\+json$/) {
        $value = eval { JSON::PP->new->allow_nonref->decode($text) };
        return { exists => 1, value => $text, content_type => $type, undecodable => 1 } if $@;
    } elsif ($type eq 'application/x-yaml') {
        require YAML::XS;
        local $YAML::XS::Boolean = 'JSON::PP'; # not perl's read-only yes and no
        my @docs = eval { YAML::XS::Load($text) };
        return { exists => 1, value => $text, content_type => $type, undecodable => 1 } if $@;
        $value = @docs == 1 && ref $docs[0] ne 'ARRAY' ? $docs[0] : [ grep { defined } @docs ];
        $value = $docs[0] if @docs == 1 && !defined $docs[0];
    } else {
        $value = $text;
    }
    return { exists => 1, value => $value, content_type => $type };
}

# Checks one exchange; returns the problems found (strings), none when it matches.
sub check {
    my ($self, $method, $path_query, $request_headers, $request_body, $res) = @_;
    my ($path, $query) = split /\?/, $path_query, 2;
    my ($template, $params) = $self->template($path);
    my $status = $res->{status};
    if (!$template || !$self->{doc}{paths}{$template}{ lc $method }) {
        $self->{counts}{unmatched}++;
        # listed for t/9999, unless it is a documented operation's HEAD (of its GET) or its path
        # with a trailing slash, which the router takes as the path without
        (my $bare = $path) =~ s{(?<=.)/+$}{};
        my ($same) = $self->template($bare);
        $self->{outside}{"$status $method $path"}++
            unless $same && $self->{doc}{paths}{$same}{ $method eq 'HEAD' ? 'get' : lc $method };
        return ();
    }
    # no body to check: HEAD, 304, and what never reached purser (HTTP::Tiny's own 599)
    return () if $method eq 'HEAD' || $status == 304 || $status == 599;
    my @problems;
    my $body = body_of($res->{headers}{'content-type'}, $res->{content});
    if ($body->{undecodable}) {
        push @problems, "the $body->{content_type} answer does not parse";
    } else {
        my $responses = $self->{doc}{paths}{$template}{ lc $method }{responses};
        my $key = $responses->{$status} ? $status : substr($status, 0, 1) . 'XX';
        return $self->unlisted($method, $template, $status) unless $responses->{$key};
        my @errors = $self->{schema}->validate_response([lc $method, $template, $key], {
            body => sub { $body },
            header => sub { my ($name) = @_; my $v = $res->{headers}{ lc $name };
                            { exists => defined $v, value => $v } } });
        push @problems, map { "answer $status: $_" } @errors;
        $self->{counts}{answers}++;
    }
    if ($status =~ /^2/) { # accepted: what was sent is what the operation documents
        # (a body sent to an operation that takes none is not read: not checked)
        my $takes = $self->{doc}{paths}{$template}{ lc $method }{requestBody};
        my $sent = $takes ? body_of($request_headers->{'content-type'}, $request_body)
                          : { exists => 0 };
        # an operation that takes any content type takes the bytes as they are
        $sent = { exists => 1, value => $request_body, content_type => '*/*' }
            if $takes && $takes->{content}{'*/*'} && defined $request_body;
        my @errors = $sent->{undecodable} ? ("the $sent->{content_type} body does not parse")
            : $self->{schema}->validate_request([lc $method, $template], {
                body => sub { $sent }, path => $params, query => query_of($query),
                header => sub { my $v = $request_headers->{ lc $_[0] };
                                { exists => defined $v, value => $v } } });
        push @problems, map { "request body (accepted): $_" } @errors;
        $self->{counts}{requests}++;
    }
    $self->{counts}{mismatches}++ if @problems;
    return map { "$method $template: $_" } @problems;
}

# An answer whose status the operation does not list at all: a mismatch.
sub unlisted {
    my ($self, $method, $template, $status) = @_;
    $self->{counts}{mismatches}++;
    return "$method $template: answer $status: a status the operation does not list";
}

# Writes this test file's counts for the suite's total.
sub save_counts {
    my ($self, $dir, $name) = @_;
    make_path($dir);
    open my $fh, '>>', "$dir/$name.tsv" or return;
    print $fh join("\t", map { "$_=$self->{counts}{$_}" } sort keys %{ $self->{counts} }), "\n";
    close $fh;
    open $fh, '>>', "$dir/$name.outside" or return;
    print $fh "$_\n" for sort keys %{ $self->{outside} || {} };
}

1;

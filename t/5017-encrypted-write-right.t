#!/usr/bin/perl
# 5017: the right to write encrypted documents (write_encrypted_document), decided once per
# request and read by every write that touches one: a principal that may write cleartext
# documents but not encrypted ones cannot add, change, delete or roll back an encrypted
# document (403, the store unchanged), a refused payload is logged as a denial, and its
# cleartext writes still land.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use PurserStack;
use Test::More;

my $s = PurserStack->new;
my $org = $s->env('PURSER_ORG');

# the reader role, given write_cleartext_document (and not write_encrypted_document)
my $default = do { open my $fh, '<', PurserStack::root() . '/policies/default.yaml' or die; local $/; <$fh> };
(my $policy = $default) =~ s/(  reader:\n(?:.*\n)*?    actions:\n)/$1      - write_cleartext_document\n/
    or die 'no reader role';
my $file = $s->dir . '/policy.yaml';
{ open my $fh, '>', $file or die; print $fh $policy; close $fh }
$s->use_policy_file($file);
my @old = $s->worker_pids;
kill 'HUP', $s->master_pid;
ok PurserStack::wait_for(5, sub { my %o = map { $_ => 1 } @old; my @w = $s->worker_pids; @w == 2 && !grep { $o{$_} } @w }),
    'the workers took the policy';

$s->api('POST', '/users', { username => 'clerk' });
$s->api('POST', "/organizations/$org/users", { username => 'clerk', roles => ['reader'] });
my (undef, $tok) = $s->api('POST', '/users/clerk/tokens', {});
my $clerk = $tok->{token};

sub doc {
    my ($name, $policy, $value) = @_;
    return "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . "  storagePolicy: $policy\n  layeringDefinition:\n    abstract: false\n    layer: site\n"
        . "data: {v: $value}\n";
}
sub revisions { my (undef, $d) = $s->yaml('GET', '/api/v1.0/revisions'); return $d->[0]{count} }

my ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/b/documents', doc('sealed', 'encrypted', 1) . doc('plain', 'cleartext', 1));
is $r->{status}, 200, 'the admin writes an encrypted and a cleartext document';
my $count = revisions();

($r, $d) = $s->yaml('POST', '/api/v1.0/documents?bucket=c', doc('new-sealed', 'encrypted', 2), $clerk);
is $r->{status}, 403, 'the clerk cannot add an encrypted document';
like $d->[0]{message}, qr/missing permission: action 'write_encrypted_document'/, '  naming the action';
ok scalar(grep { /access denied/ && /"principal":"clerk"/ && /"action":"write_encrypted_document"/ } $s->log_lines('purser-fcgi.log')),
    '  and the denial is logged';

($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/b/documents', doc('sealed', 'encrypted', 3) . doc('plain', 'cleartext', 1), $clerk);
is $r->{status}, 403, 'nor change one';

($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/b/documents', doc('plain', 'cleartext', 2), $clerk);
is $r->{status}, 403, 'nor delete one by leaving it out of its bucket';
like $d->[0]{message}, qr/encrypted document \[example\/Kind\/v1, site\] sealed needs write_encrypted_document/, '  naming it';

($r, $d) = $s->yaml('DELETE', '/api/v1.0/documents/example/Kind/v1/sealed', undef, $clerk);
is $r->{status}, 403, 'nor delete it by name';

($r, $d) = $s->yaml('POST', '/api/v1.0/rollback/0', undef, $clerk);
is $r->{status}, 403, 'nor roll back past it';
like $d->[0]{message}, qr/sealed needs write_encrypted_document/, '  naming it';

is revisions(), $count, 'none of them made a revision';

($r, $d) = $s->yaml('POST', '/api/v1.0/documents?bucket=c', doc('other', 'cleartext', 1), $clerk);
is $r->{status}, 200, 'the clerk still writes cleartext documents';
is revisions(), $count + 1, '  in a new revision';

($r, $d) = $s->yaml('POST', '/api/v1.0/documents?bucket=c', doc('new-sealed', 'encrypted', 2));
is $r->{status}, 200, 'the admin adds the encrypted document';

PurserStack::finish();

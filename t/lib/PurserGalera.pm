# PurserGalera: what t/9005 and t/9006 share about a three-node Galera cluster of tools/galera
# (started by itself, or under tools/hosts): each node's SQL by its socket, its wsrep status,
# the wait until the nodes are in step, the writes both tests make under faults (a policy
# upload that moves a group's pointer, a document bucket write) and what a node holds of them.
package PurserGalera;
use strict;
use warnings;
use Exporter qw(import);
use POSIX ();
use PurserStack;

our @EXPORT_OK = qw(lock_for doc_yaml put_policy put_document);

# new(DIR): the cluster whose node N listens on DIR/nodeN/mariadb.sock
sub new {
    my ($class, $dir) = @_;
    return bless { dir => $dir }, $class;
}

# sql(N, QUERY, QUIET): node N's rows, each a list of columns (the purser database, as root);
# QUIET: the client's errors are not shown (a node that is down answers nothing)
sub sql {
    my ($self, $n, $query, $quiet) = @_;
    my $pid = open(my $fh, '-|') // die "fork: $!";
    if (!$pid) {
        open STDERR, '>', '/dev/null' if $quiet;
        exec 'mariadb', '--no-defaults', "--socket=$self->{dir}/node$n/mariadb.sock",
            '-uroot', '-N', '-B', '-e', $query, 'purser' or POSIX::_exit(127);
    }
    my @rows = map { chomp; [ split /\t/, $_, -1 ] } <$fh>;
    close $fh;
    return @rows;
}

# status(N, VARIABLE): node N's SHOW STATUS value ('' when the node does not answer)
sub status {
    my ($self, $n, $var) = @_;
    my ($row) = eval { $self->sql($n, "SHOW STATUS LIKE '$var'", 1) };
    return $row ? $row->[1] : '';
}

# in_step(SECONDS): waits until the three nodes have committed the same last write-set
sub in_step {
    my ($self, $seconds) = @_;
    return PurserStack::wait_for($seconds, sub {
        my @c = map { $self->status($_, 'wsrep_last_committed') } 1 .. 3;
        $c[0] ne '' && $c[0] eq $c[1] && $c[1] eq $c[2] });
}

sub org_id {
    my ($self, $org) = @_;
    my ($row) = $self->sql(1, "SELECT id FROM organizations WHERE name = '$org'");
    return $row ? $row->[0] : undef;
}

# policy_revisions(N): { "POLICY/REVISION" => 1 } of every revision node N holds
sub policy_revisions {
    my ($self, $n) = @_;
    return { map { ("$_->[0]/$_->[1]" => 1) } $self->sql($n,
        'SELECT p.name, r.revision_id FROM policy_revisions r JOIN policies p ON p.id = r.policy_id') };
}

# document_ids(N, ORG_ID): the organization's document revision ids on node N, in order
sub document_ids {
    my ($self, $n, $org_id) = @_;
    return map { $_->[0] } $self->sql($n, "SELECT id FROM doc_revisions WHERE org_id = $org_id ORDER BY id");
}

# documents(N, ORG_ID): one row per revision and document it holds, [revision, bucket, data]
# (each stored row holds revisions [revision_id, until_revision)), by revision then bucket
sub documents {
    my ($self, $n, $org_id) = @_;
    return $self->sql($n, 'SELECT r.id, b.name, c.data FROM doc_revision_documents d '
        . 'JOIN doc_revisions r ON r.org_id = d.org_id AND r.id >= d.revision_id AND r.id < d.until_revision '
        . 'JOIN doc_buckets b ON b.id = d.bucket_id JOIN doc_contents c ON c.id = d.content_id '
        . "WHERE d.org_id = $org_id ORDER BY r.id, b.name");
}

# lock_for(NAME, REVISION): a policy lock whose revision_id is REVISION
sub lock_for {
    my ($name, $rev) = @_;
    return { revision_id => $rev, name => $name, run_list => ['recipe[base::default]'],
             cookbook_locks => { base => { version => '1.0.0', identifier => "id-$rev" } },
             default_attributes => { step => $rev }, override_attributes => {} };
}

# doc_yaml(NAME, VALUE): one document NAME whose data is { value: VALUE }
sub doc_yaml {
    my ($name, $value) = @_;
    return "---\nschema: example/Kind/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: $name\n"
        . "  layeringDefinition:\n    abstract: false\n    layer: site\ndata:\n  value: $value\n";
}

# put_policy(CLIENT, BASE, X, I): uploads policy p-X's revision X-I to group g-X through CLIENT
# (a PurserStack), under BASE (/organizations/ORG); returns (response, "X-I")
sub put_policy {
    my ($c, $base, $x, $i) = @_;
    my ($r) = $c->api('PUT', "$base/policy_groups/g-$x/policies/p-$x", lock_for("p-$x", "$x-$i"));
    return ($r, "$x-$i");
}

# put_document(CLIENT, BUCKET, NAME, VALUE): writes the bucket as one document NAME of VALUE;
# returns (response, the revision it made, '' unless acknowledged)
sub put_document {
    my ($c, $bucket, $name, $value) = @_;
    my ($r, $d) = $c->yaml('PUT', "/api/v1.0/buckets/$bucket/documents", doc_yaml($name, $value));
    return ($r, $r->{status} =~ /^2/ && ref $d->[0] eq 'HASH' ? $d->[0]{status}{revision} // '' : '');
}

1;

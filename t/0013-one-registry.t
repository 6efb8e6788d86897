# lib/registry: the one list of the kinds. Fails when a list elsewhere names a kind: the route
# table's generic rows, the admin pages' navigation, event links and reference areas, purserctl's
# kinds and apply, and export and import walk the registry instead (docs/developer.md, "Adding a kind").
# The registry is read from its source, lib/registry/registry.c. ROOT (default .) is the tree.
use strict;
use warnings;
use Test::More;

my $root = $ENV{ROOT} // '.';

sub slurp {
    my ($path) = @_;
    open my $fh, '<', "$root/$path" or die "$path: $!";
    local $/;
    return <$fh>;
}

# ---- the registry's rows ---------------------------------------------------------------------
my $source = slurp('lib/registry/registry.c');
my ($table) = $source =~ /registry_kinds\[\] = \{(.*?)\n\};/s or die 'no registry_kinds[] table';
my @kinds;
for my $row (split /\n    \{(?=\.name = )/, $table) {
    my %k;
    ($k{name}) = $row =~ /\.name = "([^"]+)"/ or next;
    ($k{plural}) = $row =~ /\.plural = "([^"]+)"/;
    ($k{envelope}) = $row =~ /\.envelope = "([^"]+)"/;
    ($k{list}) = $row =~ /\.list = (?:ORG )?"([^"]+)"/;
    ($k{item}) = $row =~ /\.item = (?:ORG )?"([^"]+)"/;
    $k{generic} = $row =~ /\.generic = 1/ ? 1 : 0;
    ($k{transfer}) = $row =~ /\.transfer = &(\w+)/;
    ($k{rank}) = $row =~ /\.export_rank = (\d+)/;
    $k{events} = [$row =~ /\{\.kind = "([^"]+)"/g];
    ($k{segment}) = ($k{list} // '') =~ m{/([^/{}]+)$};
    push @kinds, \%k;
}
ok scalar(@kinds) >= 10, 'the registry lists the kinds (' . join(' ', map { $_->{name} } @kinds) . ')';
my ($cluster) = grep { $_->{name} eq 'cluster' } @kinds;
ok $cluster && $cluster->{generic} && $cluster->{segment} eq 'clusters',
    'clusters are a generic kind of it, at .../clusters';
for my $identity (qw(organization user client member token)) {
    ok((grep { $_->{name} eq $identity } @kinds), "the identity kind $identity is a row of it");
}

# What names kind k in a file: its path (the list's last segment after a quote, a backquote or
# the } of ${...}: "/clusters", ORG "/clusters", `${o}/clusters`), and, with words, its name,
# plural, envelope and event kinds as a quoted string.
sub offences {
    my ($text, $k, $words) = @_;
    my @found;
    my $s = quotemeta($k->{segment} // '');
    my $before = qr/["'`\}]\s*/;
    push @found, "path /$k->{segment}" if length $s && $text =~ /$before\/$s(?![\w-])/;
    my @names = grep { defined } ($k->{envelope}, ($words ? ($k->{name}, $k->{plural}, @{ $k->{events} }) : ($k->{plural})));
    for my $name (@names) {
        my $n = quotemeta $name;
        # (an element's id or label target is not a kind: the sign-in's field is #token)
        push @found, "'$name'" if $text =~ /(?<!id: )(?<!for: )(["'`])$n\1/;
    }
    return @found;
}

# ---- the route table: the generic routes come from the registry, not a row per kind ----------
my $routes = slurp('fcgi/routes.c');
for my $handler (qw(resources_list resource_show resource_put resource_merge resource_remove)) {
    my $count = () = $routes =~ /H\($handler\)/g;
    is $count, 1, "fcgi/routes.c names the generic handler $handler once (its template row)";
}
unlike $routes, qr/^\s*RESOURCE\(/m, 'fcgi/routes.c has no RESOURCE() row: a kind is a registry row';

# ---- the admin pages' shell, event links and reference: no kind named at all -----------------
my %own = ('nginx/admin/pages/events.js' => 'event'); # the event feed's own page names its kind
for my $file (qw(nginx/admin/app.js nginx/admin/pages/events.js nginx/admin/reference/reference.js)) {
    my $text = slurp($file);
    my @found = map { my $k = $_; map { "$k->{name}: $_" } offences($text, $k, 1) }
        grep { !$own{$file} || $_->{name} ne $own{$file} } @kinds;
    is_deeply \@found, [], "$file names no kind (it reads them from /docs' x-purser-kinds)"
        or diag explain \@found;
}

# ---- purserctl, export and import, the web layer: no kind of the convention named ------------
# (a new kind of the convention is one registry row: it needs no line in these files; the kind's
# own handlers, fcgi/<plural>.c, and its own routes in fcgi/routes.c are its own)
my @files = (qw(client/kinds.c client/apply.c), map { s{^\Q$root\E/}{}r } glob("$root/lib/transfer/*.c"),
    map { s{^\Q$root\E/}{}r } glob("$root/fcgi/*.c"));
for my $file (@files) {
    next if $file eq 'fcgi/routes.c';
    my $text = slurp($file);
    my @found = map { my $k = $_; map { "$k->{name}: $_" } offences($text, $k, 0) }
        grep { $_->{generic} && $file ne "fcgi/$_->{plural}.c" } @kinds;
    is_deeply \@found, [], "$file names no kind of the resource convention"
        or diag explain \@found;
}

# ---- export and import: lib/transfer names no kind at all ------------------------------------
# (a kind's export, check and import are its transfer hooks, in its own lib file; its row points
# at them: `.transfer = &X`, and X, `const struct transfer_hooks X = {{{"Kind", ...}, ...}}`,
# lists the envelopes it writes: the revision row's DocumentBucket, RevisionTag and Validation)
my $libs = join '', map { slurp(s{^\Q$root\E/}{}r) } glob("$root/lib/*/*.c");
my %envelopes;
for my $k (@kinds) {
    $envelopes{$k->{envelope}} = $k->{name} if defined $k->{envelope};
    next unless $k->{transfer};
    my ($hooks) = $libs =~ /struct transfer_hooks \Q$k->{transfer}\E = \{(.*?)\};/s;
    ok defined $hooks, "$k->{name}: its transfer hooks $k->{transfer} are in lib/";
    my @written = ($hooks // '') =~ /\{\s*"([A-Z]\w+)"\s*,/g;
    is $written[0], $k->{envelope}, "$k->{name}: its hooks write its envelope first (@written)";
    $envelopes{$_} = $k->{name} for @written;
}
{ # an export's order is the ranks': each once, the Organization's first (the rest refer to it)
    my @ranked = sort { $a->{rank} <=> $b->{rank} } grep { $_->{rank} } @kinds;
    my %rows;
    push @{ $rows{$_->{rank}} }, $_->{name} for @ranked;
    is_deeply [ map { "$_: @{ $rows{$_} }" } grep { @{ $rows{$_} } > 1 } sort keys %rows ], [],
        'no two exported rows share an export_rank';
    is $ranked[0]{envelope}, 'Organization', 'the Organization has the lowest export_rank';
}
ok $envelopes{RevisionTag} && $envelopes{Validation},
    'the envelopes an export writes include those of no row of their own (RevisionTag, Validation)';
sub envelope_offences {
    my ($text) = @_;
    return map { "'$_' ($envelopes{$_})" } grep { $text =~ /"\Q$_\E"/ } sort keys %envelopes;
}
for my $file (map { s{^\Q$root\E/}{}r } glob("$root/lib/transfer/*.[ch]")) {
    my @found = envelope_offences(slurp($file));
    is_deeply \@found, [], "$file names no kind's envelope (it walks the registry's rows)"
        or diag explain \@found;
}
is_deeply [envelope_offences(q{{"Node", NULL, import_node}, {"RevisionTag", NULL, import_tag}})],
    ["'Node' (node)", "'RevisionTag' (revision)"], 'a table of transfer naming Node and RevisionTag is found';

# ---- the event log: no kind's events listed in lib/store/events.c ------------------------------
# (each row describes its events, registry_event's description; registry_events_register)
{
    my $text = slurp('lib/store/events.c');
    my @found = map { my $k = $_; map { "$k->{name}: '$_'" } grep { $text =~ /"\Q$_\E"/ } @{ $k->{events} } } @kinds;
    is_deeply \@found, [], 'lib/store/events.c names no kind\'s event (the registry describes them)'
        or diag explain \@found;
    my @described = $source =~ /\.description\s*=\s*"/g;
    cmp_ok scalar(@described), '>=', 18, 'the registry\'s rows describe the core\'s events';
}

# ---- purserctl's paths of every kind, the identity and Chef kinds' too: the registry's ----------
# (client/kinds.c and client/apply.c write REG_LIST and REG_ITEM for a row's own paths; a path
# under another kind's, a policy group's nodes, is the row's own)
sub path_offences {
    my ($text, $k) = @_;
    my @found;
    for my $path (grep { defined && length } $k->{list}, $k->{item}) {
        my @forms = ($path);
        push @forms, $1 if $path =~ m{^/api/v1\.0(/.+)$}; # DOCS "/revisions"
        push @found, "path $path" if grep { $text =~ /"\Q$_\E"/ } @forms;
    }
    return @found;
}
for my $file (qw(client/kinds.c client/apply.c)) {
    my $text = slurp($file);
    my @found = map { my $k = $_; map { "$k->{name}: $_" } path_offences($text, $k) } @kinds;
    is_deeply \@found, [], "$file writes no registry kind's list or item path (REG_LIST, REG_ITEM)"
        or diag explain \@found;
}
is_deeply [path_offences(q{{"node", "nodes", NULL, 1, ORG "/nodes", ORG "/nodes/{node}"}},
    (grep { $_->{name} eq 'node' } @kinds)[0])], ['path /nodes', 'path /nodes/{node}'],
    "a purserctl row writing nodes' paths is found";
is_deeply [path_offences(q{{"revision", "revisions", NULL, 1, DOCS "/revisions", NULL}},
    (grep { $_->{name} eq 'revision' } @kinds)[0])], ['path /api/v1.0/revisions'],
    "a purserctl row writing the document API's revisions path is found";

# ---- the check can fail: a list that names a kind is found --------------------------------------
is_deeply [offences(q{const sections = [['clusters', 'Clusters']];}, $cluster, 1)], ["'clusters'"],
    'a navigation entry naming clusters is found';
is_deeply [offences(q{{"cluster", "clusters", NULL, 1, ORG "/clusters", ...}}, $cluster, 0)],
    ['path /clusters', "'clusters'"], "a purserctl row naming clusters' path is found";
is_deeply [offences(q{{.kind = "Cluster", .item = ORG "/clusters/{id}"}}, $cluster, 0)],
    ['path /clusters', "'Cluster'"], 'an apply row naming the envelope is found';

done_testing;

# bench/fleet-fill.pl: bench/fleet's part 3 (required by it, not run alone): MariaDB's own
# account of a step (the slow log at 0 s: every statement, its time and the rows it examined,
# grouped by shape), the tables filled to ten times the sustained fleet, and the sustained rate
# measured again.
#
# The fill writes, in batches of INSERT ... SELECT over MariaDB's sequence tables, rows copied
# from rows the API wrote during the run, with the name changed everywhere it appears:
#   clients   principals (a fresh revision each), principal_keys (the template's public key),
#             memberships (role node), one "client" event each
#   nodes     the body of a node a run saved (name and hostname replaced; up to FLEET_FILL_BYTES
#             of them, the rest the body a node's first POST writes), its client as creator,
#             one "node" event each
#   events    FLEET_EVENT_DAYS days of node saves (at most FLEET_FILL_EVENTS) ("node" put, actor the node), spread over the
#             days before now, seq continuing the organization's, event_counters moved on
#   clusters  resources, resource_labels, resource_values and bootstrap_tokens as the API wrote
#             them for cluster001, 100 facts versions each (inventory.facts_versions) and their
#             events
#   revisions FLEET_REVISIONS (100) bucket revisions through the API (a revision spans several tables
#             whose rows depend on the ones before: not copied)
package FleetFill;
use strict;
use warnings;
use Time::HiRes qw(time);

# shape(SQL): the statement with its literals replaced by ?, as a digest would show it
sub shape {
    my ($q) = @_;
    $q =~ s/\\.//gs; # (escapes first: a long string of them would exhaust a regex's recursion)
    $q =~ s/'[^']*'/?/g;
    $q =~ s/\b\d+(?:\.\d+)?\b/?/g;
    $q =~ s/\(\s*\?(?:\s*,\s*\?)+\s*\)/(?...)/g;
    $q =~ s/\s+/ /g;
    return substr($q, 0, 150);
}

# profile(A, LABEL, RATE, SECONDS): a step at RATE with every statement in the slow log;
# returns {shape => {count, seconds, rows, example}} and the step.
sub profile {
    my ($a, $label, $rate, $seconds) = @_;
    my $sql = $a->{sql};
    my $log = $a->{slow_log};
    my $offset = -s $log // 0;
    # a session copies slow_query_log when it connects: new workers (a SIGHUP) take it up
    $sql->("SET GLOBAL slow_query_log = 1");
    $a->{reload}->();
    my $s = $a->{run_step}->($rate, $seconds, ${ $a->{seed} }++);
    $sql->("SET GLOBAL slow_query_log = 0");
    $a->{reload}->();
    $a->{show_step}->($label, $s);
    my %by;
    open my $fh, '<', $log or return (\%by, $s);
    seek $fh, $offset, 0;
    my $text = do { local $/; <$fh> } // '';
    for my $entry (split /^# User\@Host: /m, $text) {
        next unless $entry =~ /^purser\[/ && $entry =~ /Query_time: (\S+)\s+Lock_time: \S+\s+Rows_sent: \d+\s+Rows_examined: (\d+)/;
        my ($t, $rows) = ($1, $2);
        my @lines = split /\n/, $entry;
        shift @lines;
        my $q = join ' ', grep { !/^(?:#|use |SET timestamp=)/ && /\S/ } @lines;
        $q =~ s/;\s*$//;
        next if $q !~ /^\s*(?:SELECT|INSERT|UPDATE|DELETE|REPLACE)\b/i;
        my $k = shape($q);
        my $e = $by{$k} //= { count => 0, seconds => 0, rows => 0, example => $q };
        $e->{count}++;
        $e->{seconds} += $t;
        $e->{rows} += $rows;
    }
    return (\%by, $s);
}

sub show_profile {
    my ($label, $by, $top) = @_;
    my $all = 0;
    $all += $_->{seconds} for values %$by;
    printf "MariaDB's statements, %s (slow log at 0 s): %.1f s in all; the %d with the most time:\n", $label, $all, $top;
    printf "  %6s %7s %6s %9s  %s\n", 'time%', 'count', 'ms', 'rows/stmt', 'statement';
    for my $k ((sort { $by->{$b}{seconds} <=> $by->{$a}{seconds} } keys %$by)[0 .. $top - 1]) {
        next unless defined $k;
        my $e = $by->{$k};
        printf "  %5.1f%% %7d %6.2f %9.1f  %s\n", 100 * $e->{seconds} / ($all || 1), $e->{count},
            1000 * $e->{seconds} / $e->{count}, $e->{rows} / $e->{count}, $k;
    }
}

sub fill {
    my ($a, $fleet) = @_;
    my $sql = $a->{sql};
    my $org = $sql->("SELECT id FROM organizations WHERE name = '$a->{org}'") + 0;
    my $target = int(10 * $fleet);
    my $batch = 20000;
    my $template = $a->{nodes}[0];
    my $node_bytes = $sql->("SELECT LENGTH(body) FROM nodes WHERE org_id = $org AND name = '$template'") + 0;
    my $full = $ENV{FLEET_FILL_BYTES} // 2e9;
    $full = int($full / ($node_bytes || 1));
    $full = $target if $full > $target;
    my $light = $sql->("SELECT body FROM nodes WHERE org_id = $org AND name = 'fill-first-post'");
    chomp $light;
    $a->{say}->(sprintf 'fill: %d clients and nodes (%d with a saved node\'s %d KB, the rest as first POSTed)', $target, $full, $node_bytes / 1024);
    my $t0 = time;
    for (my $from = 1; $from <= $target; $from += $batch) {
        my $to = $from + $batch - 1;
        $to = $target if $to > $target;
        my $name = "CONCAT('fill', LPAD(seq, 7, '0'))";
        $sql->("SET SESSION foreign_key_checks = 1;
          INSERT INTO principals (kind, org_id, name, revision)
            SELECT 'client', $org, $name, LEFT(MD5(CONCAT(RAND(), seq)), 16) FROM seq_${from}_to_$to;
          INSERT INTO principal_keys (principal_id, name, public_key, expires_at)
            SELECT p.id, 'default', k.public_key, NULL FROM principals p
            JOIN principal_keys k ON k.principal_id = (SELECT id FROM principals WHERE kind = 'client' AND org_id = $org AND name = '$template') AND k.name = 'default'
            WHERE p.kind = 'client' AND p.org_scope = $org AND p.name BETWEEN CONCAT('fill', LPAD($from, 7, '0')) AND CONCAT('fill', LPAD($to, 7, '0'));
          INSERT INTO memberships (org_id, principal_id, role)
            SELECT $org, p.id, 'node' FROM principals p
            WHERE p.kind = 'client' AND p.org_scope = $org AND p.name BETWEEN CONCAT('fill', LPAD($from, 7, '0')) AND CONCAT('fill', LPAD($to, 7, '0'));
          INSERT INTO nodes (org_id, name, policy_name, policy_group, body, creator_id, created_at, updated_at)
            SELECT $org, p.name, 'app', 'prod',
                   IF(seq <= $full, REPLACE(t.body, '$template', p.name), REPLACE(l.body, 'fill-first-post', p.name)),
                   p.id, NOW(6) - INTERVAL 2 DAY, NOW(6) - INTERVAL (seq % 1800) SECOND
            FROM seq_${from}_to_$to JOIN principals p ON p.kind = 'client' AND p.org_scope = $org AND p.name = $name
            JOIN nodes t ON t.org_id = $org AND t.name = '$template'
            JOIN nodes l ON l.org_id = $org AND l.name = 'fill-first-post';");
    }
    $a->{say}->(sprintf '  clients, keys, memberships, nodes: %.0f s', time - $t0);

    # events: each filled client's and node's creation, then days of node saves
    my $days = $ENV{FLEET_EVENT_DAYS} // 1;
    my $saves = int($target * 48 * $days);
    my $cap = $ENV{FLEET_FILL_EVENTS} // 5e6;
    if ($saves > $cap) {
        $a->{say}->(sprintf '  (node-save events capped at %d of the %d a day makes: FLEET_FILL_EVENTS)', $cap, $saves);
        $days = $days * $cap / $saves;
        $saves = int($cap);
    }
    my $last = $sql->("SELECT last_seq FROM event_counters WHERE org_id = $org") + 0;
    $t0 = time;
    $sql->("INSERT INTO events (org_id, seq, kind, name, op, revision, actor, at, detail)
              SELECT $org, $last + 2 * seq - 1, 'client', CONCAT('fill', LPAD(seq, 7, '0')), 'put', NULL, 'admin', NOW(6) - INTERVAL 2 DAY, NULL FROM seq_1_to_$target;
            INSERT INTO events (org_id, seq, kind, name, op, revision, actor, at, detail)
              SELECT $org, $last + 2 * seq, 'node', CONCAT('fill', LPAD(seq, 7, '0')), 'put', NULL, CONCAT('fill', LPAD(seq, 7, '0')), NOW(6) - INTERVAL 2 DAY, NULL FROM seq_1_to_$target;");
    $last += 2 * $target;
    for (my $from = 1; $from <= $saves; $from += 10 * $batch) {
        my $to = $from + 10 * $batch - 1;
        $to = $saves if $to > $saves;
        $sql->("INSERT INTO events (org_id, seq, kind, name, op, revision, actor, at, detail)
          SELECT $org, $last + seq, 'node', CONCAT('fill', LPAD(1 + seq % $target, 7, '0')), 'put', NULL,
                 CONCAT('fill', LPAD(1 + seq % $target, 7, '0')), NOW(6) - INTERVAL ($saves - seq) * $days * 86400 / $saves SECOND, NULL
          FROM seq_${from}_to_$to");
    }
    $last += $saves;

    # clusters: one per 50 nodes of the 10x fleet, 100 facts versions each
    my $clusters = int($target / 50) || 1;
    my $cid = $sql->("SELECT id FROM resources WHERE org_id = $org AND kind = 'cluster' AND name = 'c-cluster001'") + 0;
    my $cname = "CONCAT('c-fill', LPAD(seq, 6, '0'))";
    $sql->("INSERT INTO resources (org_id, kind, name, revision, title, labels, annotations, description, spec, status, created_at, updated_at)
              SELECT $org, 'cluster', $cname, LEFT(MD5(CONCAT(RAND(), seq)), 16), REPLACE(title, 'cluster001', CONCAT('fill', LPAD(seq, 6, '0'))),
                     labels, annotations, description, REPLACE(spec, 'cluster001', CONCAT('fill', LPAD(seq, 6, '0'))),
                     REPLACE(status, 'c-cluster001', $cname), created_at, updated_at
              FROM seq_1_to_$clusters JOIN resources r ON r.id = $cid;
            INSERT INTO resource_labels (resource_id, org_id, kind, name, lkey, lvalue)
              SELECT n.id, n.org_id, n.kind, n.name, l.lkey, l.lvalue FROM resources n JOIN resource_labels l ON l.resource_id = $cid
              WHERE n.org_id = $org AND n.kind = 'cluster' AND n.name LIKE 'c-fill%';
            INSERT INTO resource_values (resource_id, org_id, kind, name, path, value, version)
              SELECT n.id, n.org_id, n.kind, n.name, v.path, v.value, v.version FROM resources n JOIN resource_values v ON v.resource_id = $cid
              WHERE n.org_id = $org AND n.kind = 'cluster' AND n.name LIKE 'c-fill%';
            INSERT INTO bootstrap_tokens (resource_id, token_sha256, expires_at, used_at)
              SELECT n.id, SHA2(CONCAT(RAND(), n.name), 256), NOW(6) - INTERVAL 1 DAY, NULL FROM resources n
              WHERE n.org_id = $org AND n.kind = 'cluster' AND n.name LIKE 'c-fill%';
            INSERT INTO cluster_facts (resource_id, facts, author, created_at)
              SELECT n.id, f.facts, f.author, NOW(6) - INTERVAL (100 - v.seq) * 15 MINUTE
              FROM resources n JOIN seq_1_to_100 v
              JOIN (SELECT facts, author FROM cluster_facts WHERE resource_id = $cid ORDER BY id DESC LIMIT 1) f
              WHERE n.org_id = $org AND n.kind = 'cluster' AND n.name LIKE 'c-fill%';
            INSERT INTO events (org_id, seq, kind, name, op, revision, actor, at, detail)
              SELECT $org, $last + (c.seq - 1) * 101 + v.seq, IF(v.seq = 1, 'cluster', 'facts'), CONCAT('c-fill', LPAD(c.seq, 6, '0')), 'put',
                     LEFT(MD5(CONCAT(c.seq, v.seq)), 16), 'admin', NOW(6) - INTERVAL (101 - v.seq) * 15 MINUTE, NULL
              FROM seq_1_to_$clusters c JOIN seq_1_to_101 v;");
    $last += $clusters * 101;
    $sql->("UPDATE event_counters SET last_seq = $last WHERE org_id = $org");
    $a->{say}->(sprintf '  %d events (%.1f days of node saves), %d clusters with 100 facts versions each: %.0f s',
                $saves + 2 * $target + 101 * $clusters, $days, $clusters, time - $t0);

    my $revisions = $ENV{FLEET_REVISIONS} // 100;
    $t0 = time;
    open my $fh, '<', $a->{site} or die;
    my $site = do { local $/; <$fh> };
    for my $i (1 .. $revisions) {
        (my $body = $site) =~ s/\@N\@/9$i/;
        $a->{call}->('PUT', '/api/v1.0/buckets/site/documents', $body, 'application/x-yaml');
    }
    $a->{say}->(sprintf '  %d bucket revisions through the API: %.0f s', $revisions, time - $t0);
    $sql->('ANALYZE TABLE principals, principal_keys, memberships, nodes, events, resources, resource_labels, resource_values, cluster_facts, bootstrap_tokens');
}

# EXPLAIN of one example of each of the run's statement shapes that examined the most rows
sub explain {
    my ($args, $by, $top) = @_;
    print "EXPLAIN of the statements examining the most rows a statement at 10x:\n";
    for my $k ((sort { $by->{$b}{rows} / $by->{$b}{count} <=> $by->{$a}{rows} / $by->{$a}{count} } grep { $by->{$_}{example} =~ /^\s*SELECT/i } keys %$by)[0 .. $top - 1]) {
        next unless defined $k;
        my $q = $by->{$k}{example};
        next if length $q > 20000;
        my $plan = eval { $args->{sql}->("EXPLAIN $q") } // '';
        printf "  %.1f rows/stmt: %s\n", $by->{$k}{rows} / $by->{$k}{count}, $k;
        print map { "    $_\n" } split /\n/, $plan;
    }
}

sub run {
    my (%a) = @_;
    my $best = $a{best};
    my $rate = $best->{rate};
    my $seconds = $a{step};
    my ($by1) = profile(\%a, 'profile 1x', $rate, $seconds);
    show_profile('at 1x', $by1, 12);
    $a{sizes}->();
    my $before = $a{sql}->("SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'purser'") + 0;
    fill(\%a, $a{fleet});
    my $after = $a{sql}->("SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'purser'") + 0;
    $a{say}->(sprintf 'the database: %.2f GB before the fill, %.2f GB after', $before / 1e9, $after / 1e9);
    my $s = $a{run_step}->($rate, $seconds, ${ $a{seed} }++);
    $a{show_step}->('10x', $s);
    my $at = $rate;
    unless ($s->{pass}) {
        $at = 0.8 * $rate;
        $s = $a{run_step}->($at, $seconds, ${ $a{seed} }++);
        $a{show_step}->('10x, 0.8', $s);
        $at = 0 unless $s->{pass};
    }
    printf "\nTEN TIMES: %.0f nodes' rows; the run rate sustained at 10x / at 1x: %s (target >= 0.8)\n", 10 * $a{fleet},
        $at ? sprintf('%.2f (%.1f runs/s)', $at / $rate, $at) : 'below 0.8';
    my ($by10) = profile(\%a, 'profile 10x', $rate, $seconds);
    show_profile('at 10x', $by10, 12);
    print "statements whose rows examined grew from 1x to 10x (rows a statement):\n";
    for my $k (sort keys %$by10) {
        next unless $by1->{$k};
        my ($r1, $r10) = ($by1->{$k}{rows} / $by1->{$k}{count}, $by10->{$k}{rows} / $by10->{$k}{count});
        printf "  %9.1f -> %9.1f  %s\n", $r1, $r10, $k if $r10 > 2 * $r1 + 10;
    }
    explain(\%a, $by10, 5);
}

1;

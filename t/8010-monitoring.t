# 8010: the dashboard and the alerting rules in dist/monitoring. promtool checks the rules and
# runs their unit tests (purser.rules.test.yml: each alert firing when it should and silent
# when it should not); then every metric, label and route the dashboard's and the rules'
# queries name is looked for in what a real stack's /metrics answers (with `purser backup
# --metrics`'s file beside it), so that neither can drift from the code.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use PurserStack;

my $root = PurserStack::root();
my $dir = "$root/dist/monitoring";
sub slurp { local (@ARGV, $/) = @_; return scalar <> }
sub run_out { my $out = `@_ 2>&1`; return ($? >> 8, $out) }

# ---- promtool: the rules parse, and their unit tests pass ----
my ($rc, $out) = run_out("promtool check rules '$dir/purser.rules.yml'");
is $rc, 0, 'promtool check rules' or diag $out;
like $out, qr/SUCCESS: (\d+) rules found/, '  and finds the rules';
($rc, $out) = run_out("cd '$dir' && promtool test rules purser.rules.test.yml");
is $rc, 0, 'promtool test rules: every alert fires when it should, and only then' or diag $out;
{
    # every alert of the file has a unit test
    my @alerts = slurp("$dir/purser.rules.yml") =~ /^\s*- alert: (\w+)/mg;
    my %tested = map { $_ => 1 } slurp("$dir/purser.rules.test.yml") =~ /alertname: (\w+)/g;
    is_deeply [ grep { !$tested{$_} } @alerts ], [], scalar(@alerts) . ' alerts, each with a unit test';
}

# ---- the queries: every expression of the rules and of the dashboard ----
my @exprs;
for (slurp("$dir/purser.rules.yml") =~ /^\s*expr: (.*(?:\n\s{10,}.*)*)/mg) {
    (my $e = $_) =~ s/^\|\s*//;
    push @exprs, [ 'rules', $e ];
}
my $dash = decode_json(slurp("$dir/purser-dashboard.json"));
for my $p (@{ $dash->{panels} }) {
    push @exprs, [ "panel '$p->{title}'", $_->{expr} ] for @{ $p->{targets} // [] };
}
for my $v (@{ $dash->{templating}{list} }) {
    push @exprs, [ "variable $v->{name}", $1 ] if ($v->{definition} // '') =~ /^label_values\((.*), \w+\)$/;
}
cmp_ok scalar(@exprs), '>', 40, scalar(@exprs) . ' queries';

my %keyword = map { $_ => 1 } qw(by without on ignoring group_left group_right bool and or unless offset);
my (%metric, %label, %value, %route);
for (@exprs) {
    my ($where, $e) = @$_;
    $e =~ s/\$__rate_interval/5m/g;
    # label names grouped by
    for my $list ($e =~ /\b(?:by|without)\s*\(([^)]*)\)/g) { $label{$_}{$where} = 1 for $list =~ /(\w+)/g }
    # matchers: name="value", name=~"re", name!="value"
    for my $sel ($e =~ /\{((?:[^}"]|"(?:[^"\\]|\\.)*")*)\}/g) {
        while ($sel =~ /(\w+)\s*(=~|!=|!~|=)\s*"((?:[^"\\]|\\.)*)"/g) {
            my ($name, $op, $v) = ($1, $2, $3);
            $label{$name}{$where} = 1;
            if ($name eq 'route') { $route{"$op$v"}{$where} = 1 }
            elsif ($op eq "=" && $v !~ /^\$/ && $name !~ /^(?:job|instance)$/) { $value{"$name=\"$v\""}{$where} = 1 }
        }
    }
    (my $bare = $e) =~ s/"(?:[^"\\]|\\.)*"//g;
    $bare =~ s/\{[^}]*\}|\[[^\]]*\]|\b(?:by|without)\s*\([^)]*\)//g;
    $bare =~ s/\$\w+//g;
    while ($bare =~ /([a-zA-Z_:][\w:]*)(\s*\()?/g) {
        my ($name, $call) = ($1, $2);
        next if $call || $keyword{$name} || $name =~ /^(?:\d|[0-9.]+[smhdwy]$)/ || $name =~ /^(?:e|Inf|NaN)$/;
        $metric{$name}{$where} = 1;
    }
}
ok $metric{purser_http_requests_total} && $metric{purser_key_next_expiry_timestamp_seconds},
   'the queries name purser\'s metrics (' . join(', ', sort keys %metric) . ')';

# ---- a real stack: traffic enough for every family, a key that expires, a backup ----
my $s = PurserStack->new(workers => 2);
my $org = $s->env('PURSER_ORG');
$s->api('GET', "/organizations/$org/nodes") for 1 .. 3;
$s->must('a key that expires', 'POST', '/users/admin/keys',
         { name => 'monitoring', create_key => JSON::PP::true(), expiration_date => '2099-12-31T00:00:00Z' });
my $scrape = $s->request('GET', '/metrics');
is $scrape->{status}, 200, 'GET /metrics';
my $text = $scrape->{content};
like $text, qr/^purser_key_next_expiry_timestamp_seconds 4102358400$/m,
     'the next key expiry: the key added, as Unix time (2099-12-31T00:00:00Z)';
($rc, $out) = run_out("'" . PurserStack::build() . "/purser' -c '" . $s->env('PURSER_CONFIG') .
                      "' backup -o '" . $s->dir . "/backup.sql' --metrics '" . $s->dir . "/purser_backup.prom'");
is $rc, 0, 'purser backup --metrics FILE' or diag $out;
my $prom = -e $s->dir . '/purser_backup.prom' ? slurp($s->dir . '/purser_backup.prom') : '';
like $prom, qr/^purser_backup_last_success_timestamp_seconds (\d+)$/m, '  writes the time of the backup';
my ($when) = $prom =~ /^purser_backup_last_success_timestamp_seconds (\d+)$/m;
ok $when && abs($when - time) < 60, '  which is now';
ok !-e $s->dir . '/purser_backup.prom.tmp', '  written aside and renamed';
($rc, $out) = run_out("promtool check metrics < '" . $s->dir . "/purser_backup.prom'");
is $rc, 0, '  promtool check metrics accepts it' or diag $out;
$text .= $prom;

my %exposed = map { $_ => 1 } $text =~ /^([a-zA-Z_:][\w:]*)(?:\{| )/mg;
$exposed{up} = 1; # Prometheus' own, per target
for my $name (sort keys %metric) {
    ok $exposed{$name}, "metric $name is exposed (" . join(', ', sort keys %{ $metric{$name} }) . ')';
}
my %exposed_label = map { $_ => 1 } $text =~ /[{,](\w+)="/g;
$exposed_label{$_} = 1 for qw(job instance); # Prometheus' target labels
for my $name (sort keys %label) {
    ok $exposed_label{$name}, "label $name is exposed (" . join(', ', sort keys %{ $label{$name} }) . ')';
}
for my $pair (sort keys %value) {
    ok index($text, $pair) >= 0, "label value $pair is exposed (" . join(', ', sort keys %{ $value{$pair} }) . ')';
}
# routes: the route table's templates, as GET /docs lists them
my $docs = decode_json($s->request('GET', '/docs', { headers => { accept => 'application/json' } })->{content});
my @paths = keys %{ $docs->{paths} };
for my $m (sort keys %route) {
    my ($op, $v) = $m =~ /^(=~|!=|!~|=)(.*)$/s;
    (my $re = $v) =~ s/\\\\/\\/g;
    my @hit = $op =~ /~/ ? grep { /^(?:$re)$/ } @paths : grep { $_ eq $v } @paths;
    ok @hit, "route $op\"$v\" names a route of /docs (" . join(', ', sort keys %{ $route{$m} }) . ')';
}

PurserStack::finish();

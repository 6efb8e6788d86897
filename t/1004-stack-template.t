# 1004: a stack whose datadir is a copy of the template (PURSER_TEMPLATE, tools/stack) is one
# made from nothing: the same schema and migrations, and its own instance id, database
# password, keyring and admin. The template is made once and copied after.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use Test::More;
use PurserStack;

sub slurp { open my $fh, '<', $_[0] or return ''; local $/; <$fh> }

my $template = tempdir('purser-template-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my ($a, $b, $fresh);
{
    local $ENV{PURSER_TEMPLATE} = $template;
    $a = PurserStack->new(workers => 1);
    ok -s "$template/t/stamp", 'the first stack made the template';
    { open my $mark, '>', "$template/t/mark" or die "$template/t/mark: $!" } # gone if it is made again
    $b = PurserStack->new(workers => 1);
    ok -e "$template/t/mark", 'the second copied it without making it again';
}
{
    local $ENV{PURSER_TEMPLATE} = '';
    $fresh = PurserStack->new(workers => 1);
}
ok !-e $a->dir . '/log/mariadb-install.log', 'a copy ran no mariadb-install-db';
ok -e $fresh->dir . '/log/mariadb-install.log', 'PURSER_TEMPLATE= (empty) installs from nothing';

my $schema = join ";\n",
    "SELECT table_name, ordinal_position, column_name, column_type, is_nullable, column_default, extra
       FROM information_schema.columns WHERE table_schema = 'purser' ORDER BY 1, 2",
    "SELECT table_name, index_name, seq_in_index, column_name, non_unique
       FROM information_schema.statistics WHERE table_schema = 'purser' ORDER BY 1, 2, 3",
    "SELECT constraint_name, table_name, referenced_table_name, delete_rule
       FROM information_schema.referential_constraints WHERE constraint_schema = 'purser' ORDER BY 1",
    "SELECT trigger_name, event_object_table, action_statement
       FROM information_schema.triggers WHERE trigger_schema = 'purser' ORDER BY 1";
my $want = $fresh->sql($schema);
like $want, qr/schema_migrations/, 'the schema read from a stack names its tables';
is $a->sql($schema), $want, 'a copy has the schema of a stack migrated from nothing';
is $b->sql($schema), $want, 'and so has the second';
my $migrations = 'SELECT version, name FROM schema_migrations ORDER BY version';
is $a->sql($migrations), $fresh->sql($migrations), 'the same migrations recorded';
is $a->sql('SELECT COUNT(*) FROM organizations'), "1\n", 'one organization, the bootstrap\'s';

my @stacks = ($a, $b, $fresh);
my %distinct = (
    'instance id' => sub { $_[0]->sql("SELECT value FROM settings WHERE name = 'instance_id'") },
    'database password' => sub { slurp($_[0]->dir . '/secrets/db-password') },
    'keyring' => sub { slurp($_[0]->dir . '/secrets/keyring') },
    'admin token' => sub { $_[0]->env('PURSER_ADMIN_TOKEN') },
    'admin key' => sub { slurp($_[0]->env('PURSER_ADMIN_KEY')) },
);
for my $what (sort keys %distinct) {
    my %seen = map { $distinct{$what}->($_) => 1 } @stacks;
    delete $seen{''};
    is scalar(keys %seen), 3, "each stack has its own $what";
}
is slurp($a->env('PURSER_CA')), slurp($b->env('PURSER_CA')), 'the copies share the template\'s certificate';

for my $s (@stacks) {
    my ($r) = $s->api('GET', '/organizations/default');
    is $r->{status}, 200, 'each stack answers its own admin';
}
my ($r) = $b->api('GET', '/organizations/default', undef, $a->env('PURSER_ADMIN_TOKEN'));
is $r->{status}, 401, 'and not the admin of another copy';

PurserStack::finish();

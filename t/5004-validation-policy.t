#!/usr/bin/perl
# 5004: ValidationPolicy status (the seed's promise; the real Deckhand never built expiry):
# a policy succeeds only when the latest entry of every validation it names succeeded and
# has not expired; missing and expired count as failed; expiresAfter is per policy and
# validation; the revision detail and listing show it.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use PurserStack;
use Test::More;
use Time::HiRes qw(sleep);

my $s = PurserStack->new;

sub policy {
    my ($name, @validations) = @_;
    my $list = join '', map {
        "  - name: $_->[0]\n" . (defined $_->[1] ? "    expiresAfter: $_->[1]\n" : '')
    } @validations;
    return "---\nschema: deckhand/ValidationPolicy/v1\nmetadata:\n  schema: metadata/Control/v1\n"
        . "  name: $name\ndata:\n  validations:\n$list";
}

sub post_result {
    my ($rev, $name, $status) = @_;
    my ($r) = $s->yaml('POST', "/api/v1.0/revisions/$rev/validations/$name",
        "status: $status\nvalidator:\n  name: test\n  version: '1'\n");
    return $r->{status};
}

sub statuses {
    my ($rev) = @_;
    my ($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$rev");
    my $vp = $d->[0]{validationPolicies};
    my %out = (revision => $d->[0]{status});
    for my $p (keys %$vp) {
        $out{$p} = $vp->{$p}{status};
        $out{"$p/$_->{name}"} = $_->{status} for @{ $vp->{$p}{validations} };
    }
    return \%out;
}

my ($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/policies/documents', policy('bad', ['x', 'P1X']));
is $r->{status}, 400, 'an expiresAfter that is no ISO 8601 duration: 400';
like $d->[0]{details}{messageList}[0]{message}, qr/expiresAfter/, 'naming the field';

($r, $d) = $s->yaml('PUT', '/api/v1.0/buckets/policies/documents',
    policy('site-deploy-ready', ['deckhand-schema-validation'], ['drydock-site-validation', 'PT2S'],
        ['promenade-site-validation'])
    . policy('long-lived', ['drydock-site-validation']));
is $r->{status}, 200, 'two ValidationPolicies';
my $rev = $d->[0]{status}{revision};

my $st = statuses($rev);
is $st->{'site-deploy-ready/deckhand-schema-validation'}, 'succeeded', "Deckhand's own schema validation is recorded";
is $st->{'site-deploy-ready/drydock-site-validation'}, 'missing', 'a validation never posted is missing';
is $st->{'site-deploy-ready'}, 'failed', 'and its policy failed';
is $st->{revision}, 'failed', 'and so the revision';

is post_result($rev, 'drydock-site-validation', 'success'), 201, 'drydock succeeds';
is post_result($rev, 'promenade-site-validation', 'failure'), 201, 'promenade fails';
$st = statuses($rev);
is $st->{'site-deploy-ready/promenade-site-validation'}, 'failed', 'a failure is failed';
is $st->{'site-deploy-ready'}, 'failed', 'its policy too';
is $st->{'long-lived'}, 'succeeded', 'the other policy only needs drydock: succeeded';

is post_result($rev, 'promenade-site-validation', 'succeeded'), 201, 'promenade succeeds later';
$st = statuses($rev);
is $st->{'site-deploy-ready/promenade-site-validation'}, 'succeeded', 'the latest entry counts';
is $st->{'site-deploy-ready'}, 'succeeded', 'every validation succeeded: the policy succeeded';
is $st->{revision}, 'succeeded', 'and the revision';
($r, $d) = $s->yaml('GET', '/api/v1.0/revisions');
my ($listed) = grep { $_->{id} == $rev } @{ $d->[0]{results} };
is $listed->{validationPolicies}{'site-deploy-ready'}{status}, 'succeeded', 'the listing shows it too';

sleep 3.2; # time itself: PT2S passes
$st = statuses($rev);
is $st->{'site-deploy-ready/drydock-site-validation'}, 'expired', 'after PT2S the success has expired';
is $st->{'site-deploy-ready'}, 'failed', 'an expired validation fails its policy';
is $st->{'long-lived'}, 'succeeded', 'the policy without expiresAfter still succeeds: expiry is per policy';

is post_result($rev, 'drydock-site-validation', 'success'), 201, 'drydock reports again';
$st = statuses($rev);
is $st->{'site-deploy-ready'}, 'succeeded', 'a fresh success counts again';

# A rollback is a write like the others: its revision records Deckhand's schema validation.
($r, $d) = $s->yaml('POST', "/api/v1.0/rollback/$rev");
is $r->{status}, 201, 'a rollback to that revision';
my $back = $d->[0]{id};
($r, $d) = $s->yaml('GET', "/api/v1.0/revisions/$back/validations");
my ($schema) = grep { $_->{name} eq 'deckhand-schema-validation' } @{ $d->[0]{results} // [] };
is $schema->{status}, 'success', "  its revision records deckhand-schema-validation: success"
    or diag explain $d;

PurserStack::finish();

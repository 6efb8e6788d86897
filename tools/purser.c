/* purser.c: the operator's command: migrate the database, check the configuration. */
#include "auth/identity.h"
#include "auth/keyring.h"
#include "auth/rbac.h"
#include "base/crypto.h"
#include "base/secret_file.h"
#include "codec/yaml_codec.h"
#include "config/config.h"
#include "docs/docstore.h"
#include "policy/policy.h"
#include "registry/registry.h"
#include "resource/resource.h"
#include "store/events.h"
#include "store/migrate.h"
#include "transfer/transfer.h"
/* The route table, so that check-config can hold the policy against the actions it uses. */
#include "../fcgi/router.h"
#include "purser.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: purser [-c CONFIG] COMMAND   (purser --help, purser --version)\n"
        "commands:\n"
        "  migrate              apply the pending database migrations\n"
        "  check-config         validate the configuration (and the files it names)\n"
        "  config-defaults      print every configuration key with its default\n"
        "  create-org NAME [--full-name TEXT] [--validator-key FILE]\n"
        "                       create an organization and its validator client\n"
        "  create-user NAME [--public-key FILE | --key-out FILE] [--admin] [--email E] [--json]\n"
        "                       create a user with a key (generated unless given) and a\n"
        "                       token; secrets are shown once\n"
        "  gc-events            delete events older than events.retention days (each\n"
        "                       organization keeps its newest, so seq never restarts)\n"
        "  gc-policies --keep N [--dry-run] [--org ORG]\n"
        "                       delete policy revisions no group points at, keeping the\n"
        "                       newest N of each policy, then the cookbook artifacts no\n"
        "                       remaining revision names and the files only they used (in\n"
        "                       ORG, else every organization); lists what it removed\n"
        "                       (--dry-run: what it would remove, removing nothing)\n"
        "  add-member ORG USER ROLE\n"
        "                       give USER the ROLE in ORG (roles: policies/default.yaml)\n"
        "  init-keyring         create the keyring (secrets.keyring) with one random key\n"
        "  add-key              add a keyring slot with a new random key; it seals from now\n"
        "  rotate-keys [--batch N]\n"
        "                       re-seal every encrypted record under the newest slot, N\n"
        "                       at a time (default 100), showing progress; resumable\n"
        "  remove-key ID        remove a keyring slot; refused while records use it\n"
        "  export ORG [--secrets] [-o FILE]\n"
        "                       the organization as a YAML stream of resources (FILE\n"
        "                       written with mode 600; --secrets: encrypted data too)\n"
        "  import ORG FILE      write an export into the empty organization ORG, all or\n"
        "                       nothing\n"
        "  backup -o FILE [--keyring FILE] [--metrics FILE]\n"
        "                       a consistent copy of the database while it serves\n"
        "                       (mariadb-dump); the keyring only to --keyring's FILE;\n"
        "                       --metrics FILE: its time and size for node_exporter\n"
        "  restore FILE [--keyring FILE] [--replace]\n"
        "                       load a backup, put its keyring in place, migrate\n"
        "  git-sync ORG         write ORG's missing history commits (git.root/ORG.git)\n"
        "  git-rebuild ORG      write ORG's history repository again from the database\n"
        "                       (the same commit ids for the same history)\n"
        "CONFIG defaults to $PURSER_CONFIG, else /etc/purser/purser.yaml\n");
}

static void on_migration(const struct migration *m, const char *note, void *ctx)
{
    (void)ctx;
    if (note)
        printf("  %s: %s\n", m->name, note);
    else
        printf("applying %s\n", m->name);
    fflush(stdout);
}

static int cmd_migrate(const struct purser_config *cfg, int argc, char **argv)
{
    struct store *store = NULL;
    struct purser_error err;
    int applied = 0, version = 0, rc;
    if (argc != 1) { /* argv[0] is the command */
        fprintf(stderr, "usage: purser %s\n", argv[0]);
        return 2;
    }

    if (mysql_library_init(0, NULL, NULL)) {
        fprintf(stderr, "purser: cannot initialise the MariaDB client library\n");
        return 1;
    }
    rc = store_new(&store, cfg, &err);
    if (!rc)
        rc = migrate_apply(store, purser_migrations, purser_migration_count, on_migration, NULL,
                           &applied, &err);
    if (!rc)
        rc = migrate_current(store, &version, &err);
    if (rc)
        fprintf(stderr, "purser migrate: %s\n", err.message);
    else
        printf("schema at version %d (%d applied)\n", version, applied);
    store_free(store);
    mysql_library_end();
    return rc ? 1 : 0;
}

static int cmd_check_config(const char *path, const struct purser_config *cfg)
{
    struct purser_error err;
    struct rbac_policy *policy = NULL;
    int rc = rbac_policy_load(&policy, cfg->policy_file, &err);
    if (!rc)
        rc = routes_check(policy, &err);
    rbac_policy_free(policy);
    if (rc) {
        if (err.line)
            fprintf(stderr, "purser check-config: rbac.policy_file %s:%d:%d: %s\n",
                    cfg->policy_file, err.line, err.column, err.message);
        else
            fprintf(stderr, "purser check-config: rbac.policy_file %s: %s\n", cfg->policy_file,
                    err.message);
        return 1;
    }
    if (cfg->keyring_file[0]) {
        struct keyring *ring = NULL;
        rc = keyring_load(&ring, cfg->keyring_file, &err);
        keyring_free(ring);
        if (rc) {
            fprintf(stderr, "purser check-config: secrets.keyring: %s\n", err.message);
            return 1;
        }
    }
    printf("%s: ok\n", path);
    return 0;
}

/* Writes a secret to path, readable by its owner only (base/secret_file: a new file renamed
 * over it, whatever was there). */
static int write_secret(const char *path, const char *text)
{
    if (secret_file_write(path, text, strlen(text))) {
        fprintf(stderr, "purser: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int open_store(struct store **store, const struct purser_config *cfg)
{
    struct purser_error err;
    if (mysql_library_init(0, NULL, NULL) || store_new(store, cfg, &err)) {
        fprintf(stderr, "purser: cannot set up the database client\n");
        return -1;
    }
    if (store_connect(*store, &err)) {
        fprintf(stderr, "purser: %s\n", err.message);
        store_free(*store);
        *store = NULL;
        return -1;
    }
    return 0;
}

int fail(struct purser_error *err)
{
    fprintf(stderr, "purser: %s\n", err->message);
    return 1;
}

static int cmd_create_org(const struct purser_config *cfg, int argc, char **argv)
{
    static const struct option longopts[] = {{"full-name", required_argument, NULL, 'f'},
                                             {"validator-key", required_argument, NULL, 'k'},
                                             {NULL, 0, NULL, 0}};
    const char *full_name = NULL, *key_out = NULL;
    struct store *store = NULL;
    struct purser_error err;
    json_t *body, *out = NULL;
    int opt, rc;

    optind = 0; /* glibc: start a fresh scan */
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (opt == 'f')
            full_name = optarg;
        else if (opt == 'k')
            key_out = optarg;
        else
            return 2;
    }
    if (optind != argc - 1) {
        fprintf(stderr,
                "usage: purser create-org NAME [--full-name TEXT] [--validator-key FILE]\n");
        return 2;
    }
    if (open_store(&store, cfg))
        return 1;
    body = json_pack("{s:s, s:s}", "name", argv[optind], "full_name",
                     full_name ? full_name : argv[optind]);
    rc = identity_org_create(store, NULL, body, NULL, &out, &err);
    json_decref(body);
    if (rc) {
        store_free(store);
        return fail(&err);
    }
    printf("created organization %s with validator client %s\n", argv[optind],
           json_string_value(json_object_get(out, "clientname")));
    if (key_out)
        rc = write_secret(key_out, json_string_value(json_object_get(out, "private_key")));
    else
        printf("%s", json_string_value(json_object_get(out, "private_key")));
    json_decref(out);
    store_free(store);
    return rc ? 1 : 0;
}

static int cmd_create_user(const struct purser_config *cfg, int argc, char **argv)
{
    static const struct option longopts[] = {{"public-key", required_argument, NULL, 'p'},
                                             {"key-out", required_argument, NULL, 'k'},
                                             {"admin", no_argument, NULL, 'a'},
                                             {"email", required_argument, NULL, 'e'},
                                             {"json", no_argument, NULL, 'j'},
                                             {NULL, 0, NULL, 0}};
    const char *public_key_file = NULL, *key_out = NULL, *email = "";
    int admin = 0, as_json = 0, opt, rc;
    char *public_pem = NULL;
    size_t len;
    struct store *store = NULL;
    struct purser_error err;
    json_t *body, *created = NULL, *token = NULL, *result;
    const json_t *private_key;
    long long id;
    struct arena *arena = arena_new();

    optind = 0; /* glibc: start a fresh scan */
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'p': public_key_file = optarg; break;
        case 'k': key_out = optarg; break;
        case 'a': admin = 1; break;
        case 'e': email = optarg; break;
        case 'j': as_json = 1; break;
        default: return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: purser create-user NAME [--public-key FILE | --key-out FILE]"
                        " [--admin] [--email E] [--json]\n");
        return 2;
    }
    if (public_key_file && file_read_all(&public_pem, &len, public_key_file, 1 << 16, &err))
        return fail(&err);
    if (open_store(&store, cfg))
        return 1;
    body = json_pack("{s:s, s:s, s:s?}", "username", argv[optind], "email", email, "public_key",
                     public_pem);
    rc = identity_principal_create(store, NULL, NULL, body, NULL, NULL, &created, &err);
    json_decref(body);
    free(public_pem);
    if (!rc && admin)
        rc = identity_set_server_admin(store, NULL, argv[optind], 1, &err);
    if (!rc)
        rc = identity_principal_id(store, arena, NULL, argv[optind], &id, &err);
    if (!rc) {
        json_t *tbody = json_pack("{s:s}", "description", "created by purser create-user");
        rc = identity_token_create(store, NULL, id, tbody, &token, &err);
        json_decref(tbody);
    }
    arena_free(arena);
    store_free(store);
    if (rc) {
        json_decref(created);
        return fail(&err);
    }
    private_key = json_object_get(json_object_get(created, "chef_key"), "private_key");
    if (key_out && private_key && write_secret(key_out, json_string_value(private_key)))
        rc = 1;
    result = json_pack("{s:s, s:b, s:O}", "user", argv[optind], "server_admin", admin, "token",
                       json_object_get(token, "token"));
    if (private_key && !key_out)
        json_object_set(result, "private_key", (json_t *)private_key);
    if (key_out)
        json_object_set_new(result, "key_file", json_string(key_out));
    if (as_json) {
        char *text = json_dumps(result, JSON_INDENT(2));
        printf("%s\n", text);
        free(text);
    } else {
        printf("created user %s%s\ntoken (shown once): %s\n", argv[optind],
               admin ? " (server admin)" : "", json_string_value(json_object_get(result, "token")));
        if (key_out)
            printf("private key written to %s\n", key_out);
        else if (private_key)
            printf("private key (shown once):\n%s", json_string_value(private_key));
    }
    json_decref(result);
    json_decref(created);
    json_decref(token);
    return rc;
}

static int role_known(const char *role, void *ctx)
{
    return rbac_role_exists(ctx, role);
}

static int cmd_add_member(const struct purser_config *cfg, int argc, char **argv)
{
    struct rbac_policy *policy = NULL;
    struct store *store = NULL;
    struct purser_error err;
    json_t *body, *out = NULL;
    int rc;

    if (argc != 4) {
        fprintf(stderr, "usage: purser add-member ORG USER ROLE\n");
        return 2;
    }
    if (rbac_policy_load(&policy, cfg->policy_file, &err))
        return fail(&err);
    if (open_store(&store, cfg)) {
        rbac_policy_free(policy);
        return 1;
    }
    body = json_pack("{s:s, s:[s]}", "username", argv[2], "roles", argv[3]);
    rc = identity_member_add(store, NULL, argv[1], body, role_known, policy, &out, &err);
    json_decref(body);
    json_decref(out);
    store_free(store);
    rbac_policy_free(policy);
    if (rc)
        return fail(&err);
    printf("%s is %s in %s\n", argv[2], argv[3], argv[1]);
    return 0;
}

/* gc-policies' options into *opts and *org (NULL: every organization); 2 after the usage. */
static int gc_options(int argc, char **argv, struct policy_collect_options *opts, const char **org)
{
    static const struct option longopts[] = {{"keep", required_argument, NULL, 'k'},
                                             {"dry-run", no_argument, NULL, 'n'},
                                             {"org", required_argument, NULL, 'o'},
                                             {NULL, 0, NULL, 0}};
    char *end;
    int opt;
    opts->keep = -1;
    optind = 0; /* glibc: start a fresh scan */
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (opt == 'k') {
            opts->keep = strtol(optarg, &end, 10);
            opts->keep = *end || opts->keep > 1000000 ? -1 : opts->keep;
        } else if (opt == 'n') {
            opts->dry_run = 1;
        } else if (opt == 'o') {
            *org = optarg;
        } else {
            opts->keep = -1;
            break;
        }
    }
    if (opts->keep >= 0 && optind == argc)
        return 0;
    fprintf(stderr, "usage: purser gc-policies --keep N [--dry-run] [--org ORG]   (N from 0 to "
                    "1000000)\n");
    return 2;
}

/* One organization's collection (policy_collect, as POST collect_policies runs it), printed
 * item by item; counts[] adds up revisions, artifacts and files. */
static int gc_organization(struct store *store, const char *org,
                           const struct policy_collect_options *opts, size_t counts[3],
                           struct purser_error *err)
{
    const char *verb = opts->dry_run ? "would remove" : "removed";
    json_t *out = NULL, *item;
    size_t i;
    int rc =
        policy_collect(store, "purser gc-policies", org, opts, &out, err); /* the events' actor */
    json_array_foreach (json_object_get(out, "revisions"), i, item)
        printf("%s %s/%s revision %s\n", verb, org,
               json_string_value(json_object_get(item, "policy")),
               json_string_value(json_object_get(item, "revision_id")));
    json_array_foreach (json_object_get(out, "cookbook_artifacts"), i, item)
        printf("%s %s cookbook artifact %s/%s\n", verb, org,
               json_string_value(json_object_get(item, "name")),
               json_string_value(json_object_get(item, "identifier")));
    json_array_foreach (json_object_get(out, "files"), i, item)
        printf("%s %s file %s\n", verb, org, json_string_value(item));
    counts[0] += json_array_size(json_object_get(out, "revisions"));
    counts[1] += json_array_size(json_object_get(out, "cookbook_artifacts"));
    counts[2] += json_array_size(json_object_get(out, "files"));
    json_decref(out);
    return rc;
}

static int cmd_gc_policies(const struct purser_config *cfg, int argc, char **argv)
{
    struct policy_collect_options opts = {0};
    struct store *store = NULL;
    struct store_rows orgs = {0};
    struct purser_error err;
    struct arena *arena = NULL;
    const char *org = NULL, *done;
    size_t counts[3] = {0, 0, 0};
    int rc;

    if (gc_options(argc, argv, &opts, &org))
        return 2;
    if (open_store(&store, cfg))
        return 1;
    if (org) {
        rc = gc_organization(store, org, &opts, counts, &err);
    } else {
        arena = arena_new();
        rc = arena ? policy_collect_organizations(store, arena, &orgs, &err)
                   : purser_error_set(&err, PURSER_EINTERNAL, "out of memory");
        for (size_t i = 0; !rc && i < orgs.count; i++)
            rc = gc_organization(store, store_cell(&orgs, i, 0), &opts, counts, &err);
    }
    done = opts.dry_run ? "would be removed" : "removed";
    printf("%zu revision(s) %s\n%zu cookbook artifact(s) %s\n%zu file(s) %s\n", counts[0], done,
           counts[1], done, counts[2], done);
    store_free(store);
    arena_free(arena);
    return rc ? fail(&err) : 0;
}

static int cmd_gc_events(const struct purser_config *cfg, int argc, char **argv)
{
    struct store *store = NULL;
    struct purser_error err;
    unsigned long long deleted = 0;
    int rc;
    (void)argv;
    if (argc != 1) { /* argv[0] is the command */
        fprintf(stderr, "usage: purser gc-events   (keeps events.retention days)\n");
        return 2;
    }
    if (open_store(&store, cfg))
        return 1;
    rc = events_prune(store, cfg->events_retention, &deleted, &err);
    store_free(store);
    if (!rc)
        printf("%llu event(s) older than %ld day(s) removed\n", deleted, cfg->events_retention);
    return rc ? fail(&err) : 0;
}

/* Progress of an export or import, on a terminal only. */
static void show_progress(void *ctx, size_t done, const char *kind)
{
    if (done % 50 == 0 || !strcmp(kind, "Organization"))
        fprintf(stderr, "\r%s %zu documents (%s)...\033[K", (const char *)ctx, done, kind);
}

/* The transfer context of the command: the keyring when there is one, no URL. */
static int transfer_setup(const struct purser_config *cfg, struct transfer_ctx *c,
                          struct keyring **ring, struct rbac_policy **policy, const char *org,
                          const char *verb, struct purser_error *err)
{
    memset(c, 0, sizeof(*c));
    c->org = org;
    c->actor = "purser";
    c->identity_providers = 1; /* an operator on the host: the server's own */
    c->base_url = "";
    c->bootstrap_ttl = cfg->bootstrap_ttl;
    c->arena = arena_new();
    if (!c->arena)
        return purser_error_set(err, PURSER_EINTERNAL, "out of memory");
    if (cfg->keyring_file[0] && keyring_load(ring, cfg->keyring_file, err))
        return err->code;
    c->keyring = *ring;
    if (rbac_policy_load(policy, cfg->policy_file, err))
        return err->code;
    c->valid_role = role_known;
    c->role_ctx = *policy;
    if (isatty(2)) {
        c->progress = show_progress;
        c->progress_ctx = (void *)verb;
    }
    return 0;
}

/* The encrypted documents an import left out (an export without secrets), for the operator to
 * supply. */
static void print_left_out(const json_t *left_out)
{
    const json_t *d;
    size_t i;
    json_array_foreach (left_out, i, d)
        printf("left out (encrypted, its data not in the export): bucket %s, %s %s\n",
               json_string_value(json_object_get(d, "bucket")),
               json_string_value(json_object_get(d, "schema")),
               json_string_value(json_object_get(d, "name")));
}

static int cmd_transfer(const struct purser_config *cfg, int argc, char **argv)
{
    int import = strcmp(argv[0], "import") == 0, secrets = 0, rc;
    const char *org = NULL, *file = NULL;
    struct transfer_ctx c;
    struct keyring *ring = NULL;
    struct rbac_policy *policy = NULL;
    struct store *store = NULL;
    struct purser_error err;
    json_t *docs = NULL, *summary = NULL;
    struct buf text = BUF_INIT;

    for (int i = 1; i < argc; i++) {
        if (!import && !strcmp(argv[i], "--secrets"))
            secrets = 1;
        else if (!import && !strcmp(argv[i], "-o") && i + 1 < argc)
            file = argv[++i];
        else if (!org)
            org = argv[i];
        else if (import && !file)
            file = argv[i];
        else
            org = NULL, i = argc;
    }
    if (!org || (import && !file)) {
        fprintf(stderr, import ? "usage: purser import ORG FILE\n"
                               : "usage: purser export ORG [--secrets] [-o FILE]\n");
        return 2;
    }
    rc = transfer_setup(cfg, &c, &ring, &policy, org, import ? "imported" : "exported", &err);
    if (!rc && open_store(&store, cfg))
        rc = purser_error_set(&err, PURSER_EUNAVAIL, "the database cannot be reached");
    c.store = store;
    c.secrets = secrets;
    if (!rc && import) {
        FILE *in = fopen(file, "rb");
        char chunk[65536];
        size_t n;
        if (!in)
            rc = purser_error_set(&err, PURSER_ENOTFOUND, "cannot read %s", file);
        while (!rc && (n = fread(chunk, 1, sizeof(chunk), in)) > 0)
            rc = buf_add(&text, chunk, n)
                     ? purser_error_set(&err, PURSER_EINTERNAL, "out of memory")
                     : 0;
        if (in)
            fclose(in);
        if (!rc) {
            struct yaml_limits limits = yaml_limits_documents;
            limits.max_bytes = text.len + 1;
            limits.max_nodes = (size_t)cfg->max_yaml_nodes;
            limits.max_alias_nodes = (size_t)cfg->max_yaml_alias_nodes;
            rc = yaml_codec_parse(&docs, text.data ? text.data : "", text.len, &limits, &err);
        }
        c.actor = "purser import"; /* the events' actor and the imported revisions' author */
        if (!rc)
            rc = transfer_import(&c, docs, &summary, &err);
        if (!rc)
            printf("%simported %zu documents into %s\n", isatty(2) ? "\r\033[K" : "",
                   json_array_size(docs), org);
        if (!rc)
            print_left_out(json_object_get(summary, "left_out"));
    } else if (!rc) {
        rc = transfer_export(&c, &docs, &err);
        if (!rc)
            rc = yaml_codec_emit(&text, docs, &err);
        if (c.progress)
            fprintf(stderr, "\r\033[K");
        if (!rc && file && write_secret(file, buf_cstr(&text)))
            rc = purser_error_set(&err, PURSER_EINTERNAL, "cannot write %s", file);
        if (!rc && !file)
            fwrite(text.data, 1, text.len, stdout);
        if (!rc && file)
            fprintf(stderr, "exported %zu documents of %s to %s\n", json_array_size(docs), org,
                    file);
    }
    json_decref(docs);
    json_decref(summary);
    buf_release(&text);
    store_free(store);
    keyring_free(ring);
    rbac_policy_free(policy);
    arena_free(c.arena);
    return rc ? fail(&err) : 0;
}

/* The commands main knows (an unknown one is said before a configuration is read); check-config
 * and config-defaults, which need no database, are main's own. */
static const struct command {
    const char *name;
    int (*run)(const struct purser_config *cfg, int argc, char **argv);
    int changes_access; /* credentials, memberships or grants: noted for every host's caches */
} commands[] = {
    {"migrate", cmd_migrate, 0},
    {"check-config", NULL, 0},
    {"config-defaults", NULL, 0},
    {"create-org", cmd_create_org, 1},
    {"create-user", cmd_create_user, 1},
    {"gc-policies", cmd_gc_policies, 0},
    {"gc-events", cmd_gc_events, 0},
    {"add-member", cmd_add_member, 1},
    {"init-keyring", cmd_init_keyring, 0},
    {"add-key", cmd_add_key, 0},
    {"remove-key", cmd_remove_key, 0},
    {"export", cmd_transfer, 0},
    {"import", cmd_transfer, 1},
    {"rotate-keys", cmd_rotate_keys, 0},
    {"backup", cmd_backup, 0},
    {"restore", cmd_restore, 1},
    {"git-sync", cmd_git, 0},
    {"git-rebuild", cmd_git, 0},
};

static const struct command *command_named(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

/* A change of access made here, noted in the database: the running hosts' workers empty their
 * authentication caches within a second (docs/operator/identity.md, "When access ends"). */
static int note_access_change(const struct purser_config *cfg)
{
    struct store *store = NULL;
    struct purser_error err;
    int rc;
    if (open_store(&store, cfg))
        return 1;
    rc = identity_changes_note(store, &err);
    if (rc)
        fprintf(stderr,
                "purser: done, but not noted for the running hosts (they see it within "
                "cache.auth_ttl): %s\n",
                err.message);
    store_free(store);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    static const struct option longs[] = {{"config", required_argument, NULL, 'c'},
                                          {"help", no_argument, NULL, 'h'},
                                          {"version", no_argument, NULL, 'V'},
                                          {NULL, 0, NULL, 0}};
    struct purser_config cfg;
    struct purser_error err;
    const char *path = getenv("PURSER_CONFIG");
    const struct command *cmd;
    const char *command;
    int opt, rc;

    while ((opt = getopt_long(argc, argv, "+c:hV", longs, NULL)) != -1) {
        if (opt == 'c') {
            path = optarg;
        } else if (opt == 'V') {
            printf("purser %s\n", PURSER_VERSION);
            return 0;
        } else {
            usage(opt == 'h' ? stdout : stderr);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    command = argv[optind];
    if (!strcmp(command, "help")) {
        usage(stdout);
        return 0;
    }
    if (!(cmd = command_named(command))) {
        fprintf(stderr, "purser: unknown command '%s' (purser --help lists them)\n", command);
        return 2;
    }
    if (!path)
        path = "/etc/purser/purser.yaml";
    { /* the route table, and the registry's and resource kinds' events, which its writes append */
        const struct resource_kind *kinds[16];
        if (routes_init()) {
            fprintf(stderr, "purser: out of memory\n");
            return 1;
        }
        registry_events_register();
        resource_kinds_register(kinds, registry_resources(kinds, 16));
    }
    if (strcmp(command, "config-defaults") == 0) {
        struct buf out = BUF_INIT;
        rc = config_describe(&out);
        fputs(buf_cstr(&out), stdout);
        buf_release(&out);
        return rc ? 1 : 0;
    }
    if (config_load(&cfg, path, &err)) {
        if (err.line)
            fprintf(stderr, "purser: %s:%d:%d: %s\n", path, err.line, err.column, err.message);
        else if (!strncmp(err.message, path, strlen(path))) /* the file named once */
            fprintf(stderr, "purser: %s\n", err.message);
        else
            fprintf(stderr, "purser: %s: %s\n", path, err.message);
        config_release(&cfg);
        return 1;
    }
    if (!cmd->run)
        rc = cmd_check_config(path, &cfg);
    else
        rc = cmd->run(&cfg, argc - optind, argv + optind);
    if (!rc && cmd->changes_access)
        rc = note_access_change(&cfg);
    config_release(&cfg);
    return rc;
}

/* purser.c: the operator's command: migrate the database, check the configuration. */
#include "../lib/config.h"
#include "../lib/migrate.h"
#include "../lib/yaml_codec.h"

#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: purser [-c CONFIG] COMMAND\n"
                 "commands:\n"
                 "  migrate              apply the pending database migrations\n"
                 "  check-config         validate the configuration (and the files it names)\n"
                 "  config-defaults      print every configuration key with its default\n"
                 "CONFIG defaults to $PURSER_CONFIG, else /etc/purser/purser.yaml\n");
}

static void on_migration(const struct migration *m, void *ctx)
{
    (void)ctx;
    printf("applying %s\n", m->name);
    fflush(stdout);
}

static int cmd_migrate(const struct purser_config *cfg)
{
    struct store *store = NULL;
    struct purser_error err;
    int applied = 0, version = 0, rc;

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
    char *text = NULL;
    size_t len;
    json_t *docs = NULL;
    int rc = file_read_all(&text, &len, cfg->policy_file, 16 << 20, &err);
    if (!rc)
        rc = yaml_codec_parse(&docs, text, len, NULL, &err);
    free(text);
    json_decref(docs);
    if (rc) {
        if (err.line)
            fprintf(stderr, "purser check-config: rbac.policy_file %s:%d:%d: %s\n",
                    cfg->policy_file, err.line, err.column, err.message);
        else
            fprintf(stderr, "purser check-config: rbac.policy_file: %s\n", err.message);
        return 1;
    }
    printf("%s: ok\n", path);
    return 0;
}

int main(int argc, char **argv)
{
    struct purser_config cfg;
    struct purser_error err;
    const char *path = getenv("PURSER_CONFIG");
    const char *command;
    int opt, rc;

    while ((opt = getopt(argc, argv, "c:h")) != -1) {
        if (opt == 'c') {
            path = optarg;
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
    if (!path)
        path = "/etc/purser/purser.yaml";
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
        else
            fprintf(stderr, "purser: %s: %s\n", path, err.message);
        config_release(&cfg);
        return 1;
    }
    if (strcmp(command, "migrate") == 0)
        rc = cmd_migrate(&cfg);
    else if (strcmp(command, "check-config") == 0)
        rc = cmd_check_config(path, &cfg);
    else {
        fprintf(stderr, "purser: unknown command '%s'\n", command);
        usage(stderr);
        rc = 2;
    }
    config_release(&cfg);
    return rc;
}

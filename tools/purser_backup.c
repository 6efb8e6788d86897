/* purser_backup.c: `purser backup` and `purser restore`, with what MariaDB ships.
 *
 * A backup is one file: a few header lines (SQL comments: the version, the schema, the
 * keyring's slots and fingerprint), then what `mariadb-dump --single-transaction` writes, a
 * consistent copy taken while purser serves. Encrypted documents stay sealed in it; the
 * keyring that opens them is never written into it (--keyring FILE copies it elsewhere).
 * restore checks the keyring it will use against the header before it touches the database,
 * then loads the dump with `mariadb`, puts the keyring in place and applies the migrations a
 * dump of an older version lacks. The database's password reaches the MariaDB tools through
 * an option file of mode 600 (never a command line), removed when they finish.
 */
#include "purser.h"

#include "auth/keyring.h"
#include "base/buf.h"
#include "base/crypto.h"
#include "base/secret_file.h"
#include "store/migrate.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HEADER "-- purser-backup: "

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int read_file(struct buf *out, const char *path)
{
    char chunk[65536];
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    while ((n = read(fd, chunk, sizeof(chunk))) > 0)
        if (buf_add(out, chunk, (size_t)n)) {
            n = -1;
            break;
        }
    close(fd);
    return n < 0 ? -1 : 0;
}

/* The keyring's slots as "ID:FINGERPRINT ..." (the SHA-256 of each slot's line, which
 * names the key without revealing it): what the header says of the keyring, and what restore
 * holds the keyring it is given against. */
static int keyring_slots(const char *path, struct buf *out)
{
    struct purser_error err;
    struct keyring *ring = NULL;
    struct buf text = BUF_INIT;
    char *line, *save = NULL;
    int rc = 0;

    if (keyring_load(&ring, path, &err)) { /* its format, its mode */
        fprintf(stderr, "purser: keyring %s: %s\n", path, err.message);
        return -1;
    }
    keyring_free(ring);
    if (read_file(&text, path) || !text.data) {
        fprintf(stderr, "purser: cannot read %s: %s\n", path, strerror(errno));
        buf_release(&text);
        return -1;
    }
    for (line = strtok_r(text.data, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save)) {
        char sha[65];
        size_t n = strcspn(line, "\r");
        if (!n || line[0] == '#')
            continue;
        crypto_sha256_hex(sha, line, n);
        rc = buf_printf(out, "%s%d:%s", out->len ? " " : "", atoi(line), sha);
    }
    memset(text.data, 0, text.len);
    buf_release(&text);
    return rc;
}

/* An option file for the MariaDB tools: [client] with the configuration's connection, the
 * password quoted as option files read it. path gets its name; the caller unlinks it. */
static int client_options(char path[64], const struct purser_config *cfg)
{
    struct buf text = BUF_INIT, password = BUF_INIT;
    int fd, rc = 0;

    if (cfg->db_password_file[0] && read_file(&password, cfg->db_password_file)) {
        fprintf(stderr, "purser: database.password_file %s: %s\n", cfg->db_password_file,
                strerror(errno));
        return -1;
    }
    while (password.len &&
           (password.data[password.len - 1] == '\n' || password.data[password.len - 1] == '\r'))
        password.len--;
    buf_printf(&text, "[client]\nuser=%s\n", cfg->db_user);
    if (cfg->db_socket[0])
        buf_printf(&text, "socket=%s\n", cfg->db_socket);
    else
        buf_printf(&text, "host=%s\nport=%ld\nprotocol=tcp\n", cfg->db_host, cfg->db_port);
    if (password.len) {
        buf_adds(&text, "password=\"");
        for (size_t i = 0; i < password.len; i++) {
            if (password.data[i] == '"' || password.data[i] == '\\')
                buf_addc(&text, '\\');
            buf_addc(&text, password.data[i]);
        }
        buf_adds(&text, "\"\n");
    }
    snprintf(path, 64, "%s/purser-client-XXXXXX",
             getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp");
    if (strlen(path) >= 60 || (fd = mkstemp(path)) < 0) { /* mkstemp: mode 600 */
        fprintf(stderr, "purser: cannot create a temporary option file: %s\n", strerror(errno));
        rc = -1;
    } else {
        if (write(fd, text.data, text.len) != (ssize_t)text.len) {
            fprintf(stderr, "purser: cannot write %s: %s\n", path, strerror(errno));
            unlink(path);
            rc = -1;
        }
        close(fd);
    }
    if (password.data)
        memset(password.data, 0, password.len);
    buf_release(&password);
    if (text.data)
        memset(text.data, 0, text.len);
    buf_release(&text);
    return rc;
}

/* Runs argv with stdin from in_fd and stdout to out_fd (-1: inherited); 0 when it exits 0.
 * With out, its stdout is collected there instead. */
static int run_tool(char *const argv[], int in_fd, int out_fd, struct buf *out)
{
    int pipefd[2] = {-1, -1}, status = 0;
    pid_t pid;

    if (out && pipe(pipefd))
        return -1;
    pid = fork();
    if (pid < 0)
        return -1;
    if (!pid) {
        if (in_fd >= 0)
            dup2(in_fd, 0);
        if (out)
            dup2(pipefd[1], 1);
        else if (out_fd >= 0)
            dup2(out_fd, 1);
        if (out) {
            close(pipefd[0]);
            close(pipefd[1]);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "purser: cannot run %s: %s (the package mariadb-client)\n", argv[0],
                strerror(errno));
        _exit(127);
    }
    if (out) {
        char chunk[4096];
        ssize_t n;
        close(pipefd[1]);
        while ((n = read(pipefd[0], chunk, sizeof(chunk))) > 0)
            buf_add(out, chunk, (size_t)n);
        close(pipefd[0]);
    }
    if (waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int schema_version(const struct purser_config *cfg, int *version)
{
    struct purser_error err;
    struct store *store = NULL;
    int rc = mysql_library_init(0, NULL, NULL) ? -1 : store_new(&store, cfg, &err);
    if (!rc)
        rc = migrate_current(store, version, &err);
    if (rc)
        fprintf(stderr, "purser: %s\n", store ? err.message : "cannot reach the database");
    store_free(store);
    return rc;
}

/* Copies the keyring at from to to (base/secret_file: mode 600, written aside then renamed);
 * with keep_owner (the configured keyring, restored), the owner of the file that was there. */
static int copy_keyring(const char *from, const char *to, int keep_owner)
{
    struct buf text = BUF_INIT;
    struct secret_file f;
    struct stat st;
    int have_owner = keep_owner && lstat(to, &st) == 0 && S_ISREG(st.st_mode), rc;

    if (read_file(&text, from)) {
        fprintf(stderr, "purser: cannot read %s: %s\n", from, strerror(errno));
        buf_release(&text);
        return -1;
    }
    rc = secret_file_begin(&f, to);
    if (!rc)
        rc = secret_file_put(&f, text.data, text.len);
    if (!rc && have_owner)
        rc = fchown(f.fd, st.st_uid, st.st_gid);
    if (!rc)
        rc = secret_file_commit(&f);
    else
        secret_file_abort(&f);
    if (rc)
        fprintf(stderr, "purser: cannot write the keyring %s: %s\n", to, strerror(errno));
    if (text.data)
        memset(text.data, 0, text.len);
    buf_release(&text);
    return rc;
}

/* --metrics FILE: the backup's time and size in Prometheus' text format, for node_exporter's
 * textfile collector (dist/purser.rules.yml alerts when the time is older than a day); written
 * aside and renamed, so the collector never reads half a file. */
static int write_metrics(const char *path, long long size)
{
    struct buf text = BUF_INIT, tmp = BUF_INIT;
    FILE *f = NULL;
    int rc = 1;

    if (buf_printf(&tmp, "%s.tmp", path))
        goto cleanup;
    if (buf_printf(&text,
                   "# HELP purser_backup_last_success_timestamp_seconds When purser backup last "
                   "completed (Unix time).\n"
                   "# TYPE purser_backup_last_success_timestamp_seconds gauge\n"
                   "purser_backup_last_success_timestamp_seconds %lld\n"
                   "# HELP purser_backup_size_bytes The size of the last backup's file.\n"
                   "# TYPE purser_backup_size_bytes gauge\n"
                   "purser_backup_size_bytes %lld\n",
                   (long long)time(NULL), size))
        goto cleanup;
    f = fopen(buf_cstr(&tmp), "w");
    if (!f || fwrite(text.data, 1, text.len, f) != text.len)
        goto cleanup;
    rc = fclose(f) != 0;
    f = NULL;
    if (!rc && rename(buf_cstr(&tmp), path))
        rc = 1;
cleanup:
    if (f)
        fclose(f);
    if (rc) {
        fprintf(stderr, "purser backup: cannot write the metrics file %s: %s\n", path,
                strerror(errno));
        unlink(buf_cstr(&tmp));
    }
    buf_release(&text);
    buf_release(&tmp);
    return rc;
}

int cmd_backup(const struct purser_config *cfg, int argc, char **argv)
{
    static const struct option longopts[] = {{"keyring", required_argument, NULL, 'k'},
                                             {"metrics", required_argument, NULL, 'm'},
                                             {NULL, 0, NULL, 0}};
    const char *file = NULL, *keyring_to = NULL, *metrics_to = NULL;
    struct buf header = BUF_INIT, slots = BUF_INIT, tmp = BUF_INIT;
    char options[64] = "", defaults[96];
    int opt, version = 0, fd = -1, rc = 1;
    double t0 = now_seconds();
    struct stat st;

    optind = 0; /* GNU getopt starts afresh: main scanned with "+" */
    while ((opt = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
        if (opt == 'o')
            file = optarg;
        else if (opt == 'k')
            keyring_to = optarg;
        else if (opt == 'm')
            metrics_to = optarg;
        else
            goto usage;
    }
    if (!file || optind != argc)
        goto usage;
    if (!cfg->keyring_file[0]) {
        fprintf(stderr, "purser backup: secrets.keyring is not set in the configuration\n");
        return 1;
    }
    if (keyring_slots(cfg->keyring_file, &slots) || schema_version(cfg, &version))
        goto cleanup;
    buf_printf(&header,
               HEADER "purser %s, schema %d, database %s\n" HEADER "keyring slots %s\n"
                      "-- The keyring is not in this file: restore needs it (purser restore "
                      "--keyring).\n",
               PURSER_VERSION, version, cfg->db_name, buf_cstr(&slots));
    buf_printf(&tmp, "%s.partial", file);
    fd = open(buf_cstr(&tmp), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "purser backup: cannot create %s: %s\n", buf_cstr(&tmp), strerror(errno));
        goto cleanup;
    }
    if (write(fd, header.data, header.len) != (ssize_t)header.len || client_options(options, cfg))
        goto cleanup;
    snprintf(defaults, sizeof(defaults), "--defaults-extra-file=%s", options);
    {
        char *dump[] = {"mariadb-dump",
                        defaults,
                        "--single-transaction",
                        "--quick",
                        "--hex-blob",
                        "--no-tablespaces",
                        "--default-character-set=utf8mb4",
                        "--triggers",
                        "--routines",
                        "--skip-dump-date",
                        cfg->db_name,
                        NULL};
        if (run_tool(dump, -1, fd, NULL)) {
            fprintf(stderr, "purser backup: mariadb-dump failed\n");
            goto cleanup;
        }
    }
    if (fsync(fd) || close(fd) || rename(buf_cstr(&tmp), file)) {
        fd = -1;
        fprintf(stderr, "purser backup: cannot write %s: %s\n", file, strerror(errno));
        goto cleanup;
    }
    fd = -1;
    if (keyring_to && copy_keyring(cfg->keyring_file, keyring_to, 0))
        goto cleanup;
    stat(file, &st);
    if (metrics_to && write_metrics(metrics_to, (long long)st.st_size))
        goto cleanup;
    printf("backed up database %s (schema %d) to %s: %lld bytes in %.1fs\n", cfg->db_name, version,
           file, (long long)st.st_size, now_seconds() - t0);
    if (keyring_to)
        printf("keyring copied to %s: keep it apart from the backup\n", keyring_to);
    else
        printf("the keyring is not in the backup: keep a copy of %s apart from it\n",
               cfg->keyring_file);
    rc = 0;
cleanup:
    if (fd >= 0) {
        close(fd);
        unlink(buf_cstr(&tmp));
    }
    if (options[0])
        unlink(options);
    buf_release(&header);
    buf_release(&slots);
    buf_release(&tmp);
    return rc;
usage:
    fprintf(stderr, "usage: purser backup -o FILE [--keyring FILE] [--metrics FILE]\n");
    return 2;
}

/* The backup's header line that starts with key, into value (at most n bytes). */
static int header_value(const char *head, const char *key, char *value, size_t n)
{
    const char *p = strstr(head, key), *end;
    if (!p)
        return -1;
    p += strlen(key);
    end = strchr(p, '\n');
    if (!end || (size_t)(end - p) >= n)
        return -1;
    memcpy(value, p, (size_t)(end - p));
    value[end - p] = '\0';
    return 0;
}

/* Every slot the backup's header names is in the keyring at path, with the same key. */
static int keyring_covers(const char *path, const char *slots)
{
    struct buf have = BUF_INIT;
    const char *p = slots;
    int rc = keyring_slots(path, &have);

    while (!rc && *p) {
        size_t n = strcspn(p, " ");
        int found = 0;
        for (const char *h = buf_cstr(&have); *h && !found; h += strcspn(h, " "), h += *h == ' ')
            found = strcspn(h, " ") == n && !strncmp(h, p, n);
        if (!found) {
            fprintf(stderr,
                    "purser restore: the keyring %s lacks slot %d as the backup's records were "
                    "sealed with it: give the backup's keyring with --keyring FILE\n",
                    path, atoi(p));
            rc = -1;
        }
        p += n;
        p += *p == ' ';
    }
    buf_release(&have);
    return rc;
}

int cmd_restore(const struct purser_config *cfg, int argc, char **argv)
{
    static const struct option longopts[] = {{"keyring", required_argument, NULL, 'k'},
                                             {"replace", no_argument, NULL, 'r'},
                                             {NULL, 0, NULL, 0}};
    const char *file, *keyring_from = NULL;
    char options[64] = "", defaults[96], head[8192], slots[6144];
    struct buf tables = BUF_INIT, drop = BUF_INIT;
    struct purser_error err;
    struct store *store = NULL;
    int opt, replace = 0, fd = -1, rc = 1, applied = 0, version = 0;
    double t0 = now_seconds();
    ssize_t n;

    optind = 0; /* GNU getopt starts afresh: main scanned with "+" */
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (opt == 'k')
            keyring_from = optarg;
        else if (opt == 'r')
            replace = 1;
        else
            goto usage;
    }
    if (optind + 1 != argc)
        goto usage;
    file = argv[optind];
    if (!cfg->keyring_file[0]) {
        fprintf(stderr, "purser restore: secrets.keyring is not set in the configuration\n");
        return 1;
    }
    /* the header, and a keyring that opens what the backup sealed, before the database */
    fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "purser restore: %s: %s\n", file, strerror(errno));
        return 1;
    }
    n = read(fd, head, sizeof(head) - 1);
    head[n > 0 ? n : 0] = '\0';
    if (strncmp(head, HEADER, strlen(HEADER)) ||
        header_value(head, HEADER "keyring slots ", slots, sizeof(slots))) {
        fprintf(stderr, "purser restore: %s is not a backup made by purser backup\n", file);
        goto cleanup;
    }
    if (keyring_covers(keyring_from ? keyring_from : cfg->keyring_file, slots))
        goto cleanup;
    /* an empty database, or --replace */
    if (client_options(options, cfg))
        goto cleanup;
    snprintf(defaults, sizeof(defaults), "--defaults-extra-file=%s", options);
    {
        char *list[] = {"mariadb", defaults, "-N", "-B", "-e", "SHOW TABLES", cfg->db_name, NULL};
        if (run_tool(list, -1, -1, &tables)) {
            fprintf(stderr, "purser restore: cannot list the tables of database %s\n",
                    cfg->db_name);
            goto cleanup;
        }
    }
    if (tables.len && !replace) {
        fprintf(stderr,
                "purser restore: database %s has tables: restore into an empty database, or "
                "give --replace to drop them first\n",
                cfg->db_name);
        goto cleanup;
    }
    if (tables.len) {
        const char *p = buf_cstr(&tables);
        buf_adds(&drop, "SET FOREIGN_KEY_CHECKS = 0; DROP TABLE ");
        for (int first = 1; *p; first = 0) {
            const char *end = strchrnul(p, '\n');
            buf_adds(&drop, first ? "`" : ", `");
            for (const char *c = p; c < end; c++)
                buf_add(&drop, c, *c == '`' ? 0 : 1);
            buf_addc(&drop, '`');
            p = *end ? end + 1 : end;
        }
        {
            char *drop_argv[] = {"mariadb", defaults, "-e", drop.data, cfg->db_name, NULL};
            if (run_tool(drop_argv, -1, -1, NULL)) {
                fprintf(stderr, "purser restore: cannot drop the tables of %s\n", cfg->db_name);
                goto cleanup;
            }
        }
    }
    lseek(fd, 0, SEEK_SET);
    {
        char *load[] = {"mariadb", defaults, "--default-character-set=utf8mb4", cfg->db_name, NULL};
        if (run_tool(load, fd, -1, NULL)) {
            fprintf(stderr, "purser restore: mariadb could not load %s\n", file);
            goto cleanup;
        }
    }
    if (keyring_from && strcmp(keyring_from, cfg->keyring_file) &&
        copy_keyring(keyring_from, cfg->keyring_file, 1))
        goto cleanup;
    /* a backup of an older version: its schema brought to this one's */
    if (mysql_library_init(0, NULL, NULL) || store_new(&store, cfg, &err) ||
        migrate_apply(store, purser_migrations, purser_migration_count, NULL, NULL, &applied,
                      &err) ||
        migrate_current(store, &version, &err)) {
        fprintf(stderr, "purser restore: migrations: %s\n", store ? err.message : "no database");
        goto cleanup;
    }
    printf("restored %s into database %s in %.1fs (schema %d, %d migration(s) applied)%s\n", file,
           cfg->db_name, now_seconds() - t0, version, applied,
           keyring_from ? ", keyring in place" : "");
    printf("restart purser-fcgi (systemctl restart purser-fcgi): its caches and keyring are the "
           "old ones\n");
    rc = 0;
cleanup:
    if (fd >= 0)
        close(fd);
    if (options[0])
        unlink(options);
    store_free(store);
    buf_release(&tables);
    buf_release(&drop);
    return rc;
usage:
    fprintf(stderr, "usage: purser restore FILE [--keyring FILE] [--replace]\n");
    return 2;
}

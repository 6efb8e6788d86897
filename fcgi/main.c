/* main.c: purser-fcgi's master: opens the FastCGI socket and supervises the prefork workers.
 *
 * Signals: SIGCHLD replaces a dead worker at once; SIGUSR1 from a worker says it is serving
 * its last request (fcgi.max_requests), and its replacement starts at once, while it finishes,
 * so that recycling never leaves fewer workers accepting; SIGHUP reloads the configuration and
 * replaces every worker (old ones finish their request first); SIGTERM or SIGINT stops
 * accepting, lets workers finish in-flight requests (up to fcgi.shutdown_timeout seconds,
 * then SIGKILL) and exits.
 */
#include "base/log.h"
#include "base/metrics.h"
#include "config/config.h"
#include "follower.h"
#include "registry/registry.h"
#include "resource/resource.h"
#include "router.h"
#include "worker.h"

#include <errno.h>
#include <fcgiapp.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <mysql.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 256

struct child {
    pid_t pid;
    unsigned generation;
    time_t stop_deadline; /* 0 while serving; when it must be gone after a SIGTERM */
    int retiring;         /* serving its last request: already replaced */
};

struct master {
    struct purser_config cfg;
    struct rbac_policy *policy;
    const char *config_path;
    int listen_fd;
    unsigned generation;
    struct child children[2 * MAX_WORKERS];
    size_t child_count;
    int stopping;
    time_t spawn_window;
    int spawns_in_window;
    pid_t follower; /* the events follower (events.follow_interval), 0 when none runs */
};

static long worker_target(const struct purser_config *cfg)
{
    long n = cfg->workers;
    if (n <= 0)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n <= 0)
        n = 1;
    return n > MAX_WORKERS ? MAX_WORKERS : n;
}

static void log_pid(const char *message, pid_t pid)
{
    json_t *fields = json_pack("{s:i}", "worker", (int)pid);
    log_message("info", message, fields);
    json_decref(fields);
}

static int spawn(struct master *m)
{
    pid_t pid;
    if (m->child_count >= sizeof(m->children) / sizeof(m->children[0]))
        return -1;
    pid = fork();
    if (pid < 0) {
        log_message("error", "fork failed", NULL);
        return -1;
    }
    if (pid == 0) {
        int status;
        log_reset_pid();
        status = worker_run(&m->cfg, m->policy, m->listen_fd);
        _exit(status);
    }
    m->children[m->child_count++] = (struct child){pid, m->generation, 0, 0};
    metrics_set(METRIC_WORKERS_ALIVE, (long long)m->child_count);
    return 0;
}

static size_t serving_count(const struct master *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->child_count; i++)
        n += m->children[i].generation == m->generation && m->children[i].stop_deadline == 0 &&
             !m->children[i].retiring;
    return n;
}

/* Starts the events follower when it is configured and not running (again at once after it
 * died: its start posts again what it may have missed). */
static void start_follower(struct master *m)
{
    pid_t pid;
    if (m->stopping || m->follower || m->cfg.events_follow_interval <= 0 ||
        !*m->cfg.events_publish_socket || m->spawns_in_window >= 20)
        return;
    m->spawns_in_window++;
    pid = fork();
    if (pid < 0) {
        log_message("error", "fork failed", NULL);
        return;
    }
    if (pid == 0) {
        close(m->listen_fd);
        log_reset_pid();
        _exit(follower_run(&m->cfg));
    }
    m->follower = pid;
}

/* Starts workers up to the target. A crash loop is slowed to 20 starts a second. */
static void fill_workers(struct master *m)
{
    time_t now = time(NULL);
    if (m->stopping)
        return;
    if (now != m->spawn_window) {
        m->spawn_window = now;
        m->spawns_in_window = 0;
    }
    while ((long)serving_count(m) < worker_target(&m->cfg) && m->spawns_in_window < 20) {
        if (spawn(m))
            break;
        m->spawns_in_window++;
    }
}

static void stop_child(struct master *m, struct child *c)
{
    if (c->stop_deadline)
        return;
    c->stop_deadline = time(NULL) + m->cfg.shutdown_timeout;
    kill(c->pid, SIGTERM);
}

static void reap(struct master *m)
{
    pid_t pid;
    int status;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid == m->follower) {
            m->follower = 0;
            if (!m->stopping)
                log_pid("events follower ended; starting it again", pid);
            continue;
        }
        for (size_t i = 0; i < m->child_count; i++) {
            if (m->children[i].pid != pid)
                continue;
            const struct child *c = &m->children[i];
            int clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
            if (WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM && WTERMSIG(status) != SIGKILL) {
                json_t *fields =
                    json_pack("{s:i, s:i}", "worker", (int)pid, "signal", WTERMSIG(status));
                log_message("error", "worker crashed; replacing it", fields);
                json_decref(fields);
            } else if (!c->stop_deadline && !clean) {
                log_pid("worker died; replacing it", pid);
            }
            /* why it goes, for purser_worker_restarts_total (a shutdown is no restart) */
            if (!c->stop_deadline && !(clean && c->retiring))
                metrics_add(METRIC_WORKER_RESTART_CRASHED, 1);
            else if (clean && c->retiring && !c->stop_deadline)
                metrics_add(METRIC_WORKER_RESTART_RETIRED, 1);
            else if (c->generation != m->generation && !m->stopping)
                metrics_add(METRIC_WORKER_RESTART_RELOAD, 1);
            m->children[i] = m->children[--m->child_count];
            metrics_set(METRIC_WORKERS_ALIVE, (long long)m->child_count);
            break;
        }
    }
}

/* Loads the RBAC policy file and checks it against the route table. */
static int load_policy(struct rbac_policy **out, const char *path, struct purser_error *err)
{
    int rc = rbac_policy_load(out, path, err);
    if (!rc && (rc = routes_check(*out, err))) {
        rbac_policy_free(*out);
        *out = NULL;
    }
    return rc;
}

static void reload(struct master *m)
{
    struct purser_config fresh;
    struct rbac_policy *policy = NULL;
    struct purser_error err;
    int rc = config_load(&fresh, m->config_path, &err);
    if (!rc)
        rc = load_policy(&policy, fresh.policy_file, &err);
    if (rc) {
        json_t *fields = json_pack("{s:s}", "error", err.message);
        log_message("error", "reload refused: configuration invalid; keeping the old one", fields);
        json_decref(fields);
        config_release(&fresh);
        return;
    }
    if (strcmp(fresh.fcgi_socket, m->cfg.fcgi_socket) != 0)
        log_message("warning", "fcgi.socket changes only on restart", NULL);
    free(fresh.fcgi_socket);
    fresh.fcgi_socket = m->cfg.fcgi_socket;
    m->cfg.fcgi_socket = NULL;
    config_release(&m->cfg);
    m->cfg = fresh;
    rbac_policy_free(m->policy);
    m->policy = policy;
    m->generation++;
    for (size_t i = 0; i < m->child_count; i++)
        stop_child(m, &m->children[i]);
    if (m->follower) /* it starts again with the new configuration (it has nothing to finish) */
        kill(m->follower, SIGKILL);
    log_message("info", "configuration reloaded; replacing workers", NULL);
}

/* SIGKILLs children past their deadline. */
static void enforce_deadlines(struct master *m)
{
    time_t now = time(NULL);
    for (size_t i = 0; i < m->child_count; i++)
        if (m->children[i].stop_deadline && now > m->children[i].stop_deadline)
            kill(m->children[i].pid, SIGKILL);
}

static int open_socket(const char *path, int backlog, const char *group)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int probe, fd;

    if (strlen(path) >= sizeof(addr.sun_path)) {
        fprintf(stderr, "purser-fcgi: fcgi.socket path too long: %s\n", path);
        return -1;
    }
    strcpy(addr.sun_path, path);
    probe = socket(AF_UNIX, SOCK_STREAM, 0);
    if (probe >= 0 && connect(probe, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
        fprintf(stderr, "purser-fcgi: %s is in use by a running server\n", path);
        close(probe);
        return -1;
    }
    if (probe >= 0)
        close(probe);
    unlink(path); /* a stale socket of a server that is gone */
    fd = FCGX_OpenSocket(path, backlog);
    if (fd < 0) {
        fprintf(stderr, "purser-fcgi: cannot listen on %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (*group) { /* nginx's group may connect, no one else (a member of it, as systemd runs us) */
        struct group *g = getgrnam(group);
        if (!g || chown(path, (uid_t)-1, g->gr_gid) || chmod(path, 0660)) {
            fprintf(stderr, "purser-fcgi: cannot give %s to group %s (fcgi.socket_group): %s\n",
                    path, group, g ? strerror(errno) : "no such group");
            close(fd);
            unlink(path);
            return -1;
        }
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

static int supervise(struct master *m)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    /* counters every worker adds to, inherited by each (GET /metrics) */
    if (metrics_init(route_count))
        log_message("warning", "no shared memory for metrics; GET /metrics shows none", NULL);
    fill_workers(m);
    start_follower(m);
    for (;;) {
        struct timespec tick = {0, 200 * 1000000L};
        siginfo_t info;
        int sig = sigtimedwait(&set, &info, &tick);
        if (sig == SIGUSR1) { /* a worker took its last request: start its replacement now */
            for (size_t i = 0; i < m->child_count; i++)
                if (m->children[i].pid == info.si_pid && !m->children[i].retiring) {
                    m->children[i].retiring = 1;
                    log_pid("worker serving its last request; replacement started", info.si_pid);
                }
        } else if (sig == SIGTERM || sig == SIGINT) {
            if (!m->stopping)
                log_message("info", "stopping: finishing in-flight requests", NULL);
            m->stopping = 1;
            for (size_t i = 0; i < m->child_count; i++)
                stop_child(m, &m->children[i]);
            if (m->follower)
                kill(m->follower, SIGKILL);
        } else if (sig == SIGHUP && !m->stopping) {
            reload(m);
        }
        reap(m);
        enforce_deadlines(m);
        if (m->stopping && m->child_count == 0 && !m->follower)
            return 0;
        fill_workers(m);
        start_follower(m);
    }
}

static void usage(FILE *out)
{
    fprintf(out, "usage: purser-fcgi [-c CONFIG] [--help] [--version]\n\n"
                 "The FastCGI server of purser: a master and its workers (fcgi.workers) on\n"
                 "fcgi.socket, behind nginx. It runs in the foreground and logs to stderr.\n"
                 "\n"
                 "options:\n"
                 "  -c, --config CONFIG   the configuration (default $PURSER_CONFIG, else\n"
                 "                        /etc/purser/purser.yaml)\n"
                 "  -h, --help            print this help\n"
                 "  -V, --version         print the version\n");
}

int main(int argc, char **argv)
{
    static struct master m;
    struct purser_error err;
    const char *path = getenv("PURSER_CONFIG");
    int opt, rc;

    static const struct option longs[] = {{"config", required_argument, NULL, 'c'},
                                          {"help", no_argument, NULL, 'h'},
                                          {"version", no_argument, NULL, 'V'},
                                          {NULL, 0, NULL, 0}};
    while ((opt = getopt_long(argc, argv, "c:hV", longs, NULL)) != -1) {
        if (opt == 'c') {
            path = optarg;
        } else if (opt == 'V') {
            printf("purser-fcgi %s\n", PURSER_VERSION);
            return 0;
        } else {
            usage(opt == 'h' ? stdout : stderr);
            return opt == 'h' ? 0 : 2;
        }
    }
    m.config_path = path ? path : "/etc/purser/purser.yaml";
    if (config_load(&m.cfg, m.config_path, &err)) {
        if (!strncmp(err.message, m.config_path, strlen(m.config_path))) /* named once */
            fprintf(stderr, "purser-fcgi: %s\n", err.message);
        else
            fprintf(stderr, "purser-fcgi: %s: %s\n", m.config_path, err.message);
        return 1;
    }
    { /* the registry's and the resource kinds' events, before the workers that write them */
        const struct resource_kind *kinds[16];
        int events_rc;
        if (routes_init()) {
            fprintf(stderr, "purser-fcgi: out of memory for the route table\n");
            return 1;
        }
        events_rc = registry_events_register();
        if (!events_rc)
            events_rc = resource_kinds_register(kinds, registry_resources(kinds, 16));
        if (events_rc) {
            fprintf(stderr, "purser-fcgi: too many event kinds\n");
            return 1;
        }
    }
    if (load_policy(&m.policy, m.cfg.policy_file, &err)) {
        fprintf(stderr, "purser-fcgi: rbac.policy_file %s: %s\n", m.cfg.policy_file, err.message);
        return 1;
    }
    if (m.cfg.development_mode && strchr(m.cfg.fcgi_socket, ':')) {
        fprintf(stderr,
                "purser-fcgi: auth.development_mode needs fcgi.socket to be a unix socket path\n");
        return 1;
    }
    if (mysql_library_init(0, NULL, NULL)) {
        fprintf(stderr, "purser-fcgi: cannot initialise the MariaDB client library\n");
        return 1;
    }
    FCGX_Init();
    if ((m.listen_fd =
             open_socket(m.cfg.fcgi_socket, (int)m.cfg.fcgi_backlog, m.cfg.fcgi_socket_group)) < 0)
        return 1;
    {
        json_t *fields = json_pack("{s:s, s:i}", "socket", m.cfg.fcgi_socket, "workers",
                                   (int)worker_target(&m.cfg));
        log_message("info", "purser-fcgi started", fields);
        json_decref(fields);
    }
    rc = supervise(&m);
    close(m.listen_fd);
    unlink(m.cfg.fcgi_socket);
    log_message("info", "purser-fcgi stopped", NULL);
    config_release(&m.cfg);
    rbac_policy_free(m.policy);
    mysql_library_end();
    return rc;
}

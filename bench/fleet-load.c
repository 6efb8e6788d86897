/* fleet-load.c: bench-only load generator for bench/fleet. Simulated chef-client runs, each
 * node Chef-signed (protocol 1.3) with its own client key, arriving at random (a Poisson
 * stream, as chef-client's interval and splay spread a fleet's runs), and the rest of a day's
 * requests beside them. Not part of purser.
 *
 * Usage: fleet-load PLAN RATE SECONDS SEED [first]
 *   RATE runs per second for SECONDS (with "first": one run per node, its first: GET node 404,
 *   POST node, every file downloaded; otherwise nodes exist and have their files cached).
 * PLAN, one item a line: url U | ca FILE | org O | token T | group G | policy P |
 *   artifact NAME/IDENTIFIER | file CHECKSUM | node NAME KEYFILE | cluster ID |
 *   revision REV (a pushed revision for promotions) | docs FILE (a YAML bucket, "@N@" replaced
 *   by a counter) | day 0|1 (the rest of the day on or off) | threads N | watchers N
 *
 * Signing: a Chef signature covers the method, path, body hash, timestamp and user, and holds for
 * 15 minutes, so each node's GETs are signed once before the clock starts and each run's node
 * save (a body of its own) is signed before the clock starts too, as chef-client would have
 * signed it on its own machine: the generator's CPU during the measured time goes to sending.
 * The node bodies are generated twice from the same seed (signed, then sent) instead of kept.
 *
 * Prints, for the measured time: one "run" line (count, errors, p50, p99, max in ms, the
 * latest start behind schedule) and one "kind" line per request kind (count, errors, p50, p99,
 * bytes sent and received). */
#include "auth/chef_auth.h"
#include "base/buf.h"
#include "fleet-ohai.h"

#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum kind {
    K_NODE_GET,
    K_NODE_CREATE,
    K_LOCK,
    K_ARTIFACT,
    K_FILE,
    K_NODE_SAVE, /* a run's */
    K_PUSH,
    K_PROMOTE,
    K_DOC_PUT,
    K_RENDER,
    K_FACTS,
    K_ADMIN,
    K_WATCH, /* the day's */
    KINDS
};
static const char *kind_names[KINDS] = {"node_get",  "node_create", "lock",    "artifact", "file",
                                        "node_save", "push",        "promote", "doc_put",  "render",
                                        "facts",     "admin_list",  "watch"};
/* the rest of the day per chef-client run: operators, site tooling, clusters, a browser */
static const double day_per_run[KINDS] = {[K_PUSH] = 0.01,  [K_PROMOTE] = 0.01, [K_DOC_PUT] = 0.02,
                                          [K_RENDER] = 0.0, [K_FACTS] = 0.2,    [K_ADMIN] = 0.02};

#define MAX_LIST 4096
struct node {
    char *name;
    char *key_pem;                                                     /* its private key, PEM */
    struct curl_slist *get_node, *create, *lock, **artifacts, **files; /* signed headers */
};
static struct {
    char *url, *ca, *org, *token, *group, *policy, *revision, *docs;
    char *artifacts[MAX_LIST], *files[MAX_LIST], *clusters[MAX_LIST];
    size_t artifact_count, file_count, cluster_count, node_count;
    struct node nodes[100000];
    int day, threads, watchers;
} plan = {.threads = 64, .watchers = 4};

struct item {
    double at; /* seconds after the start */
    int kind;  /* K_NODE_GET: a run; else the day's kind */
    size_t node;
    long counter;
    struct curl_slist *save; /* a run's signed node save */
};
static struct item *items;
static size_t item_count;
static atomic_size_t next_item;
static double start_time;
static int first_runs;
static long seed;
static volatile int stopping;

struct sample {
    double ms;
    int kind;
};
static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;
static double *run_ms;
static size_t run_count, run_errors;
static double worst_lateness;
static struct sample *samples;
static size_t sample_count, sample_cap;
static size_t errors[KINDS];
static double bytes_in[KINDS], bytes_out[KINDS];
static atomic_int shown_errors;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Chef's signed headers (protocol 1.3, SHA-256) for one request: purser's own signer
 * (lib/auth/chef_auth.c, as purserctl signs), then what chef-client sends beside them. */
static struct curl_slist *sign(const struct node *n, const char *method, const char *path,
                               const char *body, size_t body_len)
{
    struct chef_signed_request req = {.method = method,
                                      .path = path,
                                      .body = body,
                                      .body_len = body_len,
                                      .user_id = n->name,
                                      .server_api_version = "0"};
    struct buf lines = BUF_INIT;
    struct purser_error err;
    struct curl_slist *h = NULL;
    char *line, *save = NULL;

    if (chef_auth_sign(&lines, &req, n->key_pem, time(NULL), &err)) {
        fprintf(stderr, "fleet-load: signing failed for %s: %s\n", n->name, err.message);
        exit(1);
    }
    for (line = strtok_r(lines.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        h = curl_slist_append(h, line);
    buf_release(&lines);
    h = curl_slist_append(h, "Accept: application/json");
    h = curl_slist_append(h, "X-Chef-Version: 18.5.0");
    if (body_len)
        h = curl_slist_append(h, "Content-Type: application/json");
    return h;
}

/* ---- a node's body: what chef-client saves (fleet-ohai.c: its automatic attributes) ------ */

static size_t node_size(size_t n)
{
    return 50 * 1024 + fleet_mix(n * 7 + 3) % (100 * 1024 + 1);
}

/* The node as chef-client PUTs it at the end of run k (malloc'd text). */
static char *node_body(size_t n, long k)
{
    json_t *node = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:[s,s,s], s:{s:[]}, s:{s:{s:i, s:i, s:s}}, s:{}, s:o}",
        "name", plan.nodes[n].name, "chef_type", "node", "json_class", "Chef::Node",
        "chef_environment", "_default", "policy_name", plan.policy, "policy_group", plan.group,
        "run_list", "recipe[base::default]", "recipe[app::default]", "recipe[monitoring::default]",
        "normal", "tags", "default", "app", "port", 8080, "workers", 8, "tier", "web", "override",
        "automatic", fleet_ohai(plan.nodes[n].name, n, k, node_size(n)));
    char *text = json_dumps(node, JSON_COMPACT);
    json_decref(node);
    return text;
}

/* ---- requests ------------------------------------------------------------------------------ */

struct response {
    char *data;
    size_t len;
};

static size_t collect(char *ptr, size_t size, size_t count, void *userdata)
{
    struct response *r = userdata;
    size_t n = size * count;
    char *grown = realloc(r->data, r->len + n + 1);
    if (!grown)
        return 0;
    r->data = grown;
    memcpy(r->data + r->len, ptr, n);
    r->len += n;
    r->data[r->len] = '\0';
    return n;
}

static void record(int kind, double ms, int ok)
{
    pthread_mutex_lock(&record_lock);
    if (sample_count == sample_cap) {
        sample_cap = sample_cap ? 2 * sample_cap : 65536;
        samples = realloc(samples, sample_cap * sizeof(*samples));
    }
    samples[sample_count++] = (struct sample){ms, kind};
    if (!ok)
        errors[kind]++;
    pthread_mutex_unlock(&record_lock);
}

/* One request; its status checked against want (or want2). Returns 0 when it matched. */
static int request(CURL *curl, int kind, const char *method, const char *path,
                   struct curl_slist *headers, const char *body, size_t body_len, long want,
                   long want2, struct response *out)
{
    char url[2048];
    long status = 0;
    double t0 = now();
    struct response r = {NULL, 0};
    CURLcode rc;
    int ok;

    snprintf(url, sizeof(url), "%s%s", plan.url, path);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r);
    if (body) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)body_len);
    } else {
        curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    }
    rc = curl_easy_perform(curl);
    if (rc == CURLE_OK)
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    ok = rc == CURLE_OK && (status == want || status == want2);
    if (!ok && atomic_fetch_add(&shown_errors, 1) < 5)
        fprintf(stderr, "fleet-load: %s %s: %s %ld %.200s\n", method, path,
                rc == CURLE_OK ? "status" : curl_easy_strerror(rc), status, r.data ? r.data : "");
    record(kind, (now() - t0) * 1000, ok);
    pthread_mutex_lock(&record_lock);
    bytes_out[kind] += body_len;
    bytes_in[kind] += r.len;
    pthread_mutex_unlock(&record_lock);
    if (out)
        *out = r;
    else
        free(r.data);
    return ok ? 0 : -1;
}

static struct curl_slist *bearer(const char *type)
{
    char line[512];
    struct curl_slist *h = NULL;
    snprintf(line, sizeof(line), "Authorization: Bearer %s", plan.token);
    h = curl_slist_append(h, line);
    h = curl_slist_append(h, type ? type : "Accept: application/json");
    if (type)
        h = curl_slist_append(h, "Content-Type: application/json");
    return h;
}

/* A chef-client run, its requests in order; 0 when every one answered as chef-client expects. */
static int chef_run(CURL *curl, struct item *it)
{
    struct node *n = &plan.nodes[it->node];
    char path[1024];
    int rc;
    snprintf(path, sizeof(path), "/organizations/%s/nodes/%s", plan.org, n->name);
    rc = request(curl, K_NODE_GET, "GET", path, n->get_node, NULL, 0, first_runs ? 404 : 200, 0,
                 NULL);
    if (!rc && first_runs) {
        char created[1024];
        snprintf(created, sizeof(created),
                 "{\"name\":\"%s\",\"chef_type\":\"node\",\"json_class\":\"Chef::Node\","
                 "\"policy_name\":\"%s\",\"policy_group\":\"%s\"}",
                 n->name, plan.policy, plan.group);
        snprintf(path, sizeof(path), "/organizations/%s/nodes", plan.org);
        rc = request(curl, K_NODE_CREATE, "POST", path, n->create, created, strlen(created), 201, 0,
                     NULL);
    }
    snprintf(path, sizeof(path), "/organizations/%s/policy_groups/%s/policies/%s", plan.org,
             plan.group, plan.policy);
    if (!rc)
        rc = request(curl, K_LOCK, "GET", path, n->lock, NULL, 0, 200, 0, NULL);
    for (size_t i = 0; !rc && i < plan.artifact_count; i++) {
        snprintf(path, sizeof(path), "/organizations/%s/cookbook_artifacts/%s", plan.org,
                 plan.artifacts[i]);
        rc = request(curl, K_ARTIFACT, "GET", path, n->artifacts[i], NULL, 0, 200, 0, NULL);
    }
    for (size_t i = 0; !rc && first_runs && i < plan.file_count; i++) {
        snprintf(path, sizeof(path), "/organizations/%s/file_store/%s", plan.org, plan.files[i]);
        rc = request(curl, K_FILE, "GET", path, n->files[i], NULL, 0, 200, 0, NULL);
    }
    if (!rc) {
        char *body = node_body(it->node, it->counter);
        snprintf(path, sizeof(path), "/organizations/%s/nodes/%s", plan.org, n->name);
        rc = request(curl, K_NODE_SAVE, "PUT", path, it->save, body, strlen(body), 200, 0, NULL);
        free(body);
    }
    return rc;
}

static char *read_file(const char *name)
{
    FILE *f = fopen(name, "r");
    char *data;
    long len;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    data = malloc(len + 1);
    data[fread(data, 1, len, f)] = '\0';
    fclose(f);
    return data;
}

/* The site tooling: the bucket PUT with one value changed (a new revision), then its render. */
static void doc_put(CURL *curl, long counter)
{
    static char *template;
    struct curl_slist *h;
    struct response r = {NULL, 0};
    char marker[32], *body, *at, path[256];
    long revision = 0;
    if (!template && !(template = read_file(plan.docs)))
        return;
    snprintf(marker, sizeof(marker), "%ld", seed * 100000 + counter);
    body = malloc(strlen(template) + 32);
    at = strstr(template, "@N@");
    if (!at) {
        free(body);
        return;
    }
    sprintf(body, "%.*s%s%s", (int)(at - template), template, marker, at + 3);
    h = bearer(NULL);
    h = curl_slist_append(h, "Content-Type: application/x-yaml");
    /* the answer's documents each carry status.revision (JSON, as Accept asks; YAML otherwise) */
    if (!request(curl, K_DOC_PUT, "PUT", "/api/v1.0/buckets/site/documents", h, body, strlen(body),
                 200, 201, &r) &&
        r.data) {
        if ((at = strstr(r.data, "\"revision\":")))
            revision = atol(at + strlen("\"revision\":")); /* (atol skips the spaces) */
        else if ((at = strstr(r.data, "revision: ")))
            revision = atol(at + 10);
    }
    free(r.data);
    free(body);
    curl_slist_free_all(h);
    if (revision) {
        h = bearer(NULL);
        h = curl_slist_append(h, "Accept: application/x-yaml");
        snprintf(path, sizeof(path), "/api/v1.0/revisions/%ld/rendered-documents", revision);
        request(curl, K_RENDER, "GET", path, h, NULL, 0, 200, 0, NULL);
        curl_slist_free_all(h);
    }
}

static void day_item(CURL *curl, struct item *it)
{
    char path[1024], body[2048];
    struct curl_slist *h =
        bearer(it->kind == K_PUSH || it->kind == K_FACTS ? "Accept: application/json" : NULL);
    switch (it->kind) {
    case K_PUSH: /* an operator: chef push of a new lock to the dev group */
        snprintf(path, sizeof(path), "/organizations/%s/policy_groups/dev/policies/%s", plan.org,
                 plan.policy);
        snprintf(
            body, sizeof(body),
            "{\"revision_id\":\"%040lx\",\"name\":\"%s\",\"run_list\":[\"recipe[base::default]\"],"
            "\"cookbook_locks\":{\"base\":{\"version\":\"1.0.%ld\",\"identifier\":\"%s\"}},"
            "\"default_attributes\":{\"release\":%ld},\"override_attributes\":{}}",
            (unsigned long)(seed * 1000000 + it->counter), plan.policy, it->counter,
            strchr(plan.artifacts[0], '/') + 1, it->counter);
        request(curl, K_PUSH, "PUT", path, h, body, strlen(body), 200, 201, NULL);
        break;
    case K_PROMOTE: /* and its promotion to staging: the pointer moved to a known revision */
        snprintf(path, sizeof(path),
                 "/organizations/%s/policy_groups/staging/policies/%s/revision/%s", plan.org,
                 plan.policy, plan.revision);
        request(curl, K_PROMOTE, "PUT", path, h, NULL, 0, 200, 201, NULL);
        break;
    case K_DOC_PUT: doc_put(curl, it->counter); break;
    case K_FACTS: /* a cluster's agent reporting its dynamic facts */
        snprintf(path, sizeof(path), "/organizations/%s/clusters/%s/facts", plan.org,
                 plan.clusters[it->counter % plan.cluster_count]);
        snprintf(body, sizeof(body),
                 "{\"kubernetes_version\":{\"major\":\"1\",\"minor\":\"%ld\",\"gitVersion\":"
                 "\"v1.%ld.%ld\"},\"nodes\":%ld,\"pods\":%ld}",
                 20 + it->counter % 12, 20 + it->counter % 12, it->counter % 10,
                 1 + it->counter % 50, 10 + it->counter % 900);
        request(curl, K_FACTS, "PUT", path, h, body, strlen(body), 200, 0, NULL);
        break;
    case K_ADMIN: { /* someone browsing the admin pages' lists */
        static const char *lists[] = {
            "/organizations/%s/nodes?sort=-updated_at&page_size=50",
            "/organizations/%s/clients?page_size=50", "/organizations/%s/clusters?page_size=50",
            "/organizations/%s/events?last=50", "/organizations/%s/policies?page_size=50"};
        snprintf(path, sizeof(path), lists[it->counter % 5], plan.org);
        request(curl, K_ADMIN, "GET", path, h, NULL, 0, 200, 0, NULL);
        break;
    }
    }
    curl_slist_free_all(h);
}

static CURL *new_curl(void)
{
    CURL *curl = curl_easy_init();
    curl_easy_setopt(curl, CURLOPT_CAINFO, plan.ca);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    return curl;
}

static void *worker(void *unused)
{
    CURL *curl = new_curl();
    (void)unused;
    for (;;) {
        size_t i = atomic_fetch_add(&next_item, 1);
        struct item *it;
        double wait, late;
        if (i >= item_count)
            break;
        it = &items[i];
        wait = start_time + it->at - now();
        if (wait > 0)
            usleep((useconds_t)(wait * 1e6));
        late = now() - (start_time + it->at);
        if (it->kind == K_NODE_GET) {
            int rc = chef_run(curl, it);
            double ms = (now() - (start_time + it->at)) * 1000;
            pthread_mutex_lock(&record_lock);
            run_ms[run_count++] = ms;
            if (rc)
                run_errors++;
            if (late > worst_lateness)
                worst_lateness = late;
            pthread_mutex_unlock(&record_lock);
        } else {
            day_item(curl, it);
        }
    }
    curl_easy_cleanup(curl);
    return NULL;
}

/* A watcher following the feed: since the newest, waiting up to 2 s each time. */
static void *watcher(void *unused)
{
    CURL *curl = new_curl();
    struct curl_slist *h = bearer(NULL);
    char path[512];
    long since = -1;
    (void)unused;
    while (!stopping) {
        struct response r = {NULL, 0};
        char *next;
        if (since < 0)
            snprintf(path, sizeof(path), "/organizations/%s/events?last=1", plan.org);
        else
            snprintf(path, sizeof(path), "/organizations/%s/events?since=%ld&wait=2", plan.org,
                     since);
        if (request(curl, K_WATCH, "GET", path, h, NULL, 0, 200, 0, &r) == 0 && r.data &&
            (next = strstr(r.data, "\"next\":")))
            since = atol(next + 7);
        else if (!stopping)
            usleep(200000);
        free(r.data);
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(curl);
    return NULL;
}

/* ---- the plan, the schedule, signing -------------------------------------------------------- */

static void load_plan(const char *file)
{
    FILE *f = fopen(file, "r");
    char line[8192], a[4096], b[4096];
    if (!f) {
        perror(file);
        exit(1);
    }
    while (fgets(line, sizeof(line), f)) {
        int fields = sscanf(line, "%4095s %4095s", a, b);
        if (fields < 2)
            continue;
        if (!strcmp(a, "url"))
            plan.url = strdup(b);
        else if (!strcmp(a, "ca"))
            plan.ca = strdup(b);
        else if (!strcmp(a, "org"))
            plan.org = strdup(b);
        else if (!strcmp(a, "token"))
            plan.token = strdup(b);
        else if (!strcmp(a, "group"))
            plan.group = strdup(b);
        else if (!strcmp(a, "policy"))
            plan.policy = strdup(b);
        else if (!strcmp(a, "revision"))
            plan.revision = strdup(b);
        else if (!strcmp(a, "docs"))
            plan.docs = strdup(b);
        else if (!strcmp(a, "day"))
            plan.day = atoi(b);
        else if (!strcmp(a, "threads"))
            plan.threads = atoi(b);
        else if (!strcmp(a, "watchers"))
            plan.watchers = atoi(b);
        else if (!strcmp(a, "artifact") && plan.artifact_count < MAX_LIST)
            plan.artifacts[plan.artifact_count++] = strdup(b);
        else if (!strcmp(a, "file") && plan.file_count < MAX_LIST)
            plan.files[plan.file_count++] = strdup(b);
        else if (!strcmp(a, "cluster") && plan.cluster_count < MAX_LIST)
            plan.clusters[plan.cluster_count++] = strdup(b);
        else if (!strcmp(a, "node") && plan.node_count < sizeof(plan.nodes) / sizeof(*plan.nodes)) {
            char key[4096];
            FILE *k;
            struct node *n = &plan.nodes[plan.node_count++];
            if (sscanf(line, "%*s %4095s %4095s", b, key) != 2 || !(k = fopen(key, "r"))) {
                fprintf(stderr, "fleet-load: bad node line: %s", line);
                exit(1);
            }
            n->name = strdup(b);
            fclose(k);
            n->key_pem = read_file(key);
            if (!n->key_pem || !strstr(n->key_pem, "PRIVATE KEY")) {
                fprintf(stderr, "fleet-load: %s is not a private key\n", key);
                exit(1);
            }
        }
    }
    fclose(f);
}

static double exponential(unsigned int *state, double rate)
{
    double u = (rand_r(state) + 1.0) / ((double)RAND_MAX + 2.0);
    return -log(u) / rate;
}

static int by_time(const void *a, const void *b)
{
    double x = ((const struct item *)a)->at, y = ((const struct item *)b)->at;
    return x < y ? -1 : x > y;
}

/* Runs as Poisson arrivals at rate (one per node, in order, for first runs), each node taking
 * its turn; the day's kinds as Poisson arrivals at their share of the run rate. */
static void schedule(double rate, double seconds)
{
    unsigned int state = (unsigned int)seed;
    size_t cap = (size_t)(rate * seconds * 3 + plan.node_count + 1000),
           offset = (size_t)seed * 7919;
    double t = 0;
    items = calloc(cap, sizeof(*items));
    for (size_t k = 0; item_count < cap; k++) {
        t += exponential(&state, rate);
        if (first_runs ? k >= plan.node_count : t >= seconds)
            break;
        items[item_count++] =
            (struct item){t, K_NODE_GET, first_runs ? k : (offset + k) % plan.node_count,
                          seed * 100 + (long)k / (long)plan.node_count, NULL};
    }
    if (first_runs)
        seconds = t;
    for (int kind = K_PUSH; plan.day && kind < KINDS; kind++) {
        if (day_per_run[kind] <= 0 || (kind == K_FACTS && !plan.cluster_count) ||
            (kind == K_DOC_PUT && !plan.docs) || (kind == K_PROMOTE && !plan.revision))
            continue;
        t = 0;
        for (long c = 0; item_count < cap; c++) {
            t += exponential(&state, rate * day_per_run[kind]);
            if (t >= seconds)
                break;
            items[item_count++] = (struct item){t, kind, 0, c, NULL};
        }
    }
    qsort(items, item_count, sizeof(*items), by_time);
}

static atomic_size_t next_sign;

/* Signs every node's GETs (and its first run's requests) and every scheduled node save. */
static void *signer(void *unused)
{
    char path[1024];
    (void)unused;
    for (;;) {
        size_t i = atomic_fetch_add(&next_sign, 1);
        if (i < plan.node_count) {
            struct node *n = &plan.nodes[i];
            snprintf(path, sizeof(path), "/organizations/%s/nodes/%s", plan.org, n->name);
            n->get_node = sign(n, "GET", path, "", 0);
            snprintf(path, sizeof(path), "/organizations/%s/policy_groups/%s/policies/%s", plan.org,
                     plan.group, plan.policy);
            n->lock = sign(n, "GET", path, "", 0);
            n->artifacts = calloc(plan.artifact_count, sizeof(*n->artifacts));
            for (size_t a = 0; a < plan.artifact_count; a++) {
                snprintf(path, sizeof(path), "/organizations/%s/cookbook_artifacts/%s", plan.org,
                         plan.artifacts[a]);
                n->artifacts[a] = sign(n, "GET", path, "", 0);
            }
            if (first_runs) {
                char created[1024];
                snprintf(created, sizeof(created),
                         "{\"name\":\"%s\",\"chef_type\":\"node\",\"json_class\":\"Chef::Node\","
                         "\"policy_name\":\"%s\",\"policy_group\":\"%s\"}",
                         n->name, plan.policy, plan.group);
                snprintf(path, sizeof(path), "/organizations/%s/nodes", plan.org);
                n->create = sign(n, "POST", path, created, strlen(created));
                n->files = calloc(plan.file_count, sizeof(*n->files));
                for (size_t f = 0; f < plan.file_count; f++) {
                    snprintf(path, sizeof(path), "/organizations/%s/file_store/%s", plan.org,
                             plan.files[f]);
                    n->files[f] = sign(n, "GET", path, "", 0);
                }
            }
        } else if (i < plan.node_count + item_count) {
            struct item *it = &items[i - plan.node_count];
            char *body;
            if (it->kind != K_NODE_GET)
                continue;
            body = node_body(it->node, it->counter);
            snprintf(path, sizeof(path), "/organizations/%s/nodes/%s", plan.org,
                     plan.nodes[it->node].name);
            it->save = sign(&plan.nodes[it->node], "PUT", path, body, strlen(body));
            free(body);
        } else {
            break;
        }
    }
    return NULL;
}

static int by_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(double *v, size_t n, double q)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof(*v), by_ms);
    return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

static void report(double elapsed)
{
    double *v = malloc((sample_count + 1) * sizeof(*v));
    size_t n;
    printf("run count %zu errors %zu p50 %.1f p99 %.1f max %.1f late %.1f elapsed %.1f\n",
           run_count, run_errors, quantile(run_ms, run_count, 0.5),
           quantile(run_ms, run_count, 0.99), quantile(run_ms, run_count, 1.0),
           worst_lateness * 1000, elapsed);
    for (int k = 0; k < KINDS; k++) {
        n = 0;
        for (size_t i = 0; i < sample_count; i++)
            if (samples[i].kind == k)
                v[n++] = samples[i].ms;
        if (n)
            printf("kind %s count %zu errors %zu p50 %.1f p99 %.1f sent %.0f received %.0f\n",
                   kind_names[k], n, errors[k], quantile(v, n, 0.5), quantile(v, n, 0.99),
                   bytes_out[k], bytes_in[k]);
    }
    free(v);
}

int main(int argc, char **argv)
{
    pthread_t *threads, watchers[64], signers[8];
    int signer_count = (int)sysconf(_SC_NPROCESSORS_ONLN);
    double rate, seconds;
    if (argc < 5) {
        fprintf(stderr, "usage: fleet-load PLAN RATE SECONDS SEED [first]\n");
        return 2;
    }
    load_plan(argv[1]);
    rate = atof(argv[2]);
    seconds = atof(argv[3]);
    seed = atol(argv[4]);
    first_runs = argc > 5 && !strcmp(argv[5], "first");
    if (!plan.url || !plan.ca || !plan.org || !plan.token || !plan.group || !plan.policy ||
        !plan.node_count || !plan.artifact_count || rate <= 0) {
        fprintf(stderr, "fleet-load: the plan lacks url, ca, org, token, group, policy, nodes or "
                        "artifacts, or the rate is not positive\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    schedule(rate, seconds);
    run_ms = calloc(item_count + 1, sizeof(*run_ms));
    if (signer_count < 1 || signer_count > 8)
        signer_count = 2;
    for (int i = 0; i < signer_count; i++)
        pthread_create(&signers[i], NULL, signer, NULL);
    for (int i = 0; i < signer_count; i++)
        pthread_join(signers[i], NULL);
    threads = calloc(plan.threads, sizeof(*threads));
    start_time = now() + 0.2;
    for (int i = 0; i < plan.threads; i++)
        pthread_create(&threads[i], NULL, worker, NULL);
    for (int i = 0; plan.day && i < plan.watchers && i < 64; i++)
        pthread_create(&watchers[i], NULL, watcher, NULL);
    for (int i = 0; i < plan.threads; i++)
        pthread_join(threads[i], NULL);
    stopping = 1;
    report(now() - start_time);
    for (int i = 0; plan.day && i < plan.watchers && i < 64; i++)
        pthread_join(watchers[i], NULL);
    return 0;
}

/* render-engine: bench/render's in-process measurements of one YAML bundle: the baseline
 * (parse with purser's codec and emit again) and the rendering engine alone (layering and
 * substitution of the already-parsed documents). Prints "BASELINE_MS RENDER_MS OUT_COUNT",
 * medians of RUNS runs, in CPU milliseconds. Usage: render-engine FILE RUNS.
 * render-engine --growth SMALL LARGE ROUNDS: the engine's growth from one bundle to a larger
 * one, both rendered in each round (three renders of each, the median of three kept), so that
 * the two are timed under the same load of the machine; prints "SMALL_MS LARGE_MS GROWTH
 * MALLOC_GROWTH", the medians over the rounds, GROWTH that of each round's LARGE / SMALL, and
 * MALLOC_GROWTH the same measured first with malloc instead of the pool.
 * The renders run as a worker runs them: their jansson values from the per-request pool
 * (base/json_pool.h, fcgi.pool_reserve_bytes, on by default), begun before each render and
 * ended after it, the end counted in its time. The baseline's parse and emit use malloc.
 * render-engine --baseline FILE RUNS: the baseline alone, "BASELINE_MS" (bench/render takes
 * it again beside each request through the API, so that the two share the machine's moment).
 * Bench-only code, built by bench/render. */
#include "base/arena.h"
#include "base/json_pool.h"
#include "codec/yaml_codec.h"
#include "config/config.h"
#include "docs/document.h"
#include "docs/render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU time of this process: steadier than the wall clock on a shared machine. */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), compare);
    return v[n / 2];
}

/* One bundle parsed and checked for render_documents. */
static json_t *load(const char *path)
{
    struct purser_error err;
    struct arena *arena = arena_new();
    struct document *docs;
    json_t *stream = NULL, *messages = NULL;
    size_t len, count;
    char *text;
    if (!arena || file_read_all(&text, &len, path, 1 << 28, &err) ||
        yaml_codec_parse(&stream, text, len, &yaml_limits_documents, &err) ||
        document_prepare(arena, stream, &docs, &count, &messages, &err)) {
        fprintf(stderr, "render-engine: %s: %s\n", path, err.message);
        exit(1);
    }
    free(text);
    arena_free(arena);
    return stream;
}

/* The worker's pool for jansson's values, with the worker's default sizes (config.c). */
static void install_pool(void)
{
    if (json_pool_install((size_t)4 << 30, (size_t)1 << 20)) {
        fprintf(stderr, "render-engine: the pool could not be installed\n");
        exit(1);
    }
}

/* The CPU milliseconds of one render of stream; *out_count: the documents it made. */
static double render_once(json_t *stream, size_t *out_count)
{
    struct purser_error err;
    json_t *out = NULL;
    double start = now_ms();
    json_pool_begin(); /* (nothing before the pool is installed) */
    if (render_documents(stream, NULL, NULL, &out, NULL, &err)) {
        fprintf(stderr, "render-engine: %s\n", err.message);
        exit(1);
    }
    *out_count = json_array_size(out);
    json_decref(out);
    json_pool_end();
    return now_ms() - start;
}

/* The median CPU milliseconds of three renders of stream. */
static double render_ms(json_t *stream)
{
    size_t count;
    double t[3];
    for (int i = 0; i < 3; i++)
        t[i] = render_once(stream, &count);
    return median(t, 3);
}

static int growth(const char *small_path, const char *large_path, int rounds)
{
    json_t *small = load(small_path), *large = load(large_path);
    double s[64], l[64], g[64], with_malloc;
    for (int i = 0; i < rounds; i++) { /* with malloc: the pool, once installed, stays */
        s[i] = render_ms(small);
        l[i] = render_ms(large);
        g[i] = l[i] / s[i];
    }
    with_malloc = median(g, rounds);
    install_pool();
    for (int i = 0; i < rounds; i++) {
        s[i] = render_ms(small);
        l[i] = render_ms(large);
        g[i] = l[i] / s[i];
    }
    printf("%.1f %.1f %.2f %.2f\n", median(s, rounds), median(l, rounds), median(g, rounds),
           with_malloc);
    json_decref(small);
    json_decref(large);
    return 0;
}

/* The median CPU milliseconds of runs parses of text with purser's codec, each emitted again. */
static double baseline_ms(const char *text, size_t len, int runs)
{
    struct purser_error err;
    double base[64];
    for (int i = 0; i < runs; i++) {
        struct buf out = BUF_INIT;
        json_t *parsed = NULL;
        double start = now_ms();
        if (yaml_codec_parse(&parsed, text, len, &yaml_limits_documents, &err) ||
            yaml_codec_emit(&out, parsed, &err)) {
            fprintf(stderr, "render-engine: %s\n", err.message);
            exit(1);
        }
        base[i] = now_ms() - start;
        json_decref(parsed);
        buf_release(&out);
    }
    return median(base, runs);
}

int main(int argc, char **argv)
{
    struct purser_error err;
    size_t len;
    char *text;
    json_t *stream;
    int only_baseline = argc == 4 && strcmp(argv[1], "--baseline") == 0;
    const char *path = argv[only_baseline ? 2 : 1];
    int runs = argc > 2 ? atoi(argv[only_baseline ? 3 : 2]) : 5;
    double base, render[64];
    size_t out_count = 0;

    if (argc == 5 && strcmp(argv[1], "--growth") == 0 && atoi(argv[4]) >= 1 && atoi(argv[4]) <= 64)
        return growth(argv[2], argv[3], atoi(argv[4]));
    if (argc < 2 || runs < 1 || runs > 64 || file_read_all(&text, &len, path, 1 << 28, &err)) {
        fprintf(stderr, "usage: render-engine [--baseline] FILE RUNS (1-64)\n");
        return 2;
    }
    base = baseline_ms(text, len, runs);
    if (only_baseline) {
        printf("%.1f\n", base);
        free(text);
        return 0;
    }
    stream = load(path);
    install_pool();
    for (int i = 0; i < runs; i++)
        render[i] = render_once(stream, &out_count);
    printf("%.1f %.1f %zu\n", base, median(render, runs), out_count);
    json_decref(stream);
    free(text);
    return 0;
}

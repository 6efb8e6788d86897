/* render-engine: bench/render's in-process measurements of one YAML bundle: the baseline
 * (parse with purser's codec and emit again) and the rendering engine alone (layering and
 * substitution of the already-parsed documents). Prints "BASELINE_MS RENDER_MS OUT_COUNT",
 * medians of RUNS runs, in CPU milliseconds. Usage: render-engine FILE RUNS. Bench-only code, built by bench/render. */
#include "base/arena.h"
#include "config/config.h"
#include "docs/document.h"
#include "docs/render.h"
#include "codec/yaml_codec.h"

#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
    struct purser_error err;
    struct arena *arena = arena_new();
    struct document *docs;
    size_t len, count;
    char *text;
    json_t *stream = NULL, *messages = NULL;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    double base[64], render[64];
    size_t out_count = 0;

    if (argc < 2 || runs < 1 || runs > 64 || file_read_all(&text, &len, argv[1], 1 << 28, &err)) {
        fprintf(stderr, "usage: render-engine FILE RUNS (1-64)\n");
        return 2;
    }
    for (int i = 0; i < runs; i++) {
        struct buf out = BUF_INIT;
        json_t *parsed = NULL;
        double start = now_ms();
        if (yaml_codec_parse(&parsed, text, len, &yaml_limits_documents, &err) ||
            yaml_codec_emit(&out, parsed, &err)) {
            fprintf(stderr, "render-engine: %s\n", err.message);
            return 1;
        }
        base[i] = now_ms() - start;
        json_decref(parsed);
        buf_release(&out);
    }
    if (yaml_codec_parse(&stream, text, len, &yaml_limits_documents, &err) ||
        document_prepare(arena, stream, &docs, &count, &messages, &err)) {
        fprintf(stderr, "render-engine: %s\n", err.message);
        return 1;
    }
    for (int i = 0; i < runs; i++) {
        json_t *out = NULL;
        double start = now_ms();
        if (render_documents(stream, NULL, NULL, &out, NULL, &err)) {
            fprintf(stderr, "render-engine: %s\n", err.message);
            return 1;
        }
        render[i] = now_ms() - start;
        out_count = json_array_size(out);
        json_decref(out);
    }
    printf("%.1f %.1f %zu\n", median(base, runs), median(render, runs), out_count);
    json_decref(stream);
    arena_free(arena);
    free(text);
    return 0;
}

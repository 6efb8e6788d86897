/* yaml-roundtrip: bench/documents' baseline: parse a YAML stream with purser's codec and emit
 * it again, in process, RUNS times; prints the median milliseconds of one parse + emit.
 * Usage: yaml-roundtrip FILE RUNS. Bench-only code, compiled by bench/documents. */
#include "codec/yaml_codec.h"
#include "config/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    struct purser_error err;
    char *text;
    size_t len;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    double times[64];

    if (argc < 2 || runs < 1 || runs > 64 || file_read_all(&text, &len, argv[1], 1 << 28, &err)) {
        fprintf(stderr, "usage: yaml-roundtrip FILE RUNS (1-64)\n");
        return 2;
    }
    for (int i = 0; i < runs; i++) {
        struct buf out = BUF_INIT;
        json_t *docs = NULL;
        double start = now_ms();
        if (yaml_codec_parse(&docs, text, len, &yaml_limits_documents, &err) ||
            yaml_codec_emit(&out, docs, &err)) {
            fprintf(stderr, "yaml-roundtrip: %s\n", err.message);
            return 1;
        }
        times[i] = now_ms() - start;
        json_decref(docs);
        buf_release(&out);
    }
    qsort(times, (size_t)runs, sizeof(double), compare);
    printf("%.1f\n", times[runs / 2]);
    free(text);
    return 0;
}

/* tap.h: a Test Anything Protocol producer for purser's C unit tests, run by prove.
 *
 * Usage:
 *   int main(int argc, char **argv) {
 *       tap_init(argc, argv);        // re-runs itself under valgrind when TAP_VALGRIND=1
 *       tap_ok(1 + 1 == 2, "adds");
 *       tap_is_int(f(), 3, "f is three");
 *       tap_is_str(s, "x", "s is x");
 *       return tap_done();           // prints the plan; exit status 1 when anything failed
 *   }
 * Header-only: every function is static. Plans are printed at the end ("done_testing").
 */
#ifndef PURSER_TAP_H
#define PURSER_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tap_count;
static int tap_failed;

/* When TAP_VALGRIND is set, exec the same test under valgrind (once), so that one switch runs
 * the whole C suite under valgrind; valgrind's errors make the test fail through its exit code. */
static void tap_init(int argc, char **argv)
{
    (void)argc;
    if (getenv("TAP_VALGRIND") && !getenv("TAP_UNDER_VALGRIND")) {
        char *args[64];
        int n = 0;
        setenv("TAP_UNDER_VALGRIND", "1", 1);
        args[n++] = "valgrind";
        args[n++] = "-q";
        args[n++] = "--error-exitcode=99";
        args[n++] = "--leak-check=full";
        args[n++] = "--errors-for-leak-kinds=definite,indirect";
        for (int i = 0; argv[i] && n < 63; i++)
            args[n++] = argv[i];
        args[n] = NULL;
        execvp("valgrind", args);
        perror("tap: exec valgrind");
        exit(2);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
}

static void tap_diag(const char *fmt, ...)
{
    va_list ap;
    fputs("# ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

static int tap_ok(int ok, const char *fmt, ...)
{
    va_list ap;
    tap_count++;
    if (!ok)
        tap_failed++;
    printf("%s %d - ", ok ? "ok" : "not ok", tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    return ok;
}

#define tap_is_int(got, want, ...)                                                                 \
    do {                                                                                           \
        long long tap_g_ = (long long)(got), tap_w_ = (long long)(want);                           \
        if (!tap_ok(tap_g_ == tap_w_, __VA_ARGS__))                                                \
            tap_diag("  got %lld, want %lld", tap_g_, tap_w_);                                     \
    } while (0)

#define tap_is_str(got, want, ...)                                                                 \
    do {                                                                                           \
        const char *tap_g_ = (got), *tap_w_ = (want);                                              \
        int tap_same_ = (tap_g_ && tap_w_) ? strcmp(tap_g_, tap_w_) == 0 : tap_g_ == tap_w_;       \
        if (!tap_ok(tap_same_, __VA_ARGS__))                                                       \
            tap_diag("  got '%s', want '%s'", tap_g_ ? tap_g_ : "(null)",                          \
                     tap_w_ ? tap_w_ : "(null)");                                                  \
    } while (0)

static int tap_done(void)
{
    printf("1..%d\n", tap_count);
    if (tap_count == 0)
        return 1;
    return tap_failed ? 1 : 0;
}

#endif

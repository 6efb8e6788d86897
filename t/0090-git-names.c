/* 0090-git-names: how lib/git escapes names into paths and reference names: each name gives a
 * path component a checkout can hold (never ".", "..", ".git", no separator), a tag a valid
 * git reference name, and two names never the same escape. */
#include "base/buf.h"
#include "git/gitrepo.h"
#include "tap.h"

#include <git2.h>
#include <string.h>

static void component(const char *name, const char *want)
{
    struct buf b = BUF_INIT;
    int rc = gitrepo_escape_component(&b, name);
    tap_ok(rc == 0 && strcmp(buf_cstr(&b), want) == 0, "component '%s' -> '%s' (want '%s')", name,
           buf_cstr(&b), want);
    buf_release(&b);
}

static void tag(const char *name, const char *want)
{
    struct buf b = BUF_INIT, ref = BUF_INIT;
    int valid = 0;
    gitrepo_escape_tag(&b, name);
    buf_printf(&ref, "refs/tags/%s", buf_cstr(&b));
    git_reference_name_is_valid(&valid, buf_cstr(&ref));
    tap_ok(strcmp(buf_cstr(&b), want) == 0 && valid, "tag '%s' -> '%s' (want '%s'), valid: %d",
           name, buf_cstr(&b), want, valid);
    buf_release(&b);
    buf_release(&ref);
}

/* Every name of the list escapes to a different text. */
static void distinct(int as_tag, const char *const *names, size_t n)
{
    struct buf out[16];
    int same = 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = (struct buf)BUF_INIT;
        as_tag ? gitrepo_escape_tag(&out[i], names[i])
               : gitrepo_escape_component(&out[i], names[i]);
        for (size_t j = 0; j < i; j++)
            same |= strcmp(buf_cstr(&out[i]), buf_cstr(&out[j])) == 0;
    }
    if (!tap_ok(!same, "%zu %s escape to %zu different texts", n, as_tag ? "tags" : "names", n))
        tap_diag("two of them escape to the same text");
    for (size_t i = 0; i < n; i++)
        buf_release(&out[i]);
}

int main(int argc, char **argv)
{
    static const char *const names[] = {"a", "a/b", "a%2Fb", "",    "%",
                                        ".", "..",  ".git",  "a:b", "a b"};
    static const char *const tags[] = {"v1.0", "v1..0", "x.lock", "x.lock.", "-x",
                                       "a b",  "a/b",   "a@{1}",  "%",       ""};
    tap_init(argc, argv);
    git_libgit2_init();
    component("site", "site");
    component("global-network_1.2", "global-network_1.2");
    component("a/b", "a%2Fb");
    component("%", "%25");
    component("", "%");
    component(".", "%2E");
    component("..", "%2E.");
    component(".git", "%2Egit");
    component("c:\\x*?\"<>|", "c%3A%5Cx%2A%3F%22%3C%3E%7C");
    component("tab\there", "tab%09here");
    component("utf-8 é", "utf-8 é");
    distinct(0, names, sizeof(names) / sizeof(names[0]));
    tag("v1.0", "v1.0");
    tag("release-2026", "release-2026");
    tag("v1..0", "v1%2E.0");
    tag("x.lock", "x%2Elock");
    tag("-x", "%2Dx");
    tag(".hidden", "%2Ehidden");
    tag("end.", "end%2E");
    tag("a b", "a%20b");
    tag("a/b", "a%2Fb");
    tag("a@{1}", "a%40{1}");
    tag("what?*[x]~^:", "what%3F%2A%5Bx]%7E%5E%3A");
    tag("", "%");
    distinct(1, tags, sizeof(tags) / sizeof(tags[0]));
    git_libgit2_shutdown();
    return tap_done();
}

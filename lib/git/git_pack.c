/* git_pack.c: a repository's loose objects packed (with deltas) once there are many, so that a
 * clone's git-upload-pack sends a pack it mostly reuses instead of compressing every object
 * again: what `git gc --auto` does, through libgit2. */
#include "git/git_private.h"

#include <git2/sys/odb_backend.h>

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Loose objects past which a sync packs the repository (git gc --auto's is 6,700; a one-
 * document revision writes about six). */
#define LOOSE_OBJECTS_LIMIT 2000

static int hex_name(const char *name, size_t len)
{
    return strlen(name) == len && strspn(name, "0123456789abcdef") == len;
}

/* Removes the loose objects of objects/ (and their emptied fan-out folders). */
static void remove_loose_objects(const char *objects)
{
    char path[4200];
    if (strlen(objects) > 4096)
        return;
    for (int fan = 0; fan < 256; fan++) {
        DIR *dir;
        struct dirent *e;
        snprintf(path, sizeof(path), "%s/%02x", objects, fan);
        if (!(dir = opendir(path)))
            continue;
        while ((e = readdir(dir)))
            if (hex_name(e->d_name, 38)) {
                char file[4600];
                snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
                unlink(file);
            }
        closedir(dir);
        rmdir(path);
    }
}

/* The loose objects of objects/, estimated from one fan-out folder of 256, as git gc --auto
 * does (ids are uniform). */
static long loose_estimate(const char *objects)
{
    char path[4200];
    DIR *dir;
    struct dirent *e;
    long count = 0;
    snprintf(path, sizeof(path), "%.4096s/17", objects);
    if (!(dir = opendir(path)))
        return 0;
    while ((e = readdir(dir)))
        count += hex_name(e->d_name, 38);
    closedir(dir);
    return count * 256;
}

/* Removes the packs of objects/pack/ but the one named keep ("pack-<hash>"). */
static void remove_other_packs(const char *objects, const char *keep)
{
    char path[4200];
    DIR *dir;
    struct dirent *e;
    if (strlen(objects) > 4096)
        return;
    snprintf(path, sizeof(path), "%s/pack", objects);
    if (!(dir = opendir(path)))
        return;
    while ((e = readdir(dir))) {
        const char *dot = strrchr(e->d_name, '.');
        if (strncmp(e->d_name, "pack-", 5) == 0 && dot &&
            (strcmp(dot, ".pack") == 0 || strcmp(dot, ".idx") == 0 || strcmp(dot, ".rev") == 0) &&
            strncmp(e->d_name + 5, keep, strlen(keep)) != 0) {
            char file[4600];
            snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
            unlink(file);
        }
    }
    closedir(dir);
}

/* Writes tree id and the trees under it as loose objects again (through the loose backend:
 * the object database would only see that they exist). */
static int trees_loose(git_repository *repo, git_odb *odb, git_odb_backend *loose,
                       const git_oid *id)
{
    git_odb_object *object = NULL;
    git_tree *tree = NULL;
    int rc = git_odb_read(&object, odb, id);
    if (!rc)
        rc = loose->write(loose, id, git_odb_object_data(object), git_odb_object_size(object),
                          GIT_OBJECT_TREE);
    if (!rc)
        rc = git_tree_lookup(&tree, repo, id);
    for (size_t i = 0; !rc && i < git_tree_entrycount(tree); i++) {
        const git_tree_entry *e = git_tree_entry_byindex(tree, i);
        if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
            rc = trees_loose(repo, odb, loose, git_tree_entry_id(e));
    }
    git_tree_free(tree);
    git_odb_object_free(object);
    return rc;
}

/* The branch's newest trees loose again after a pack: the next commit reads them (the trees
 * it updates), and in the pack they are at the end of long delta chains. */
static int tip_trees_loose(git_repository *repo, const char *objects)
{
    git_odb_backend *loose = NULL;
    git_odb *odb = NULL;
    git_commit *tip = NULL;
    git_oid id;
    int rc = git_reference_name_to_id(&id, repo, GIT_BRANCH);
    if (rc == GIT_ENOTFOUND)
        return 0;
    if (!rc)
        rc = git_commit_lookup(&tip, repo, &id);
    if (!rc)
        rc = git_repository_odb(&odb, repo);
    if (!rc)
        rc = git_odb_backend_loose(&loose, objects, -1, 0, 0, 0);
    if (!rc)
        rc = trees_loose(repo, odb, loose, git_commit_tree_id(tip));
    if (loose)
        loose->free(loose);
    git_odb_free(odb);
    git_commit_free(tip);
    return rc;
}

int git_pack_when_many(git_repository *repo, struct purser_error *err)
{
    char objects[4096];
    snprintf(objects, sizeof(objects), "%sobjects", git_repository_path(repo));
    return loose_estimate(objects) < LOOSE_OBJECTS_LIMIT ? 0 : git_pack_all(repo, err);
}

int git_pack_all(git_repository *repo, struct purser_error *err)
{
    char objects[4096];
    git_packbuilder *pb = NULL;
    git_revwalk *walk = NULL;
    int rc = 0;
    snprintf(objects, sizeof(objects), "%sobjects", git_repository_path(repo));
    {
        char pack[4200];
        snprintf(pack, sizeof(pack), "%s/pack", objects);
        mkdir(pack, 0755);
    }
    /* everything the references reach, in one new pack; then what it makes redundant goes (as
     * git repack -d and git prune-packed do: a reader that misses a loose object finds it in
     * the new pack) */
    if (git_packbuilder_new(&pb, repo) < 0 || git_revwalk_new(&walk, repo) < 0 ||
        git_revwalk_push_glob(walk, "refs/*") < 0 || git_packbuilder_insert_walk(pb, walk) < 0 ||
        git_packbuilder_write(pb, NULL, 0, NULL, NULL) < 0)
        rc = git_fail(err, "packing the repository");
    if (!rc) {
        remove_other_packs(objects, git_packbuilder_name(pb));
        remove_loose_objects(objects);
        if (tip_trees_loose(repo, objects) < 0)
            rc = git_fail(err, "the newest trees");
    }
    git_revwalk_free(walk);
    git_packbuilder_free(pb);
    return rc;
}

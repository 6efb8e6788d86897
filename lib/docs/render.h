/* render.h: Deckhand rendering: layering and substitution of a revision's documents (SPEC §5).
 *
 * One LayeringPolicy gives the layer order. A document's parent is the document of the same
 * schema in the nearest higher layer whose labels include its parentSelector (two equally
 * near: 400); its actions (merge, replace, delete, in order) turn a copy of the parent's
 * rendered data into its own. replacement: true documents take their parent's place.
 * Substitutions copy values from concrete documents (after those are rendered) into paths,
 * optionally through regular expressions. One dependency graph of parents and sources gives
 * the order (a cycle is 400, a missing source 409); every document is rendered once, so the
 * work grows with the number of documents and paths, and the result does not depend on the
 * order of the input.
 */
#ifndef PURSER_RENDER_H
#define PURSER_RENDER_H

#include "base/err.h"

#include <jansson.h>

/* What a render may cost (configuration render.max_pattern_steps, render.max_string_bytes and
 * render.max_output_bytes): PCRE2 matching steps (and backtracking depth) per match, the
 * longest string a replacement may make, and the size of all the data that layering and
 * substitution make (documents rendered as they were stored are not counted: the store bounds
 * them). Past any of them the render fails (PURSER_EINVAL) naming the document, the
 * substitution where there is one, and the key. */
struct render_limits {
    unsigned long match_steps;
    size_t max_string;
    size_t max_output;
};

/* 1,000,000 steps, 64 MiB and 256 MiB. */
extern const struct render_limits render_limits_default;

/* Renders docs (an array of {schema, metadata, data, status} documents, borrowed; data of
 * encrypted documents already opened). fallback_policy is the LayeringPolicy to use when docs
 * hold none (NULL: 409 when they hold none). *out: the rendered documents that are concrete
 * and not replaced, ordered by (schema, layer, name). *secrets (may be NULL): for each of them
 * the mask (codec/jsonmask.h) of its data's values that come from an encrypted document, or
 * null: the whole of an encrypted document, and whatever reached another document from one
 * through any number of substitutions (by path, pattern or recursion) and layering actions
 * (a child keeps its parent's marks where the parent's values stay). Every output that must
 * not show secrets hides what these masks mark.
 * Errors are Deckhand's: PURSER_EINVAL (400) for layering faults, cycles and missing source
 * data, PURSER_EEXISTS (409) for no LayeringPolicy and a missing source document. limits
 * may be NULL for render_limits_default. */
int render_documents(const json_t *docs, const json_t *fallback_policy,
                     const struct render_limits *limits, json_t **out, json_t **secrets,
                     struct purser_error *err);

#endif

/*
 * The extension points, once: every name, key, metric label and descriptor
 * check of a point comes from KS_EXT_POINT_MAP (as libuv's UV_HANDLE_TYPE_MAP
 * and UV_ERRNO_MAP). Used by config_defaults.c (ks_ext_point_name and
 * ks_ext_point_field), framework_build.c (ks_plugin_implements and
 * ks_ext_point_fn) and runtime.c (ks_fw_metric_point_name); the order is
 * ks_ext_point_t's (config.h), which config_defaults.c checks at compile
 * time.
 *
 * X(ENUM, KEY, NAME, METRIC, FN, IMPLEMENTED):
 *   ENUM         the suffix of KS_EP_<ENUM>
 *   KEY          the profile's YAML field ("preFilter")
 *   NAME         upstream's type name, in messages and listings ("PreFilter")
 *   METRIC       upstream's extension_point metric label, or NULL for the
 *                points that run outside scheduling cycles and are not timed
 *   FN           the SDK function(s) the point needs, for messages
 *   IMPLEMENTED  an expression over `d` (const ks_plugin_t *): does the
 *                descriptor implement the point?
 *
 * KS_FW_EXTRA_POINT_MAP(X) lists the timed points that are no runtime list
 * of their own: X(ENUM, METRIC) for KS_FW_EP_<ENUM> (framework.h).
 *
 * Header only; no declarations. Include it where a table is expanded.
 */
#ifndef KS_CONFIG_EXT_POINTS_H
#define KS_CONFIG_EXT_POINTS_H

/* clang-format off */
#define KS_EXT_POINT_MAP(X)                                                    \
    X(PRE_ENQUEUE, "preEnqueue", "PreEnqueue", NULL, "pre_enqueue",           \
      d->pre_enqueue != NULL)                                                  \
    X(QUEUE_SORT, "queueSort", "QueueSort", NULL, "less", d->less != NULL)    \
    X(PRE_FILTER, "preFilter", "PreFilter", "PreFilter", "pre_filter",        \
      d->pre_filter != NULL)                                                   \
    X(FILTER, "filter", "Filter", "Filter", "filter",                        \
      d->filter != NULL || d->filter_with_state != NULL)                       \
    X(POST_FILTER, "postFilter", "PostFilter", "PostFilter", "post_filter",   \
      d->post_filter != NULL)                                                  \
    X(PRE_SCORE, "preScore", "PreScore", "PreScore", "pre_score",             \
      d->pre_score != NULL)                                                    \
    X(SCORE, "score", "Score", "Score", "score",                              \
      d->score != NULL || d->score_with_state != NULL)                         \
    X(RESERVE, "reserve", "Reserve", "Reserve", "reserve and unreserve",      \
      d->reserve != NULL && d->unreserve != NULL)                              \
    X(PERMIT, "permit", "Permit", "Permit", "permit", d->permit != NULL)      \
    X(PRE_BIND, "preBind", "PreBind", "PreBind", "pre_bind",                  \
      d->pre_bind != NULL)                                                     \
    X(BIND, "bind", "Bind", "Bind", "bind", d->bind != NULL)                  \
    X(POST_BIND, "postBind", "PostBind", "PostBind", "post_bind",             \
      d->post_bind != NULL)                                                    \
    X(MULTI_POINT, "multiPoint", "MultiPoint", NULL, "", 0)

#define KS_FW_EXTRA_POINT_MAP(X)                                               \
    X(NORMALIZE_SCORE, "ScoreExtensionNormalize")                              \
    X(UNRESERVE, "Unreserve")                                                  \
    X(PREFILTER_ADD_POD, "PreFilterExtensionAddPod")                           \
    X(PREFILTER_REMOVE_POD, "PreFilterExtensionRemovePod")
/* clang-format on */

#endif /* KS_CONFIG_EXT_POINTS_H */

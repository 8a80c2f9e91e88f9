/* session_aot.c — loading an ahead-of-time plan (docs/plan-format.md):
 * 1. the file is opened and checked (executor/plan_file.c) and its META,
 *    FINGERPRINT, PARTITION and KERNELS sections parsed, every count and
 *    length checked against the section;
 * 2. the plan is graded against this CPU (core/cpuinfo.h) — an extension
 *    it was made with and this CPU lacks makes it unusable, another CPU
 *    model, cache size, CPU count or hetrt version suboptimal — and, once
 *    the session has its providers, against each one's compat string;
 * 3. a session is made over the plan's optimized graph (weights borrowed
 *    from the file), each graph placed as stored (session_build.c asks
 *    het_aot_find_build) and each compiled subgraph restored from its blob
 *    (het_aot_find_blob), with the caller's run-time options.
 * Invariant: nothing here trusts the file beyond the container's checks:
 * every index, count and name is checked before use.  (Saving:
 * session_aot_save.c; compiling after creation: session_ready.c.)
 */
#include "session/session_aot.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpuinfo.h"
#include "core/infer.h"
#include "core/status.h"
#include "onnx/loader.h"
#include "report/explain_format.h"
#include "session/session_api.h"

const char *het_plan_grade_str(het_plan_grade g) {
  return g == HET_PLAN_OPTIMAL      ? "optimal"
         : g == HET_PLAN_SUBOPTIMAL ? "suboptimal"
                                    : "unusable";
}

/* ---- 1. parsing ---- */

static het_status het_aot_bad(const het_aot *a, const char *what) {
  return het_error(HET_ERR_INVALID_MODEL, "plan '%s': %s", a->path, what);
}

/* "key=value" lines of a text section into arena arrays. */
static het_status het_aot_lines(het_aot *a, const het_plan_section *sec,
                                const char *name, int *n, const char ***keys,
                                const char ***values) {
  *n = 0;
  if (!sec)
    return het_error(HET_ERR_INVALID_MODEL, "plan '%s': no %s section",
                     a->path, name);
  const char *p = sec->data, *end = p + sec->size;
  int lines = 0;
  for (const char *q = p; q < end; q++)
    lines += *q == '\n';
  *keys = het_arena_calloc(&a->arena, (size_t)lines + 1, sizeof **keys);
  *values = het_arena_calloc(&a->arena, (size_t)lines + 1, sizeof **values);
  if (!*keys || !*values)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
      return het_error(HET_ERR_INVALID_MODEL,
                       "plan '%s': %s: the last line has no end", a->path,
                       name);
    const char *eq = memchr(p, '=', (size_t)(nl - p));
    if (!eq || eq == p || memchr(p, '\0', (size_t)(nl - p)))
      return het_error(HET_ERR_INVALID_MODEL,
                       "plan '%s': %s: line %d is not key=value", a->path,
                       name, *n + 1);
    char *k = het_arena_strndup(&a->arena, p, (size_t)(eq - p));
    char *v = het_arena_strndup(&a->arena, eq + 1, (size_t)(nl - eq - 1));
    if (!k || !v)
      return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
    (*keys)[*n] = k;
    (*values)[(*n)++] = v;
    p = nl + 1;
  }
  return HET_OK;
}

static const char *het_aot_lookup(int n, const char *const *keys,
                                  const char *const *values, const char *key) {
  for (int i = n - 1; i >= 0; i--)
    if (strcmp(keys[i], key) == 0)
      return values[i];
  return NULL;
}

const char *het_aot_meta(const het_aot *a, const char *key) {
  return het_aot_lookup(a->n_meta, a->meta_key, a->meta_value, key);
}

const char *het_aot_print(const het_aot *a, const char *key) {
  return het_aot_lookup(a->n_print, a->print_key, a->print_value, key);
}

/* Splits line (NUL-terminated, in the arena) at tabs into at most max
 * fields; returns the count. */
static int het_aot_fields(char *line, char **field, int max) {
  int n = 0;
  field[n++] = line;
  for (char *p = line; *p && n < max; p++)
    if (*p == '\t') {
      *p = '\0';
      field[n++] = p + 1;
    }
  return n;
}

static bool het_aot_int(const char *s, int lo, int hi, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end || v < lo || v > hi)
    return false;
  *out = (int)v;
  return true;
}

/* "regime<TAB>K<TAB>NAME=DIMS..." (line, in the arena): the builds after
 * it are shape regime K's, planned for those shapes. */
static het_status het_aot_regime_line(het_aot *a, char *line) {
  int n = 1, k;
  for (const char *p = line; *p; p++)
    n += *p == '\t';
  char **f = het_arena_calloc(&a->arena, (size_t)n, sizeof *f);
  if (!f)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  n = het_aot_fields(line, f, n);
  het_aot_regime *prev = &a->regimes[a->n_regimes - 1];
  if (n < 3 || !het_aot_int(f[1], 1, HET_MAX_REGIMES - 1, &k) ||
      k != a->n_regimes || a->n_builds == prev->first_build)
    return het_aot_bad(a, "PARTITION: a malformed regime line");
  for (int i = 2; i < n; i++) {
    const char *eq = strrchr(f[i], '=');
    if (!eq || eq == f[i] || !eq[1])
      return het_aot_bad(a, "PARTITION: a regime's shape is not NAME=DIMS");
  }
  prev->n_builds = a->n_builds - prev->first_build;
  a->regimes[k] = (het_aot_regime){.first_build = a->n_builds,
                                   .n_shapes = n - 2,
                                   .shapes = (const char **)f + 2};
  a->n_regimes++;
  return HET_OK;
}

/* PARTITION: "build<TAB>index<TAB>prefix<TAB>nodes" then one
 * "node<TAB>index<TAB>name<TAB>provider<TAB>placed_by<TAB>reason" per
 * node ("-" for the host and for no prefix); builds are numbered in file
 * order.  A "regime" line (het_aot_regime_line) starts the builds of
 * another shape regime. */
static het_status het_aot_partition(het_aot *a) {
  const het_plan_section *sec = het_plan_file_find(a->file, HET_PSEC_PARTITION);
  if (!sec)
    return het_aot_bad(a, "no PARTITION section");
  char *text = het_arena_strndup(&a->arena, sec->data, (size_t)sec->size);
  if (!text)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  if (strlen(text) != sec->size || (sec->size && text[sec->size - 1] != '\n'))
    return het_aot_bad(a, "PARTITION is not lines of text");
  int builds = 0;
  for (char *p = text; (p = strstr(p, "build\t")); p++)
    builds++;
  a->builds = het_arena_calloc(&a->arena, (size_t)builds + 1, sizeof *a->builds);
  if (!a->builds)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  het_aot_build *b = NULL;
  int next = 0;
  a->n_regimes = 1;
  for (char *line = text, *nl; *line; line = nl + 1) {
    nl = strchr(line, '\n');
    *nl = '\0';
    if (strncmp(line, "regime\t", 7) == 0) {
      HET_TRY(het_aot_regime_line(a, line));
      b = NULL;
      continue;
    }
    char *f[6];
    int nf = het_aot_fields(line, f, 6);
    if (nf == 4 && strcmp(f[0], "build") == 0 && a->n_builds < builds) {
      b = &a->builds[a->n_builds];
      if (!het_aot_int(f[1], 0, 1 << 20, &b->index) ||
          b->index != a->n_builds ||
          !het_aot_int(f[3], 0, 1 << 28, &b->n_nodes))
        return het_aot_bad(a, "PARTITION: a malformed build line");
      b->prefix = strcmp(f[2], "-") == 0 ? "" : f[2];
      size_t n = (size_t)b->n_nodes + 1;
      b->node = het_arena_calloc(&a->arena, n, sizeof *b->node);
      b->provider = het_arena_calloc(&a->arena, n, sizeof *b->provider);
      b->placed_by = het_arena_calloc(&a->arena, n, sizeof *b->placed_by);
      b->reason = het_arena_calloc(&a->arena, n, sizeof *b->reason);
      if (!b->node || !b->provider || !b->placed_by || !b->reason)
        return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
      a->n_builds++;
      next = 0;
      continue;
    }
    int idx;
    if (nf != 6 || strcmp(f[0], "node") || !b ||
        !het_aot_int(f[1], 0, b->n_nodes - 1, &idx) || idx != next)
      return het_aot_bad(a, "PARTITION: a malformed node line");
    b->node[idx] = f[2];
    b->provider[idx] = strcmp(f[3], "-") == 0 ? NULL : f[3];
    b->placed_by[idx] = f[4];
    b->reason[idx] = f[5];
    next++;
  }
  for (int k = 0; k < a->n_builds; k++)
    if (a->builds[k].n_nodes && !a->builds[k].node[a->builds[k].n_nodes - 1])
      return het_aot_bad(a, "PARTITION: a build lacks nodes");
  het_aot_regime *last = &a->regimes[a->n_regimes - 1];
  last->n_builds = a->n_builds - last->first_build;
  if (!last->n_builds)
    return het_aot_bad(a, "PARTITION: a regime without builds");
  return HET_OK;
}

static bool het_aot_u32(const uint8_t **p, const uint8_t *end, uint32_t *v) {
  if ((size_t)(end - *p) < 4)
    return false;
  memcpy(v, *p, 4);
  *p += 4;
  return true;
}

/* KERNELS: u32 count, then per blob u32 build, subgraph, nodes, first
 * node, provider length, the provider's name, u64 size, zeros up to a
 * 64-byte boundary of the section, the bytes. */
static het_status het_aot_kernels(het_aot *a) {
  const het_plan_section *sec = het_plan_file_find(a->file, HET_PSEC_KERNELS);
  if (!sec)
    return het_aot_bad(a, "no KERNELS section");
  const uint8_t *p = sec->data, *end = p + sec->size;
  uint32_t n;
  if (!het_aot_u32(&p, end, &n) || n > sec->size / 28)
    return het_aot_bad(a, "KERNELS: a malformed count");
  a->blobs = het_arena_calloc(&a->arena, (size_t)n + 1, sizeof *a->blobs);
  if (!a->blobs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  for (uint32_t i = 0; i < n; i++) {
    uint32_t v[5];
    uint64_t size;
    for (int k = 0; k < 5; k++)
      if (!het_aot_u32(&p, end, &v[k]))
        return het_aot_bad(a, "KERNELS: a blob is cut off");
    if (v[0] > (1u << 20) || v[1] > (1u << 28) || v[2] > (1u << 28) ||
        v[3] > (1u << 28) || v[4] == 0 || v[4] > 64 ||
        (size_t)(end - p) < v[4] + 8u)
      return het_aot_bad(a, "KERNELS: a malformed blob header");
    het_aot_blob *b = &a->blobs[i];
    b->build = (int)v[0];
    b->subgraph = (int)v[1];
    b->n_nodes = (int)v[2];
    b->first_node = (int)v[3];
    b->provider = het_arena_strndup(&a->arena, (const char *)p, v[4]);
    if (!b->provider)
      return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
    if (strlen(b->provider) != v[4])
      return het_aot_bad(a, "KERNELS: a provider name holds a NUL");
    p += v[4];
    memcpy(&size, p, 8);
    p += 8;
    size_t pad = (64 - (size_t)(p - (const uint8_t *)sec->data) % 64) % 64;
    if (pad > (size_t)(end - p))
      return het_aot_bad(a, "KERNELS: a blob runs past the section");
    for (size_t k = 0; k < pad; k++)
      if (p[k])
        return het_aot_bad(a, "KERNELS: a blob's padding is not zero");
    p += pad;
    if (size > (uint64_t)(end - p))
      return het_aot_bad(a, "KERNELS: a blob runs past the section");
    b->data = p;
    b->size = (size_t)size;
    p += size;
    a->n_blobs++;
  }
  if (p != end)
    return het_aot_bad(a, "KERNELS: bytes after the last blob");
  return HET_OK;
}

/* ---- 2. grading ---- */

static void het_aot_note(het_aot *a, het_plan_grade g, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void het_aot_note(het_aot *a, het_plan_grade g, const char *fmt, ...) {
  if (g > a->grade)
    a->grade = g;
  size_t used = strlen(a->why);
  if (used + 3 >= sizeof a->why)
    return;
  if (used)
    used += (size_t)snprintf(a->why + used, sizeof a->why - used, "; ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->why + used, sizeof a->why - used, fmt, ap);
  va_end(ap);
}

/* The plan against this CPU and this hetrt. */
static void het_aot_grade_cpu(het_aot *a) {
  const het_cpuinfo *c = het_cpuinfo_get();
  const char *isa = het_aot_print(a, "cpu.isa");
  char missing[32];
  if (isa && !het_cpuinfo_has_isa(isa, missing, sizeof missing))
    het_aot_note(a, HET_PLAN_UNUSABLE,
                 "made for a CPU with %s, which this CPU lacks", missing);
  const char *brand = het_aot_print(a, "cpu.brand");
  if (!brand || strcmp(brand, c->brand) != 0)
    het_aot_note(a, HET_PLAN_SUBOPTIMAL,
                 "made on '%s', this is '%s' (its kernel choices were timed "
                 "there)",
                 brand ? brand : "?", c->brand);
  char here[32];
  snprintf(here, sizeof here, "%d", c->cpus);
  const char *cpus = het_aot_print(a, "cpu.cpus");
  if (!cpus || strcmp(cpus, here) != 0)
    het_aot_note(a, HET_PLAN_SUBOPTIMAL,
                 "made on %s logical CPUs, this machine has %s",
                 cpus ? cpus : "?", here);
  static const char *const caches[] = {"cpu.cache_l1d", "cpu.cache_l2",
                                       "cpu.cache_l3"};
  const long sizes[] = {c->cache_l1d, c->cache_l2, c->cache_l3};
  for (int k = 0; k < 3; k++) {
    snprintf(here, sizeof here, "%ld", sizes[k]);
    const char *saved = het_aot_print(a, caches[k]);
    if (!saved || strcmp(saved, here) != 0)
      het_aot_note(a, HET_PLAN_SUBOPTIMAL, "made with %s=%s, this has %s",
                   caches[k], saved ? saved : "?", here);
  }
  char ver[32];
  snprintf(ver, sizeof ver, "%d.%d.%d", HET_VERSION_MAJOR, HET_VERSION_MINOR,
           HET_VERSION_PATCH);
  const char *made = het_aot_meta(a, "hetrt");
  if (!made || strcmp(made, ver) != 0)
    het_aot_note(a, HET_PLAN_SUBOPTIMAL, "made by hetrt %s, this is %s",
                 made ? made : "?", ver);
}

/* Entry key ("!key=value" or "key=value") of compat text, or NULL. */
static bool het_compat_find(const char *text, const char *key, size_t klen,
                            const char **value, size_t *vlen) {
  for (const char *p = text; *p;) {
    size_t len = strcspn(p, ";");
    const char *eq = memchr(p, '=', len);
    size_t kl = eq ? (size_t)(eq - p) : len;
    if (kl == klen && strncmp(p, key, klen) == 0) {
      *value = eq ? eq + 1 : p + len;
      *vlen = eq ? len - kl - 1 : 0;
      return true;
    }
    p += len + (p[len] == ';');
  }
  return false;
}

/* The saved compat text of provider name against now's. */
static void het_aot_grade_compat(het_aot *a, const char *name,
                                 const char *saved, const char *now) {
  for (const char *p = saved; *p;) {
    size_t len = strcspn(p, ";");
    const char *eq = memchr(p, '=', len);
    size_t kl = eq ? (size_t)(eq - p) : len, vl;
    const char *v = eq ? eq + 1 : p + len, *have;
    size_t sl = eq ? len - kl - 1 : 0;
    bool found = het_compat_find(now, p, kl, &have, &vl);
    if (kl && (!found || vl != sl || strncmp(v, have, sl) != 0))
      het_aot_note(a, p[0] == '!' ? HET_PLAN_UNUSABLE : HET_PLAN_SUBOPTIMAL,
                   "provider '%s': made with %.*s, this has %.*s", name,
                   (int)len, p, found ? (int)vl : 4,
                   found ? have : "none");
    p += len + (p[len] == ';');
  }
}

void het_aot_grade_providers(het_session *s) {
  het_aot *a = s->aot;
  for (int i = 0; a && i < s->n_providers; i++) {
    const het_ep *ep = &s->providers[i];
    char key[96];
    snprintf(key, sizeof key, "provider.%s", ep->vt->name);
    const char *saved = het_aot_print(a, key);
    const char *now =
        HET_PROVIDER_HAS(ep->vt, 3, compat_string) ? ep->vt->compat_string(ep->state) : "";
    het_aot_grade_compat(a, ep->vt->name, saved ? saved : "", now ? now : "");
  }
}

/* ---- opening ---- */

/* The large sections, whose hashes are checked off creation's path (by
 * the compilation thread, before it uses them; session_ready.c).  The
 * KERNELS section is parsed at creation: a damaged blob length is caught
 * by its bounds checks, its bytes by the hash before use. */
#define HET_AOT_LATER (1u << HET_PSEC_WEIGHTS | 1u << HET_PSEC_KERNELS)

het_status het_aot_open(const char *path, const void *data, size_t size,
                        het_aot **out) {
  het_aot *a = calloc(1, sizeof *a);
  if (!a)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  het_arena_init(&a->arena);
  a->path = het_arena_strdup(&a->arena, path ? path : "<memory>");
  het_status st = a->path ? HET_OK
                          : het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  if (st == HET_OK)
    st = data ? het_plan_file_open_memory(data, size, a->path, HET_AOT_LATER,
                                          &a->file)
              : het_plan_file_open(path, HET_AOT_LATER, &a->file);
  if (st == HET_OK)
    st = het_aot_lines(a, het_plan_file_find(a->file, HET_PSEC_META), "META",
                       &a->n_meta, &a->meta_key, &a->meta_value);
  if (st == HET_OK)
    st = het_aot_lines(a, het_plan_file_find(a->file, HET_PSEC_FINGERPRINT),
                       "FINGERPRINT", &a->n_print, &a->print_key,
                       &a->print_value);
  if (st == HET_OK)
    st = het_aot_partition(a);
  if (st == HET_OK)
    st = het_aot_kernels(a);
  if (st == HET_OK && (!het_plan_file_find(a->file, HET_PSEC_GRAPH) ||
                       !het_aot_meta(a, "option.providers")))
    st = het_aot_bad(a, "no graph or no providers");
  if (st != HET_OK) {
    het_aot_destroy(a);
    return st;
  }
  het_aot_grade_cpu(a);
  *out = a;
  return HET_OK;
}

void het_aot_destroy(het_aot *a) {
  if (!a)
    return;
  het_plan_file_close(a->file);
  het_arena_deinit(&a->arena);
  free(a);
}

/* ---- 3. the session ---- */

/* Build b's index among the plan's builds (those of s's regime), or -1. */
static int het_build_index(const het_session *s, const het_graph_build *b) {
  const het_aot_regime *r = &s->aot->regimes[s->aot_regime];
  for (int k = 0; k < s->n_builds && k < r->n_builds; k++)
    if (s->builds[k] == b)
      return r->first_build + k;
  return -1;
}

const het_aot_build *het_aot_find_build(const het_session *s,
                                        const het_graph_build *b) {
  if (!s->aot || s->aot_rebuild)
    return NULL;
  int k = het_build_index(s, b);
  return k >= 0 ? &s->aot->builds[k] : NULL;
}

const het_aot_blob *het_aot_find_blob(const het_session *s,
                                      const het_graph_build *b, int sg) {
  if (!s->aot || s->aot_rebuild)
    return NULL;
  int k = het_build_index(s, b);
  const het_subgraph *g = &b->partition.subgraphs[sg];
  const char *prov = s->providers[g->provider].vt->name;
  for (int i = 0; k >= 0 && i < s->aot->n_blobs; i++) {
    const het_aot_blob *x = &s->aot->blobs[i];
    if (x->build == k && x->subgraph == sg && x->n_nodes == g->n_nodes &&
        g->n_nodes > 0 && x->first_node == g->nodes[0] &&
        strcmp(x->provider, prov) == 0)
      return x;
  }
  return NULL;
}

/* The session options of a plan's session: the caller's run-time options
 * over the plan's placement-shaping ones (META "option.*" lines). */
static het_status het_aot_options(const het_aot *a,
                                  const het_session_options *user,
                                  het_session_options **out) {
  het_session_options *o = NULL;
  HET_TRY(het_options_copy(user, &o));
  het_status st = HET_OK;
  bool user_devices = o->n_profiles > 0;
  for (int i = 0; i < o->n_rules; i++) {
    free(o->rules[i].node);
    free(o->rules[i].provider);
  }
  o->n_rules = 0;
  het_policy_destroy(o->policy);
  o->policy = NULL;
  free(o->node_times);
  o->node_times = NULL;
  o->min_subgraph_nodes = 0;
  o->replan_off = true;
  for (int i = 0; i < a->n_meta && st == HET_OK; i++) {
    const char *k = a->meta_key[i], *v = a->meta_value[i];
    if (strncmp(k, "option.", 7) != 0)
      continue;
    k += 7;
    if (strcmp(k, "devices") == 0 && user_devices)
      continue; /* the caller's profiles for this machine */
    bool kv = strchr(k, '.') != NULL;
    if (kv) { /* a provider option the caller set wins */
      bool set = false;
      for (int j = 0; user && j < user->n_kv && !set; j++)
        set = strcmp(user->kv[j].key, k) == 0;
      if (set)
        continue;
    }
    st = het_session_options_set_impl(o, k, v);
    if (st != HET_OK)
      st = het_error_wrap(st, "plan '%s': its option %s", a->path, k);
  }
  if (st != HET_OK) {
    het_session_options_destroy_impl(o);
    return st;
  }
  *out = o;
  return HET_OK;
}

het_status het_session_create_plan(het_env *env, het_aot *a,
                                   const het_session_options *user,
                                   het_session **out) {
  het_session_options *o = NULL;
  het_graph *g = NULL;
  het_status st = het_aot_options(a, user, &o);
  const het_plan_section *graph = het_plan_file_find(a->file, HET_PSEC_GRAPH);
  const het_plan_section *w = het_plan_file_find(a->file, HET_PSEC_WEIGHTS);
  if (st == HET_OK)
    st = het_onnx_load_plan_graph(graph->data, (size_t)graph->size,
                                  w ? w->data : NULL,
                                  w ? (size_t)w->size : 0, a->path, &g);
  if (st == HET_OK)
    st = het_graph_infer_shapes(g);
  if (st != HET_OK) {
    het_graph_destroy(g);
    het_session_options_destroy_impl(o);
    het_aot_destroy(a);
    return st;
  }
  st = het_session_create_aot(env, g, a, o, out);
  het_session_options_destroy_impl(o);
  return st;
}

/* ---- plan info ---- */

static const char *const het_section_names[] = {
    NULL, "META", "FINGERPRINT", "GRAPH", "PARTITION", "KERNELS", "WEIGHTS"};

het_status het_plan_get_info_impl(het_env *env, const char *path, char **out) {
  het_aot *a = NULL;
  HET_TRY(het_aot_open(path, NULL, 0, &a));
  het_sbuf b = {0};
  het_sbuf_printf(&b, "plan: %s (format %d, %zu bytes)\n", path,
                  HET_PLAN_FORMAT, a->file->size);
  for (int i = 0; i < a->n_meta; i++)
    het_sbuf_printf(&b, "  %s: %s\n", a->meta_key[i], a->meta_value[i]);
  het_sbuf_puts(&b, "fingerprint:\n");
  for (int i = 0; i < a->n_print; i++)
    het_sbuf_printf(&b, "  %s: %s\n", a->print_key[i], a->print_value[i]);
  het_sbuf_puts(&b, "sections:\n");
  for (int i = 0; i < a->file->n_sections; i++) {
    uint32_t id = a->file->sections[i].id;
    het_sbuf_printf(&b, "  %-12s %llu bytes\n",
                    id < sizeof het_section_names / sizeof *het_section_names &&
                            het_section_names[id]
                        ? het_section_names[id]
                        : "(unknown)",
                    (unsigned long long)a->file->sections[i].size);
  }
  for (int r = 0; r < a->n_regimes; r++) {
    const het_aot_regime *x = &a->regimes[r];
    int nodes = 0;
    for (int k = x->first_build; k < x->first_build + x->n_builds; k++)
      nodes += a->builds[k].n_nodes;
    if (r)
      het_sbuf_printf(&b, "  shape regime %d: ", r);
    else
      het_sbuf_puts(&b, a->n_regimes > 1 ? "placement, shape regime 0 (the "
                                           "option.shape lines): "
                                         : "placement: ");
    het_sbuf_printf(&b, "%d graph%s, %d nodes", x->n_builds,
                    x->n_builds == 1 ? "" : "s", nodes);
    if (r) {
      het_sbuf_puts(&b, ", planned for");
      for (int i = 0; i < x->n_shapes; i++)
        het_sbuf_printf(&b, "%s %s", i ? "," : "", x->shapes[i]);
    }
    het_sbuf_putc(&b, '\n');
  }
  het_sbuf_printf(&b, "compiled blobs: %d\n", a->n_blobs);
  /* The providers' grade needs them: a session made from the plan. */
  het_session *s = NULL;
  het_status st = het_plan_file_verify(a->file);
  if (st == HET_OK)
    st = het_session_create_plan(env, a, NULL, &s);
  else
    het_aot_destroy(a);
  if (st == HET_OK) {
    const het_aot *x = s->aot;
    het_sbuf_printf(&b, "on this machine: %s%s%s\n",
                    het_plan_grade_str(x->grade), x->why[0] ? ": " : "",
                    x->why);
    het_session_destroy_impl(s);
  } else {
    het_sbuf_printf(&b, "on this machine: unusable: %s\n", het_last_error());
    het_error_clear();
  }
  return het_sbuf_finish(&b, out);
}

/* session_aot_save.c — a session written as an ahead-of-time plan
 * (docs/plan-format.md): META (what made it, the options that shaped its
 * placement), FINGERPRINT (this CPU, each provider's compat string),
 * GRAPH and WEIGHTS (the optimized graph before partitioning, its large
 * initializers in the page-aligned weights section), PARTITION (every
 * model node's provider, what placed it and why, per graph, per shape
 * regime) and KERNELS (each compiled subgraph's blob from its provider).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cpuinfo.h"
#include "core/status.h"
#include "onnx/loader.h"
#include "report/explain_format.h"
#include "session/session_aot.h"
#include "session/session_api.h"

/* Initializers at least this large go to the weights section. */
#define HET_PLAN_SPLIT_BYTES 128

/* s with tabs and line ends as spaces (the text sections' separators). */
static void het_put_clean(het_sbuf *b, const char *s) {
  for (; s && *s; s++)
    het_sbuf_putc(b, *s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
}

static void het_put_kv(het_sbuf *b, const char *key, const char *value) {
  het_sbuf_puts(b, key);
  het_sbuf_putc(b, '=');
  het_put_clean(b, value);
  het_sbuf_putc(b, '\n');
}

/* "NAME=DIMS" of shape hint h. */
static void het_put_shape(het_sbuf *b, const het_shape_hint *h) {
  het_put_clean(b, h->input);
  for (int d = 0; d < h->rank; d++)
    het_sbuf_printf(b, "%s%lld", d ? "x" : "=", (long long)h->dims[d]);
}

static void het_plan_meta(const het_session *s, het_sbuf *b) {
  const het_session_options *o = s->options;
  char text[64];
  snprintf(text, sizeof text, "%d.%d.%d", HET_VERSION_MAJOR,
           HET_VERSION_MINOR, HET_VERSION_PATCH);
  het_put_kv(b, "hetrt", text);
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  het_put_kv(b, "created", text);
  het_put_kv(b, "model", s->model);
  het_sbuf_puts(b, "option.providers=");
  for (int i = 0; i < s->n_providers; i++)
    het_sbuf_printf(b, "%s%s", i ? "," : "", s->providers[i].vt->name);
  het_sbuf_putc(b, '\n');
  if (o->n_profiles) {
    het_sbuf_puts(b, "option.devices=");
    for (int i = 0; i < o->n_profiles; i++) {
      het_sbuf_puts(b, i ? "," : "");
      het_put_clean(b, o->profiles[i]);
    }
    het_sbuf_putc(b, '\n');
  }
  static const char *const levels[] = {"none", "basic", "extended", "all"};
  het_put_kv(b, "option.algorithm", s->use_priority ? "priority" : "cost");
  het_put_kv(b, "option.optimization",
             levels[o->opt_level >= 0 && o->opt_level <= 3 ? o->opt_level : 3]);
  for (int i = 0; i < o->n_shapes; i++) {
    het_sbuf_printf(b, "option.shape=");
    het_put_shape(b, &o->shapes[i]);
    het_sbuf_putc(b, '\n');
  }
  for (int i = 0; i < o->n_kv; i++) {
    het_sbuf_puts(b, "option.");
    het_put_clean(b, o->kv[i].key);
    het_sbuf_putc(b, '=');
    het_put_clean(b, o->kv[i].value);
    het_sbuf_putc(b, '\n');
  }
}

static void het_plan_fingerprint(const het_session *s, het_sbuf *b) {
  const het_cpuinfo *c = het_cpuinfo_get();
  het_put_kv(b, "cpu.vendor", c->vendor);
  het_sbuf_printf(b, "cpu.family=%d\ncpu.model=%d\ncpu.stepping=%d\n",
                  c->family, c->model, c->stepping);
  het_put_kv(b, "cpu.brand", c->brand);
  het_put_kv(b, "cpu.isa", c->isa);
  het_sbuf_printf(b, "cpu.cache_l1d=%ld\ncpu.cache_l2=%ld\ncpu.cache_l3=%ld\n"
                     "cpu.cpus=%d\n",
                  c->cache_l1d, c->cache_l2, c->cache_l3, c->cpus);
  for (int i = 0; i < s->n_providers; i++) {
    const het_ep *ep = &s->providers[i];
    const char *compat = HET_PROVIDER_HAS(ep->vt, 3, compat_string)
                             ? ep->vt->compat_string(ep->state)
                             : NULL;
    het_sbuf_printf(b, "provider.%s=", ep->vt->name);
    het_put_clean(b, compat ? compat : "");
    het_sbuf_putc(b, '\n');
  }
}

/* The sessions of s's shape regimes: s itself, then regime 1, 2, ...
 * (*n of them). */
static int het_plan_regimes(het_session *s, het_session **x) {
  int n = 1;
  x[0] = s;
  for (het_session *r; n < HET_MAX_REGIMES &&
                       (r = het_regime_session(s, n, NULL));)
    x[n++] = r;
  return n;
}

/* The builds of session x (the plan's builds from base on). */
static void het_plan_partition(const het_session *x, int base, het_sbuf *b) {
  const char *algo = x->use_priority ? "priority" : "cost";
  for (int k = 0; k < x->n_builds; k++) {
    const het_graph_build *gb = x->builds[k];
    const het_graph *g = gb->prog.graph;
    het_sbuf_printf(b, "build\t%d\t", base + k);
    het_put_clean(b, *gb->prefix ? gb->prefix : "-");
    het_sbuf_printf(b, "\t%d\n", gb->n_model_nodes);
    for (int n = 0; n < gb->n_model_nodes; n++) {
      int p = gb->partition.provider[n];
      het_sbuf_printf(b, "node\t%d\t", n);
      het_put_clean(b, g->nodes[n].name);
      het_sbuf_printf(b, "\t%s\t", p >= 0 ? x->providers[p].vt->name : "-");
      het_put_clean(b, gb->placed_by && gb->placed_by[n] ? gb->placed_by[n]
                                                         : algo);
      het_sbuf_putc(b, '\t');
      het_put_clean(b, gb->partition.reason[n]);
      het_sbuf_putc(b, '\n');
    }
  }
}

static void het_put_u32(het_sbuf *b, uint32_t v) { het_sbuf_put(b, &v, 4); }

/* PARTITION: regime 0's builds, then per further regime a line naming
 * the shapes it was planned for and its builds. */
static void het_plan_partitions(het_session *const *x, int n, het_sbuf *b) {
  int base = 0;
  for (int r = 0; r < n; base += x[r]->n_builds, r++) {
    if (r) {
      het_sbuf_printf(b, "regime\t%d", r);
      for (int i = 0; i < x[r]->options->n_shapes; i++) {
        het_sbuf_putc(b, '\t');
        het_put_shape(b, &x[r]->options->shapes[i]);
      }
      het_sbuf_putc(b, '\n');
    }
    het_plan_partition(x[r], base, b);
  }
}

/* The blob records of session s's compiled subgraphs whose provider
 * serializes (its builds numbered from base) onto body; *n counts them. */
static het_status het_plan_blobs(const het_session *s, int base,
                                 het_sbuf *body, uint32_t *n) {
  for (int k = 0; k < s->n_builds; k++) {
    const het_graph_build *gb = s->builds[k];
    for (int i = 0; i < gb->partition.n_subgraphs; i++) {
      const het_subgraph *sg = &gb->partition.subgraphs[i];
      if (sg->kind != HET_STEP_COMPUTE || !gb->prog.compiled ||
          !gb->prog.compiled[i] || sg->n_nodes < 1)
        continue;
      const het_ep *ep = &s->providers[sg->provider];
      if (!HET_PROVIDER_HAS(ep->vt, 3, compiled_serialize))
        continue;
      void *data = NULL;
      size_t size = 0;
      HET_TRY(ep->vt->compiled_serialize(ep->state, gb->prog.compiled[i],
                                         &data, &size));
      const char *name = ep->vt->name;
      uint32_t v[5] = {(uint32_t)(base + k), (uint32_t)i,
                       (uint32_t)sg->n_nodes, (uint32_t)sg->nodes[0],
                       (uint32_t)strlen(name)};
      for (int j = 0; j < 5; j++)
        het_put_u32(body, v[j]);
      het_sbuf_puts(body, name);
      uint64_t sz = size;
      het_sbuf_put(body, &sz, 8);
      /* the blob starts on a 64-byte boundary of the section (after the
       * count's 4 bytes), so what it holds can be used in place */
      static const char zeros[64];
      het_sbuf_put(body, zeros, (64 - (body->len + 4) % 64) % 64);
      het_sbuf_put(body, data, size);
      free(data);
      (*n)++;
    }
  }
  return HET_OK;
}

/* KERNELS: the count, then the blob records of each regime's session
 * x[r] in turn. */
static het_status het_plan_kernels(het_session *const *x, int n_x,
                                   het_sbuf *b) {
  het_sbuf body = {0};
  uint32_t n = 0;
  het_status st = HET_OK;
  for (int r = 0, base = 0; r < n_x && st == HET_OK;
       base += x[r]->n_builds, r++)
    st = het_plan_blobs(x[r], base, &body, &n);
  het_put_u32(b, n);
  if (st == HET_OK)
    het_sbuf_put(b, body.data, body.len);
  if (body.failed)
    b->failed = true;
  free(body.data);
  return st;
}

het_status het_session_save_plan_impl(het_session *s, const char *path) {
  if (!s->optimized)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "save plan: this session keeps no optimized graph");
  HET_TRY(het_session_ready(s));
  het_sbuf meta = {0}, print = {0}, part = {0}, kern = {0};
  uint8_t *graph = NULL, *weights = NULL;
  size_t graph_len = 0, weights_len = 0;
  het_session *x[HET_MAX_REGIMES];
  int n_x = het_plan_regimes(s, x);
  het_plan_meta(s, &meta);
  het_plan_fingerprint(s, &print);
  het_plan_partitions(x, n_x, &part);
  het_status st = het_plan_kernels(x, n_x, &kern);
  if (st == HET_OK)
    st = het_onnx_save_plan_graph(s->optimized, HET_PLAN_SPLIT_BYTES, &graph,
                                  &graph_len, &weights, &weights_len);
  if (st == HET_OK && (meta.failed || print.failed || part.failed ||
                       kern.failed))
    st = het_error(HET_ERR_OUT_OF_MEMORY, "save plan: out of memory");
  if (st == HET_OK) {
    het_plan_section sec[] = {
        {HET_PSEC_META, meta.data, meta.len},
        {HET_PSEC_FINGERPRINT, print.data, print.len},
        {HET_PSEC_PARTITION, part.data, part.len},
        {HET_PSEC_KERNELS, kern.data, kern.len},
        {HET_PSEC_GRAPH, graph, graph_len},
        {HET_PSEC_WEIGHTS, weights, weights_len},
    };
    st = het_plan_file_write(path, sec, (int)(sizeof sec / sizeof *sec));
  }
  free(meta.data);
  free(print.data);
  free(part.data);
  free(kern.data);
  free(graph);
  free(weights);
  return st;
}

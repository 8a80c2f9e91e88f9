/* legacy_provider.c — the ABI 2 test provider of legacy_provider.h.
 * Device memory: a block is a host allocation with its size in front; its
 * handle is the block's address xor a tag in bits 63..48, so a handle is
 * never a usable host pointer and a host pointer is never a handle.
 */
#include "common/legacy_provider.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ir.h"
#include "core/status.h"
#include "core/tensor.h"
#include "kernels/kernel.h"

#define LEGACY_TAG ((uint64_t)0xA17Eu << 48)
#define LEGACY_MAX_IO 16

legacy_stats legacy_counts;

typedef struct legacy_block {
  size_t nbytes;
  uint64_t magic;
  _Alignas(64) unsigned char data[];
} legacy_block;

#define LEGACY_MAGIC 0x6c65676163790a00ull

typedef struct legacy_state {
  int threads;
  long fail_copy_at; /* 1-based, 0 = never */
  long copy_delay_ms;
  atomic_long n_copies;
} legacy_state;

int legacy_is_handle(const void *addr) {
  return ((uint64_t)(uintptr_t)addr & ((uint64_t)0xFFFFu << 48)) == LEGACY_TAG;
}

static legacy_block *legacy_block_of(const void *handle) {
  if (!legacy_is_handle(handle))
    return NULL;
  legacy_block *b = (legacy_block *)(uintptr_t)((uint64_t)(uintptr_t)handle ^
                                                LEGACY_TAG);
  return b->magic == LEGACY_MAGIC ? b : NULL;
}

/* ---- instance ------------------------------------------------------------ */

static het_status legacy_create(const het_provider_config *cfg, void **out) {
  legacy_state *s = calloc(1, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "legacy: out of memory");
  s->threads = cfg && cfg->threads > 0 ? cfg->threads : 1;
  for (int i = 0; cfg && i < cfg->n_options; i++) {
    const char *k = cfg->option_keys[i], *v = cfg->option_values[i];
    char *end;
    long n = strtol(v, &end, 10);
    bool number = *v && !*end && n >= 0;
    if (strcmp(k, "fail_copy") == 0 && number) {
      s->fail_copy_at = n;
    } else if (strcmp(k, "copy_delay_ms") == 0 && number) {
      s->copy_delay_ms = n;
    } else {
      free(s);
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "legacy: unknown option or bad value '%s=%s'", k, v);
    }
  }
  *out = s;
  return HET_OK;
}

static void legacy_destroy(void *state) { free(state); }

static het_status legacy_device_info(void *state, het_device_info *out) {
  (void)state;
  *out = (het_device_info){.host_memory = false,
                           .peak_flops_f32 = 1e15,
                           .peak_flops_f16 = 1e15,
                           .peak_flops_i8 = 1e15,
                           .memory_bandwidth = 1e13,
                           .link_bandwidth = 1e13,
                           .link_latency = 1e-9,
                           .launch_overhead = 1e-9};
  return HET_OK;
}

/* ---- capability and compile ------------------------------------------------ */

static const char *const legacy_ops[] = {"Add",  "Sub",     "Mul",  "Div",
                                         "Relu", "Sigmoid", "Tanh", "Erf",
                                         "Softmax", "MatMul"};

static bool legacy_node_ok(const het_graph *g, const het_node *n, char *why,
                           size_t cap) {
  bool known = false;
  for (size_t i = 0; i < sizeof legacy_ops / sizeof *legacy_ops; i++)
    known |= strcmp(n->op_type, legacy_ops[i]) == 0;
  if (n->domain[0] || !known || n->n_inputs > LEGACY_MAX_IO ||
      n->n_outputs > LEGACY_MAX_IO || !het_kernel_find("", n->op_type)) {
    snprintf(why, cap, "legacy: op %s not supported", n->op_type);
    return false;
  }
  for (int k = 0; k < n->n_inputs + n->n_outputs; k++) {
    int v = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
    if (v >= 0 && g->values[v].dtype != HET_DTYPE_FLOAT32) {
      snprintf(why, cap, "legacy: %s not supported",
               het_dtype_str(g->values[v].dtype));
      return false;
    }
  }
  snprintf(why, cap, "legacy: float32 %s", n->op_type);
  return true;
}

static het_status legacy_capability(void *state, const het_graph *g,
                                    het_claim *claims) {
  (void)state;
  for (int i = 0; i < g->n_nodes; i++)
    claims[i].claimed = legacy_node_ok(g, &g->nodes[i], claims[i].reason,
                                       sizeof claims[i].reason);
  return HET_OK;
}

/* Far cheaper than the CPU, so the partitioner takes what it claims. */
static het_status legacy_cost(void *state, const het_graph *g, int node,
                              double *seconds) {
  (void)state;
  (void)g;
  (void)node;
  *seconds = 1e-9;
  return HET_OK;
}

typedef struct legacy_compiled {
  const het_graph *graph;
  int n;
  int *nodes;
  const het_kernel **kernels;
  void **states;
} legacy_compiled;

static void legacy_destroy_compiled(void *state, void *compiled) {
  (void)state;
  legacy_compiled *c = compiled;
  if (!c)
    return;
  for (int i = 0; i < c->n; i++)
    if (c->states[i] && c->kernels[i]->destroy_state)
      c->kernels[i]->destroy_state(c->states[i]);
  free(c->nodes);
  free(c->kernels);
  free(c->states);
  free(c);
}

static het_status legacy_compile(void *state, const het_graph *g,
                                 const int *nodes, int n, void **out) {
  legacy_compiled *c = calloc(1, sizeof *c);
  size_t cap = (size_t)(n > 0 ? n : 0) + 1;
  if (c) {
    c->graph = g;
    c->nodes = calloc(cap, sizeof *c->nodes);
    c->kernels = calloc(cap, sizeof *c->kernels);
    c->states = calloc(cap, sizeof *c->states);
  }
  het_status st = HET_OK;
  if (!c || !c->nodes || !c->kernels || !c->states)
    st = het_error(HET_ERR_OUT_OF_MEMORY, "legacy: out of memory");
  for (int i = 0; st == HET_OK && i < n; i++) {
    const het_node *node = &g->nodes[nodes[i]];
    char why[HET_CLAIM_REASON_CAP];
    if (!legacy_node_ok(g, node, why, sizeof why)) {
      st = het_error(HET_ERR_UNSUPPORTED, "node '%s': %s", node->name, why);
      break;
    }
    c->nodes[i] = nodes[i];
    c->kernels[i] = het_kernel_find("", node->op_type);
    c->n = i + 1;
    if (c->kernels[i]->prepare)
      st = c->kernels[i]->prepare(g, node, &c->states[i]);
  }
  if (st != HET_OK) {
    legacy_destroy_compiled(state, c);
    return st;
  }
  *out = c;
  return HET_OK;
}

/* ---- run (ABI 1-2 run slot) ------------------------------------------------ */

/* A host view of device tensor t (which must be this provider's). */
static het_status legacy_view(const het_graph *g, const het_node *node, int v,
                              const het_tensor *t, het_tensor *view) {
  legacy_block *b = t && t->data ? legacy_block_of(t->data) : NULL;
  if (!b || t->nbytes > b->nbytes)
    return het_error(HET_ERR_INTERNAL,
                     "legacy: node '%s': value '%s' is not in legacy device "
                     "memory (missing copy?)",
                     node->name, g->values[v].name);
  *view = *t;
  view->data = b->data;
  view->device = NULL;
  view->owned = false;
  return HET_OK;
}

static het_status legacy_run_node(legacy_state *s, const legacy_compiled *c,
                                  int i, het_run_ctx *ctx) {
  const het_graph *g = c->graph;
  int id = c->nodes[i];
  const het_node *node = &g->nodes[id];
  het_tensor views[2 * LEGACY_MAX_IO];
  het_tensor *in[LEGACY_MAX_IO], *out[LEGACY_MAX_IO], *placed[LEGACY_MAX_IO];
  for (int k = 0; k < node->n_inputs; k++) {
    het_tensor *t = het_run_input(ctx, id, k);
    in[k] = t ? &views[k] : NULL;
    if (t)
      HET_TRY(legacy_view(g, node, node->inputs[k], t, in[k]));
  }
  HET_TRY(het_run_prepare_outputs(ctx, id, in, placed));
  for (int o = 0; o < node->n_outputs; o++) {
    out[o] = placed[o] ? &views[LEGACY_MAX_IO + o] : NULL;
    if (placed[o])
      HET_TRY(legacy_view(g, node, node->outputs[o], placed[o], out[o]));
  }
  het_kernel_ctx kc = {.node = node, .opset = node->opset,
                       .n_inputs = node->n_inputs, .inputs = in,
                       .n_outputs = node->n_outputs, .outputs = out,
                       .state = c->states[i], .threads = s->threads};
  HET_TRY(c->kernels[i]->run(&kc));
  het_run_release_inputs(ctx, id);
  atomic_fetch_add(&legacy_counts.nodes_run, 1);
  return HET_OK;
}

static het_status legacy_run(void *state, void *compiled, het_run_ctx *ctx) {
  const legacy_compiled *c = compiled;
  for (int i = 0; i < c->n; i++)
    HET_TRY(legacy_run_node(state, c, i, ctx));
  return HET_OK;
}

/* ---- memory and copies -------------------------------------------------------- */

static het_status legacy_alloc(void *state, size_t nbytes, void **handle) {
  (void)state;
  legacy_block *b = nbytes < ((size_t)1 << 40)
                        ? aligned_alloc(64, (sizeof *b + nbytes + 63) & ~(size_t)63)
                        : NULL;
  if (!b)
    return het_error(HET_ERR_CAPACITY, "legacy: cannot allocate %zu bytes",
                     nbytes);
  b->nbytes = nbytes;
  b->magic = LEGACY_MAGIC;
  atomic_fetch_add(&legacy_counts.live_blocks, 1);
  *handle = (void *)(uintptr_t)((uint64_t)(uintptr_t)b ^ LEGACY_TAG);
  return HET_OK;
}

static void legacy_free(void *state, void *handle) {
  (void)state;
  legacy_block *b = legacy_block_of(handle);
  if (!b)
    return;
  b->magic = 0;
  free(b);
  atomic_fetch_sub(&legacy_counts.live_blocks, 1);
}

/* The block range [offset, offset + n) of handle, or an error. */
static het_status legacy_range(const void *handle, size_t offset, size_t n,
                               unsigned char **p) {
  legacy_block *b = legacy_block_of(handle);
  if (!b)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "legacy: %p is not a device handle", handle);
  if (offset > b->nbytes || n > b->nbytes - offset)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "legacy: access of %zu bytes at offset %zu runs past a "
                     "%zu-byte block",
                     n, offset, b->nbytes);
  *p = b->data + offset;
  return HET_OK;
}

/* Counts a copy; true (with *nth) when it is the one to fail. */
static bool legacy_copy_fails(legacy_state *s, long *nth) {
  *nth = atomic_fetch_add(&s->n_copies, 1) + 1;
  return s->fail_copy_at && *nth == s->fail_copy_at;
}

static het_status legacy_fault(long nth) {
  return het_error(HET_ERR_IO, "legacy: injected fault: copy #%ld", nth);
}

static het_status legacy_from_host(void *state, void *dst, const void *src,
                                   size_t n) {
  unsigned char *p = NULL;
  long nth;
  HET_TRY(legacy_range(dst, 0, n, &p));
  if (legacy_copy_fails(state, &nth))
    return legacy_fault(nth);
  memcpy(p, src, n);
  atomic_fetch_add(&legacy_counts.sync_copies, 1);
  return HET_OK;
}

static het_status legacy_to_host(void *state, void *dst, const void *src,
                                 size_t n) {
  unsigned char *p = NULL;
  long nth;
  HET_TRY(legacy_range(src, 0, n, &p));
  if (legacy_copy_fails(state, &nth))
    return legacy_fault(nth);
  memcpy(dst, p, n);
  atomic_fetch_add(&legacy_counts.sync_copies, 1);
  return HET_OK;
}

static het_status legacy_alloc_host(void *state, size_t n, void **ptr) {
  (void)state;
  *ptr = aligned_alloc(64, (n + 63) & ~(size_t)63);
  if (!*ptr && n)
    return het_error(HET_ERR_OUT_OF_MEMORY, "legacy: no staging memory");
  atomic_fetch_add(&legacy_counts.live_host, 1);
  return HET_OK;
}

static void legacy_free_host(void *state, void *ptr) {
  (void)state;
  if (!ptr)
    return;
  free(ptr);
  atomic_fetch_sub(&legacy_counts.live_host, 1);
}

/* A submitted copy: a thread that sleeps the delay, then copies. */
typedef struct legacy_ticket {
  pthread_t thread;
  unsigned char *dst;
  const unsigned char *src;
  size_t n;
  long delay_ms;
  long fault; /* copy number to report as failed, 0 = none */
} legacy_ticket;

static void *legacy_copy_main(void *arg) {
  legacy_ticket *t = arg;
  if (t->delay_ms) {
    struct timespec d = {t->delay_ms / 1000, (t->delay_ms % 1000) * 1000000};
    nanosleep(&d, NULL);
  }
  if (!t->fault)
    memcpy(t->dst, t->src, t->n);
  return NULL;
}

static het_status legacy_submit(void *state, het_copy_direction dir,
                                void *handle, size_t offset, void *host,
                                size_t n, void **ticket) {
  legacy_state *s = state;
  unsigned char *p = NULL;
  HET_TRY(legacy_range(handle, offset, n, &p));
  if (dir != HET_COPY_TO_DEVICE && dir != HET_COPY_TO_HOST)
    return het_error(HET_ERR_INVALID_ARGUMENT, "legacy: bad direction %d",
                     (int)dir);
  legacy_ticket *t = calloc(1, sizeof *t);
  if (!t)
    return het_error(HET_ERR_OUT_OF_MEMORY, "legacy: out of memory");
  long nth;
  *t = (legacy_ticket){.dst = dir == HET_COPY_TO_DEVICE ? p : host,
                       .src = dir == HET_COPY_TO_DEVICE ? host : p,
                       .n = n, .delay_ms = s->copy_delay_ms,
                       .fault = legacy_copy_fails(s, &nth) ? nth : 0};
  if (pthread_create(&t->thread, NULL, legacy_copy_main, t) != 0) {
    free(t);
    return het_error(HET_ERR_INTERNAL, "legacy: cannot start a copy thread");
  }
  atomic_fetch_add(&legacy_counts.submits, 1);
  *ticket = t;
  return HET_OK;
}

static het_status legacy_wait(void *state, void *ticket) {
  (void)state;
  legacy_ticket *t = ticket;
  pthread_join(t->thread, NULL);
  long fault = t->fault;
  free(t);
  return fault ? legacy_fault(fault) : HET_OK;
}

#define LEGACY_SLOTS                                                          \
  .device_kind = HET_DEVICE_EMU, .create = legacy_create,                     \
  .destroy = legacy_destroy, .get_capability = legacy_capability,             \
  .estimate_cost = legacy_cost, .compile = legacy_compile,                    \
  .run = legacy_run, .destroy_compiled = legacy_destroy_compiled,             \
  .get_device_info = legacy_device_info, .alloc = legacy_alloc,               \
  .free = legacy_free, .copy_from_host = legacy_from_host,                    \
  .copy_to_host = legacy_to_host, .alloc_host = legacy_alloc_host,            \
  .free_host = legacy_free_host, .copy_submit = legacy_submit,                \
  .copy_wait = legacy_wait

const het_provider_vtable legacy_provider_v2 = {
    .abi_version = 2, .name = "legacy", LEGACY_SLOTS};

const het_provider_vtable legacy_provider_v1 = {
    .abi_version = 1, .name = "legacy1", LEGACY_SLOTS};

/* opt_fold.c — constant folding: a deterministic node whose inputs are all
 * constants is evaluated once with the CPU kernels and its outputs become
 * initializers; Shape (the dims it returns) and Size of a value with a
 * static shape become constants even when the value itself is not.
 * Invariant: a folded node's outputs hold exactly what the CPU provider
 * would compute at run time; anything that fails to evaluate is kept.
 */
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "core/tensor.h"
#include "optimizer/opt_internal.h"
#include "kernels/kernel.h"

/* Folded outputs larger than this stay computed at run time. */
#define HET_OPT_FOLD_MAX_BYTES ((size_t)16 << 20)

static const char *const het_opt_unfoldable[] = {
    "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike",
    "Bernoulli",     "Multinomial",  "Dropout",           NULL};

static bool het_opt_onnx_domain(const het_node *node) {
  return !*node->domain || strcmp(node->domain, "ai.onnx") == 0;
}

static bool het_opt_foldable(const het_opt *o, const het_node *node) {
  if (het_opt_has_subgraph(node))
    return false;
  if (het_opt_onnx_domain(node))
    for (int i = 0; het_opt_unfoldable[i]; i++)
      if (strcmp(node->op_type, het_opt_unfoldable[i]) == 0)
        return false;
  for (int i = 0; i < node->n_inputs; i++)
    if (node->inputs[i] >= 0 && !het_opt_is_constant(o->g, node->inputs[i]))
      return false;
  bool any = false;
  for (int i = 0; i < node->n_outputs; i++) {
    int v = node->outputs[i];
    if (v < 0)
      continue;
    if (o->g->values[v].flags & HET_VALUE_GRAPH_OUTPUT)
      return false;
    any = true;
  }
  return any;
}

static void het_opt_destroy_all(het_tensor **t, int n) {
  for (int i = 0; i < n; i++) {
    het_tensor_destroy(t[i]);
    t[i] = NULL;
  }
}

/* Creates the output tensors from inference on the constant inputs. */
static het_status het_opt_make_outputs(const het_node *node,
                                       het_value_info *out, het_tensor **t) {
  for (int i = 0; i < node->n_outputs; i++) {
    if (node->outputs[i] < 0)
      continue;
    het_shape *s = &out[i].shape;
    if (!het_shape_is_concrete(s)) {
      t[i] = calloc(1, sizeof *t[i]); /* data-dependent: kernel sizes it */
      if (!t[i])
        return het_error(HET_ERR_OUT_OF_MEMORY, "fold: out of memory");
      t[i]->dtype = out[i].dtype;
      t[i]->rank = s->rank < 0 ? 0 : s->rank;
      continue;
    }
    int64_t dims[HET_MAX_RANK];
    for (int d = 0; d < s->rank; d++)
      dims[d] = s->dims[d].value;
    size_t nbytes;
    HET_TRY(het_tensor_check_shape(out[i].dtype, dims, s->rank, "fold",
                                   &nbytes));
    if (nbytes > HET_OPT_FOLD_MAX_BYTES)
      return het_error(HET_ERR_UNSUPPORTED, "fold: output too large");
    HET_TRY(het_tensor_create_empty(out[i].dtype, dims, s->rank, &t[i]));
  }
  return HET_OK;
}

/* Runs node's CPU kernel on the tensors in[] (NULL: omitted); outs[i]
 * receives output i (NULL for omitted outputs), caller owns. */
static het_status het_opt_eval(const het_graph *g, const het_node *node,
                               het_tensor **in, het_value_info *in_info,
                               het_value_info *out_info, het_tensor **outs) {
  const het_kernel *k = het_kernel_find(node->domain, node->op_type);
  char why[128];
  if (!k || !k->run)
    return het_error(HET_ERR_UNSUPPORTED, "fold: no kernel");
  if (k->supports && !k->supports(g, node, why, sizeof why))
    return het_error(HET_ERR_UNSUPPORTED, "fold: %s", why);
  for (int i = 0; i < node->n_inputs; i++) {
    memset(&in_info[i], 0, sizeof in_info[i]);
    in_info[i].shape.rank = -1;
    if (in[i])
      het_value_info_from_tensor(&in_info[i], in[i]);
  }
  for (int i = 0; i < node->n_outputs; i++) {
    memset(&out_info[i], 0, sizeof out_info[i]);
    out_info[i].present = node->outputs[i] >= 0;
  }
  HET_TRY(het_infer_node(node, node->n_inputs, in_info, node->n_outputs,
                         out_info, NULL));
  het_status st = het_opt_make_outputs(node, out_info, outs);
  void *state = NULL;
  if (st == HET_OK && k->prepare)
    st = k->prepare(g, node, &state);
  if (st == HET_OK) {
    het_kernel_ctx kc = {
        .node = node, .opset = node->opset,
        .n_inputs = node->n_inputs, .inputs = in,
        .n_outputs = node->n_outputs, .outputs = outs,
        .state = state, .threads = 1, .run = NULL,
    };
    st = k->run(&kc);
  }
  if (state && k->destroy_state)
    k->destroy_state(state);
  for (int i = 0; st == HET_OK && i < node->n_outputs; i++)
    if (outs[i] && (!outs[i]->data || outs[i]->nbytes > HET_OPT_FOLD_MAX_BYTES))
      st = het_error(HET_ERR_UNSUPPORTED, "fold: output not sized or large");
  if (st != HET_OK)
    het_opt_destroy_all(outs, node->n_outputs);
  return st;
}

/* Replaces node n's outputs by the tensors in outs (ownership taken). */
static void het_opt_commit(het_opt *o, int n, het_tensor **outs) {
  het_node *node = &o->g->nodes[n];
  for (int i = 0; i < node->n_outputs; i++) {
    if (node->outputs[i] < 0)
      continue;
    het_graph_set_constant(o->g, node->outputs[i], outs[i]);
    outs[i] = NULL;
  }
  het_opt_kill_node(o, n);
  if (o->stats)
    o->stats->nodes_folded++;
}

/* Folds one node; a node that cannot be evaluated is kept (it runs at run
 * time), except when memory ran out: that is the session's error, since
 * memory pressure must not change the graph quietly. */
static het_status het_opt_fold_node(het_opt *o, int n) {
  const het_node *node = &o->g->nodes[n];
  size_t ni = (size_t)node->n_inputs + 1, no = (size_t)node->n_outputs + 1;
  het_tensor **in = calloc(ni, sizeof *in);
  het_tensor **outs = calloc(no, sizeof *outs);
  het_value_info *in_info = calloc(ni, sizeof *in_info);
  het_value_info *out_info = calloc(no, sizeof *out_info);
  het_status st = HET_OK;
  if (!in || !outs || !in_info || !out_info)
    st = het_error(HET_ERR_OUT_OF_MEMORY, "fold: out of memory");
  for (int i = 0; in && i < node->n_inputs; i++)
    in[i] = node->inputs[i] >= 0 ? o->g->values[node->inputs[i]].initializer
                                 : NULL;
  if (st == HET_OK &&
      (st = het_opt_eval(o->g, node, in, in_info, out_info, outs)) == HET_OK)
    het_opt_commit(o, n, outs);
  else if (st != HET_ERR_OUT_OF_MEMORY) {
    st = HET_OK;
    het_error_clear();
  }
  free(in);
  free(outs);
  free(in_info);
  free(out_info);
  return st;
}

/* Shape (start/end from opset 15) or Size of a statically shaped value. */
static het_status het_opt_fold_shape(het_opt *o, int n) {
  const het_node *node = &o->g->nodes[n];
  bool size = strcmp(node->op_type, "Size") == 0;
  if (!het_opt_onnx_domain(node) ||
      (!size && strcmp(node->op_type, "Shape") != 0) ||
      node->n_inputs != 1 || node->inputs[0] < 0 || node->n_outputs != 1 ||
      node->outputs[0] < 0 ||
      (o->g->values[node->outputs[0]].flags & HET_VALUE_GRAPH_OUTPUT))
    return HET_OK;
  const het_shape *s = &o->g->values[node->inputs[0]].shape;
  if (s->rank < 0 || (size && !het_shape_is_concrete(s)))
    return HET_OK;
  int64_t start = 0, end = s->rank;
  if (!size && node->opset >= 15) {
    start = het_node_attr_int(node, "start", 0);
    end = het_node_attr_int(node, "end", s->rank);
    start = start < 0 ? start + s->rank : start;
    end = end < 0 ? end + s->rank : end;
    start = start < 0 ? 0 : start > s->rank ? s->rank : start;
    end = end < 0 ? 0 : end > s->rank ? s->rank : end;
  }
  int64_t len = end > start ? end - start : 0;
  for (int64_t i = 0; !size && i < len; i++)
    if (s->dims[start + i].value < 0)
      return HET_OK; /* only the requested dims need to be static */
  het_tensor *t;
  HET_TRY(het_tensor_create_empty(HET_DTYPE_INT64, &len, size ? 0 : 1, &t));
  int64_t *d = t->data;
  if (size)
    d[0] = het_shape_count(s);
  for (int64_t i = 0; !size && i < len; i++)
    d[i] = s->dims[start + i].value;
  if (size && d[0] < 0) {
    het_tensor_destroy(t);
    return HET_OK;
  }
  het_opt_commit(o, n, &t);
  if (o->stats)
    o->stats->shapes_folded++;
  return HET_OK;
}

het_status het_opt_fold_constants(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    if (o->dead[n])
      continue;
    if (het_opt_foldable(o, &g->nodes[n]))
      HET_TRY(het_opt_fold_node(o, n));
    else
      HET_TRY(het_opt_fold_shape(o, n));
  }
  return HET_OK;
}

het_status het_opt_eval_node(const het_graph *g, const het_node *node,
                             het_tensor **in, het_tensor **outs) {
  size_t ni = (size_t)node->n_inputs + 1, no = (size_t)node->n_outputs + 1;
  het_value_info *in_info = calloc(ni, sizeof *in_info);
  het_value_info *out_info = calloc(no, sizeof *out_info);
  het_status st =
      in_info && out_info
          ? het_opt_eval(g, node, in, in_info, out_info, outs)
          : het_error(HET_ERR_OUT_OF_MEMORY, "fold: out of memory");
  free(in_info);
  free(out_info);
  return st;
}

/* opt_nlp.h — helpers the transformer fusions share (opt_nlp.c defines
 * them; opt_nlp_attention.c and opt_hard.c use them too). */
#ifndef HET_OPTIMIZER_OPT_NLP_H
#define HET_OPTIMIZER_OPT_NLP_H

#include "optimizer/opt_internal.h"

/* The live ai.onnx node of type op producing v, or -1. */
int het_opt_nlp_producer(const het_opt *o, int v, const char *op);
/* The only live reader of v when it is an ai.onnx op node (any op when
 * op is NULL) and v has one use and is not pinned; -1 otherwise. */
int het_opt_nlp_reader(const het_opt *o, int v, const char *op);
/* v is a constant float32 holding one value, *out. */
bool het_opt_nlp_scalar(const het_graph *g, int v, float *out);
/* v is float32. */
bool het_opt_nlp_f32(const het_graph *g, int v);
/* Binary node n: one input is a scalar float32 constant within tol of c;
 * the other input into *x. */
bool het_opt_const_operand(const het_graph *g, const het_node *n, float c,
                           float tol, int *x);
/* Node n becomes domain.op at opset with these inputs (their uses moved)
 * and attributes (arena or static). */
het_status het_opt_rewrite(het_opt *o, int n, const char *domain, int opset,
                           const char *op, const int *in, int n_in,
                           het_attr *attrs, int n_attrs);
/* het_opt_rewrite into hetrt.<op> (opset 1). */
het_status het_opt_nlp_rewrite(het_opt *o, int n, const char *op,
                               const int *in, int n_in, het_attr *attrs,
                               int n_attrs);
/* MatMul → scale → [mask] → Softmax → MatMul into hetrt.Attention. */
het_status het_opt_fuse_attention(het_opt *o);

#endif

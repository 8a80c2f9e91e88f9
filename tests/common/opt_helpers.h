/* opt_helpers.h — helpers shared by the optimizer test suites
 * (test_optimizer.c, test_opt_nlp.c): loading a case's model at an
 * optimization level, counting ops, and checking that the optimized graph
 * computes what the unoptimized graph and the case's reference compute,
 * running both directly on the CPU kernels (no session).
 */
#ifndef HET_TESTS_OPT_HELPERS_H
#define HET_TESTS_OPT_HELPERS_H

#include "core/ir.h"
#include "hetrt/hetrt.h"
#include "optimizer/optimizer.h"

/* The model file at path, shape-inferred and optimized at level (stats
 * may be NULL); fails the test on any error. */
het_graph *opt_load_model(const char *path, int level,
                          het_optimize_stats *stats);
/* opt_load_model of DIR/model.onnx. */
het_graph *opt_load_graph(const char *dir, int level,
                          het_optimize_stats *stats);

/* Nodes of g whose op_type is op. */
int opt_count_op(const het_graph *g, const char *op);

/* Reads dir/test_data_set_<set>/<kind>_*.pb (kind "input" or "output"),
 * at most max of them, into t (and their names, caller frees); returns the
 * count (0 = no such data set).  Fails the test on a corrupt file. */
int opt_load_tensors(const char *dir, int set, const char *kind,
                     het_tensor **t, char **names, int max);
/* Destroys n tensors of opt_load_tensors and frees their names (names may
 * be NULL for tensors that have none). */
void opt_free_tensors(het_tensor **t, char **names, int n);

/* Data set `set` of the case in dir: the optimized graph g1 agrees with
 * the unoptimized g0 (rtol/atol 1e-5) and with the reference outputs
 * (rtol 1e-4, atol 1e-5).  False when the case has no such data set. */
bool opt_check_numerics(const char *dir, int set, het_graph *g0,
                        het_graph *g1);

/* A session on the case in dir at the optimization level (and, when not
 * NULL, that cpu.layout and cpu.conv_algo) passes the case's data sets
 * through het_testcase_run. */
void opt_session_case(het_env *env, const char *dir, const char *level,
                      const char *cpu_layout, const char *conv_algo);
/* The same on threads CPU threads (0: the default). */
void opt_session_case_threads(het_env *env, const char *dir,
                              const char *level, const char *cpu_layout,
                              const char *conv_algo, int threads);

#endif

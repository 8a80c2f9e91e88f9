/* toy_provider.h — "toy", a minimal execution provider built outside
 * hetrt's tree against the installed public headers only: it claims
 * float32 Relu and Add (equal static shapes) in host memory, runs them with
 * its own kernels on streams of its own (inline, or one worker thread per
 * stream) and gives the partitioner a cost estimate per node.  Register it
 * with het_env_register_provider(env, &toy_provider).  docs/provider-guide.md
 * explains it slot by slot.
 */
#ifndef TOY_PROVIDER_H
#define TOY_PROVIDER_H

#include <hetrt/provider.h>

/* The vtable (ABI 3).  Session options "toy.<key>" reach it; known keys:
 *   bandwidth  bytes per second its kernels stream (default 4e9), which
 *              the cost estimate uses */
extern const het_provider_vtable toy_provider;

/* Nodes the toy's kernels have run in this process (all sessions). */
long toy_provider_nodes_run(void);

#endif

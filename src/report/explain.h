/* explain.h — the placement report behind partview, `hetrt run --explain`
 * and het_session_explain(): every node with its provider and reason,
 * subgraphs, boundary nodes with the bytes they move, cost estimates (next
 * to the measured times of a node-times file) and planned peak memory per
 * device.  Invariant: a het_explain is a plain
 * snapshot; its strings are borrowed from the session that filled it.
 */
#ifndef HET_PARTITIONER_EXPLAIN_H
#define HET_PARTITIONER_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "hetrt/hetrt.h"

typedef struct het_explain_node {
  const char *name;
  const char *op_type;
  const char *provider;
  const char *reason;
  int subgraph;          /* index into subgraphs */
  double est_seconds;    /* the time placement used for this node on its
                            provider: the estimate, or with node times the
                            measured time where there is one */
  const char *boundary;  /* NULL, or "copy", "layout", "cast" */
  double bytes;          /* bytes a boundary node moves (0 otherwise) */
  const char *placed_by; /* what decided: "cost", "priority", a policy rule
                            ("rule 2 'attn' (p.yaml:7:5)"), "C API
                            constraint", "min_subgraph_nodes", "boundary",
                            "control flow" */
  double model_seconds;  /* with node times: the provider's estimate */
  double measured_seconds; /* with node times: the measured time on its
                              provider; < 0 when the file has none */
  const char *precision; /* "fp32", "bf16", "fp16", "int8" for a compute
                            node on its provider; NULL where the node has
                            no arithmetic of those types (shape and index
                            ops, boundaries) */
} het_explain_node;

/* A data edge between two nodes (for DOT/HTML drawings). */
typedef struct het_explain_edge {
  int from, to;          /* indices into nodes */
  const char *value;     /* tensor name */
  double bytes;
} het_explain_edge;

typedef struct het_explain_subgraph {
  const char *provider;
  int n_nodes;
  double est_seconds;    /* node times + launch overhead */
} het_explain_subgraph;

/* One memory space.  planned_peak = arena + everything outside it
 * (weights, graph inputs/outputs, intermediates the plan leaves out). */
typedef struct het_explain_device {
  const char *provider;
  size_t planned_peak;   /* bytes, from load-time shapes (unknown dims = 1) */
  size_t capacity;       /* bytes, 0 = unlimited: the lower of the device's
                            capacity and the session's budget for it */
  size_t arena;          /* the planner's arena for intermediates */
  size_t intermediates;  /* sum of all intermediate tensor sizes: what an
                            allocator without reuse would need for them */
  size_t weights;        /* initializers / placed constants in this space */
  bool estimated;        /* symbolic input shapes: no plan; planned_peak is
                            a lifetime walk and arena is 0 */
} het_explain_device;

/* What one policy rule did. */
typedef struct het_explain_rule {
  const char *label;     /* "rule 2 'attn'" */
  const char *where;     /* "p.yaml:7:5" */
  const char *actions;   /* "pin emu; forbid cuda" */
  const char *note;      /* why part of it is not applied, or NULL */
  int n_nodes;
  const char *const *nodes; /* the nodes it matched */
  int n_unknown;         /* nodes a shape predicate could not test */
  int n_fallback;        /* nodes it could not be followed for */
} het_explain_rule;

/* A partition made at run time for input shapes unlike those the session
 * was planned for (a shape regime; regime 0 is the session's own). */
typedef struct het_explain_regime {
  const char *shapes;    /* what it was planned for */
  long run;              /* the run that made it (0: session creation) */
  int from;              /* the regime that run would have used */
  double est_before;     /* from's estimate at these shapes (seconds) */
  double est_after;      /* this regime's own */
  int n_moved;           /* model nodes placed unlike in from */
  const char *moved;     /* "conv1 emu->cpu, ..." */
  bool stored;           /* loaded from the plan file */
} het_explain_regime;

/* What the first run of a new range of shapes decided. */
typedef struct het_explain_regime_choice {
  const char *shapes;    /* that run's input shapes */
  long run;              /* 0: planned without a run */
  int regime;            /* the regime runs of its range use */
  int kept;              /* the best existing regime at these shapes */
  double est_kept;       /* kept's estimate at these shapes */
  double est_best;       /* a partition made for these shapes */
  const char *why;       /* "new regime", "kept: ..." */
  const char *failure;   /* why re-planning failed, or NULL */
} het_explain_regime_choice;

/* A QDQ island the optimizer weighed: its operator's name (a body's
 * with the body's path), whether it became the int8 operator, the
 * estimates of its int8 and float forms (the float operator on the
 * provider float_on, moves to it included), and whether a dim was unknown
 * (estimated as 1). */
typedef struct het_explain_island {
  const char *name;
  bool fused;
  double int8_seconds, float_seconds;
  bool unknown_dims;
  const char *float_on; /* the provider its float operator is estimated on */
} het_explain_island;

typedef struct het_explain {
  const char *model;     /* model path or "<memory>" */
  const char *algorithm; /* "cost" or "priority" */
  int n_nodes;
  het_explain_node *nodes;          /* in execution order */
  int n_edges;
  het_explain_edge *edges;
  int n_subgraphs;
  het_explain_subgraph *subgraphs;
  int n_devices;
  het_explain_device *devices;
  double est_total;      /* the chosen assignment's estimate (seconds) */
  double est_priority;   /* the priority assignment's estimate */
  double est_cost;       /* the cost assignment's estimate */
  int n_warnings;
  const char **warnings; /* e.g. skipped providers in non-strict mode */
  int n_rules;
  het_explain_rule *rules; /* the policy's rules, in order */
  int n_unknown;         /* nodes of the model's graph estimated with a
                            dim unknown (no shape to plan for) */
  const char *unknown_example;
  int n_shapes;          /* shapes to plan for that were given */
  const char *node_times; /* the node-times file planned with, or NULL;
                             then n_measured compute nodes have a measured
                             time on their provider, summing to
                             measured_total, and model_total is the sum of
                             the provider's estimates of the same nodes */
  int n_measured, n_compute;
  double measured_total, model_total;
  int n_model_nodes;     /* nodes of the model's graph (for n_unknown) */
  const char *plan;      /* the plan file the session was loaded from,
                            or NULL */
  const char *plan_made; /* "hetrt 0.1.0, 2026-12-05T06:36:50Z, from m.onnx" */
  const char *plan_grade; /* "optimal", "suboptimal", "unusable" */
  const char *plan_why;  /* the grade's reasons, or NULL */
  bool replans;          /* the session re-plans per shape regime */
  bool regimes_stored;   /* ... or keeps the regimes its plan stores */
  double replan_gain;    /* the relative gain that makes a new regime */
  int max_regimes;
  int n_regimes;         /* regime 0 included, when replans */
  het_explain_regime *regimes;
  int n_choices;
  het_explain_regime_choice *choices;
  int n_islands;         /* QDQ islands weighed; their int8 form runs on
                            islands_int8_on */
  const het_explain_island *islands;
  const char *islands_int8_on;
} het_explain;

/* Renders e as "text", "json", "dot", "html" or "rules" (the policy
 * rules with the nodes each matched, and the warnings: `hetrt policy
 * check`) into a malloc'd string (caller frees).  Unknown formats: ERR_INVALID_ARGUMENT naming it.
 * JSON has per node at least name, op_type, provider and reason. */
het_status het_explain_format(const het_explain *e, const char *format,
                              char **out);

#endif

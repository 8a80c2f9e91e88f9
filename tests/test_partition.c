/* test_partition.c — the provider registry and the `priority` assignment:
 * first capable provider wins, every node carries a reason, a node nobody
 * claims is an error naming it and each provider's refusal, and subgraphs
 * are contiguous single-provider runs of the topological order.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir.h"
#include "core/status.h"
#include "partitioner/partition.h"
#include "providers/registry.h"

/* A scripted provider: claims the nodes whose op type is in its list. */
typedef struct fake_provider {
  const char *ops[4];
} fake_provider;

static het_status fake_capability(void *state, const het_graph *g,
                                  het_claim *claims) {
  const fake_provider *f = state;
  for (int n = 0; n < g->n_nodes; n++) {
    claims[n].claimed = false;
    snprintf(claims[n].reason, sizeof claims[n].reason, "%s not supported",
             g->nodes[n].op_type);
    for (int k = 0; k < 4 && f->ops[k]; k++)
      if (strcmp(f->ops[k], g->nodes[n].op_type) == 0) {
        claims[n].claimed = true;
        snprintf(claims[n].reason, sizeof claims[n].reason, "has %s",
                 f->ops[k]);
      }
  }
  return HET_OK;
}

static const het_provider_vtable fake_a_vt = {
    .abi_version = HET_PROVIDER_ABI_VERSION,
    .name = "accel",
    .get_capability = fake_capability,
};
static const het_provider_vtable fake_b_vt = {
    .abi_version = HET_PROVIDER_ABI_VERSION,
    .name = "host",
    .get_capability = fake_capability,
};

/* x → Conv → Relu → Softmax → y (a chain, in order). */
static het_graph *chain(const char *const *ops, int n) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  int prev;
  het_graph_intern_value(g, "x", &prev);
  g->values[prev].flags = HET_VALUE_GRAPH_INPUT;
  for (int i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof name, "v%d", i);
    int *io = het_arena_calloc(&g->arena, 2, sizeof(int));
    io[0] = prev;
    het_graph_intern_value(g, name, &io[1]);
    het_node node = {.name = het_arena_strdup(&g->arena, name),
                     .op_type = ops[i], .domain = "", .opset = 13,
                     .n_inputs = 1, .inputs = &io[0], .n_outputs = 1,
                     .outputs = &io[1]};
    ck_assert_int_eq(het_graph_add_node(g, &node, NULL), HET_OK);
    prev = io[1];
  }
  g->values[prev].flags |= HET_VALUE_GRAPH_OUTPUT;
  int *outs = het_arena_calloc(&g->arena, 1, sizeof(int));
  outs[0] = prev;
  g->outputs = outs;
  g->n_outputs = 1;
  ck_assert_int_eq(het_graph_validate(g, NULL), HET_OK);
  return g;
}

START_TEST(test_first_capable_wins) {
  static const char *const ops[] = {"Conv", "Relu", "Softmax", "Conv"};
  het_graph *g = chain(ops, 4);
  fake_provider a = {{"Conv", "Relu"}}, b = {{"Conv", "Relu", "Softmax"}};
  het_ep p[2] = {{.vt = &fake_a_vt, .state = &a, .index = 0},
                  {.vt = &fake_b_vt, .state = &b, .index = 1}};
  het_arena arena;
  het_arena_init(&arena);
  het_partition part;
  ck_assert_int_eq(het_partition_priority(g, p, 2, &arena, &part), HET_OK);
  ck_assert_int_eq(part.provider[0], 0);
  ck_assert_int_eq(part.provider[1], 0);
  ck_assert_int_eq(part.provider[2], 1);
  ck_assert_int_eq(part.provider[3], 0);
  ck_assert_ptr_nonnull(strstr(part.reason[2], "has Softmax"));
  ck_assert_ptr_nonnull(strstr(part.reason[0], "priority 1"));
  /* accel[Conv,Relu] | host[Softmax] | accel[Conv] */
  ck_assert_int_eq(part.n_subgraphs, 3);
  ck_assert_int_eq(part.subgraphs[0].n_nodes, 2);
  ck_assert_int_eq(part.subgraphs[1].provider, 1);
  ck_assert_int_eq(part.subgraphs[2].nodes[0], 3);
  het_arena_deinit(&arena);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_unclaimed_node_is_named) {
  static const char *const ops[] = {"Conv", "Mystery"};
  het_graph *g = chain(ops, 2);
  fake_provider a = {{"Conv"}}, b = {{"Relu"}};
  het_ep p[2] = {{.vt = &fake_a_vt, .state = &a, .index = 0},
                  {.vt = &fake_b_vt, .state = &b, .index = 1}};
  het_arena arena;
  het_arena_init(&arena);
  het_partition part;
  ck_assert_int_eq(het_partition_priority(g, p, 2, &arena, &part),
                   HET_ERR_UNSUPPORTED);
  const char *msg = het_last_error();
  ck_assert_ptr_nonnull(strstr(msg, "'v1'"));
  ck_assert_ptr_nonnull(strstr(msg, "Mystery"));
  ck_assert_ptr_nonnull(strstr(msg, "accel: Mystery not supported"));
  ck_assert_ptr_nonnull(strstr(msg, "host: Mystery not supported"));
  het_arena_deinit(&arena);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_registry_names) {
  const het_provider_vtable *vt = NULL;
  ck_assert_int_eq(het_registry_find("cpu", &vt), HET_OK);
  ck_assert_str_eq(vt->name, "cpu");
  ck_assert_int_eq(vt->abi_version, HET_PROVIDER_ABI_VERSION);
  ck_assert_int_eq(het_registry_find("cuda", &vt), HET_ERR_NOT_BUILT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "cuda"));
  ck_assert_int_eq(het_registry_find("tpu", &vt), HET_ERR_NOT_FOUND);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "'tpu'"));
}
END_TEST

static Suite *partition_suite(void) {
  Suite *s = suite_create("partition");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_first_capable_wins);
  tcase_add_test(core, test_registry_names);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_unclaimed_node_is_named);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(partition_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

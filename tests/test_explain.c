/* test_explain.c — het_explain_format(): the text, JSON, DOT and HTML
 * placement reports rendered from a hand-built het_explain (two providers,
 * a copy and a cast boundary node, a skipped-provider warning) show every
 * node's provider and reason, subgraphs, boundary bytes, estimates, peak
 * memory (with arena, intermediates without reuse and weights) and the
 * cost-vs-priority line, and with node times each node's estimate and
 * measured time; JSON is valid and escaped; errors.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrt/hetrt.h"
#include "report/explain.h"

/* ---- a tiny JSON validator (RFC 8259 grammar, no semantics) --------------- */

static void js_ws(const char **p) {
  while (**p == ' ' || **p == '\n' || **p == '\t' || **p == '\r')
    (*p)++;
}

static bool js_value(const char **p, int depth);

static bool js_string(const char **p) {
  if (**p != '"')
    return false;
  for ((*p)++; **p != '"'; (*p)++) {
    unsigned char c = (unsigned char)**p;
    if (c < 0x20)
      return false; /* also the terminating NUL */
    if (c != '\\')
      continue;
    (*p)++;
    if (**p == 'u') {
      for (int i = 1; i <= 4; i++)
        if (!strchr("0123456789abcdefABCDEF", (*p)[i]) || !(*p)[i])
          return false;
      *p += 4;
    } else if (!**p || !strchr("\"\\/bfnrt", **p)) {
      return false;
    }
  }
  (*p)++;
  return true;
}

static bool js_number(const char **p) {
  const char *s = *p;
  if (**p == '-')
    (*p)++;
  if (**p == '0')
    (*p)++;
  else if (**p >= '1' && **p <= '9')
    while (**p >= '0' && **p <= '9')
      (*p)++;
  else
    return false;
  if (**p == '.') {
    (*p)++;
    if (!(**p >= '0' && **p <= '9'))
      return false;
    while (**p >= '0' && **p <= '9')
      (*p)++;
  }
  if (**p == 'e' || **p == 'E') {
    (*p)++;
    if (**p == '+' || **p == '-')
      (*p)++;
    if (!(**p >= '0' && **p <= '9'))
      return false;
    while (**p >= '0' && **p <= '9')
      (*p)++;
  }
  return *p > s;
}

static bool js_items(const char **p, int depth, char close, bool keyed) {
  (*p)++;
  js_ws(p);
  if (**p == close) {
    (*p)++;
    return true;
  }
  for (;;) {
    js_ws(p);
    if (keyed) {
      if (!js_string(p))
        return false;
      js_ws(p);
      if (*(*p)++ != ':')
        return false;
    }
    if (!js_value(p, depth + 1))
      return false;
    js_ws(p);
    if (**p == close) {
      (*p)++;
      return true;
    }
    if (*(*p)++ != ',')
      return false;
  }
}

static bool js_value(const char **p, int depth) {
  js_ws(p);
  if (depth > 64)
    return false;
  switch (**p) {
  case '{': return js_items(p, depth, '}', true);
  case '[': return js_items(p, depth, ']', false);
  case '"': return js_string(p);
  case 't': return strncmp(*p, "true", 4) == 0 ? (*p += 4, true) : false;
  case 'f': return strncmp(*p, "false", 5) == 0 ? (*p += 5, true) : false;
  case 'n': return strncmp(*p, "null", 4) == 0 ? (*p += 4, true) : false;
  default: return js_number(p);
  }
}

static bool json_valid(const char *s) {
  const char *p = s;
  if (!js_value(&p, 0))
    return false;
  js_ws(&p);
  return *p == '\0';
}

/* ---- the fixture ---------------------------------------------------------- */

static het_explain_node fx_nodes[] = {
    {"conv1", "Conv", "emu", "cost: 0.50 ms on emu vs 2.10 ms on cpu", 0,
     0.5e-3, NULL, 0, "cost", 0, -1, "fp16"},
    {"relu1", "Relu", "emu", "cost: emu claims Relu", 0, 0.1e-3, NULL, 0, NULL,
     0, -1, "fp16"},
    {"copy_r1_d2h", "Copy", "host", "boundary: r1 emu -> cpu", 1, 0.2e-3,
     "copy", 401408, NULL, 0, -1, NULL},
    {"topk", "TopK", "cpu", "emu refused: TopK not supported", 2, 0.05e-3,
     NULL, 0, "rule 1 (p.yaml:2:3)", 0, -1, "fp32"},
    {"cast_t", "Cast", "cpu", "boundary: float16 -> float32", 2, 0.01e-3,
     "cast", 1000, NULL, 0, -1, NULL},
};
static het_explain_edge fx_edges[] = {
    {0, 1, "c1", 401408}, {1, 2, "r1", 401408},
    {2, 3, "r1_host", 401408}, {3, 4, "t", 1000}};
static het_explain_subgraph fx_subgraphs[] = {
    {"emu", 2, 0.8e-3}, {"host", 1, 0.2e-3}, {"cpu", 2, 0.06e-3}};
static het_explain_device fx_devices[] = {
    {"host", 2000000, 0, 600000, 3000000, 1200000, false},
    {"emu", 1500000, 16u << 20, 262144, 1048576, 524288, false}};
static const char *fx_warnings[] = {"provider 'cuda' skipped: not built"};

static het_explain fixture(void) {
  return (het_explain){.model = "tiny.onnx", .algorithm = "cost",
                       .n_nodes = 5, .nodes = fx_nodes,
                       .n_edges = 4, .edges = fx_edges,
                       .n_subgraphs = 3, .subgraphs = fx_subgraphs,
                       .n_devices = 2, .devices = fx_devices,
                       .est_total = 1.23e-3, .est_priority = 2.34e-3,
                       .est_cost = 1.23e-3,
                       .n_warnings = 1, .warnings = fx_warnings};
}

static char *render(const het_explain *e, const char *format) {
  char *out = NULL;
  het_status st = het_explain_format(e, format, &out);
  ck_assert_msg(st == HET_OK, "%s: %s", format, het_last_error());
  ck_assert_ptr_nonnull(out);
  return out;
}

/* The line of text containing needle (copied into line), or fail. */
static void line_with(const char *text, const char *needle, char *line,
                      size_t cap) {
  const char *hit = strstr(text, needle);
  ck_assert_msg(hit != NULL, "'%s' not in:\n%.3000s", needle, text);
  const char *b = hit, *e = hit;
  while (b > text && b[-1] != '\n')
    b--;
  while (*e && *e != '\n')
    e++;
  size_t n = (size_t)(e - b) < cap - 1 ? (size_t)(e - b) : cap - 1;
  memcpy(line, b, n);
  line[n] = '\0';
}

static int count_of(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

#define ASSERT_HAS(text, needle)                                        \
  ck_assert_msg(strstr((text), (needle)) != NULL,                     \
                "'%s' missing in:\n%.3000s", (needle), (text))

/* ---- text ------------------------------------------------------------------ */

START_TEST(test_text_shows_everything) {
  het_explain e = fixture();
  char *t = render(&e, "text");
  char line[512];
  ASSERT_HAS(t, "estimated latency: cost 1.23 ms vs priority 2.34 ms (-47%)");
  ASSERT_HAS(t, "estimated total: 1.23 ms (3 subgraphs)");
  ASSERT_HAS(t, "warning: provider 'cuda' skipped: not built");
  ASSERT_HAS(t, "algorithm: cost");
  for (int i = 0; i < e.n_nodes; i++) {
    line_with(t, fx_nodes[i].reason, line, sizeof line);
    ASSERT_HAS(line, fx_nodes[i].name);
    ASSERT_HAS(line, fx_nodes[i].op_type);
    ASSERT_HAS(line, fx_nodes[i].provider);
    /* the precision column: "-" for nodes without one */
    char col[16];
    snprintf(col, sizeof col, "  %-4s  ",
             fx_nodes[i].precision ? fx_nodes[i].precision : "-");
    ASSERT_HAS(line, col);
  }
  ASSERT_HAS(t, "subgraphs (3):");
  line_with(t, "800.00 us", line, sizeof line);
  ck_assert_msg(strstr(line, "emu") && strstr(line, " 2 "), "%s", line);
  line_with(t, "60.00 us", line, sizeof line);
  ck_assert_msg(strstr(line, "cpu") && strstr(line, " 2 "), "%s", line);
  ASSERT_HAS(t, "boundary nodes (2):");
  line_with(t, "copy    emu -> host", line, sizeof line);
  ASSERT_HAS(line, "copy_r1_d2h");
  ASSERT_HAS(line, "401408 (392.00 KiB)");
  line_with(t, "cast    cpu -> cpu", line, sizeof line);
  ASSERT_HAS(line, "cast_t");
  ASSERT_HAS(line, "1000 (1000 B)");
  ASSERT_HAS(t, "total moved: 402408 bytes");
  line_with(t, "peak 1.43 MiB (1500000 bytes)", line, sizeof line);
  ASSERT_HAS(line, "emu");
  ASSERT_HAS(line, "of 16.00 MiB capacity (9%)");
  line_with(t, "peak 1.91 MiB (2000000 bytes)", line, sizeof line);
  ASSERT_HAS(line, "host");
  ASSERT_HAS(line, "unlimited");
  /* Arena next to the sum of all intermediates and the weights. */
  ASSERT_HAS(t, "unlimited capacity\n              arena 585.94 KiB vs "
                "intermediates 2.86 MiB without reuse (5.0x), weights 1.14 MiB\n"
                "              bytes: arena 600000, intermediates 3000000, "
                "weights 1200000\n");
  ASSERT_HAS(t, "(9%)\n              arena 256.00 KiB vs intermediates "
                "1.00 MiB without reuse (4.0x), weights 512.00 KiB\n");
  free(t);
  fx_devices[1].estimated = true; /* symbolic shapes: no arena */
  t = render(&e, "text");
  fx_devices[1].estimated = false;
  ASSERT_HAS(t, "(9%)\n              no plan (symbolic input shapes): "
                "intermediates 1.00 MiB without reuse, weights 512.00 KiB\n");
  free(t);
}
END_TEST

/* Cost worse than priority reads +; an infeasible priority is n/a. */
START_TEST(test_text_comparison_signs) {
  het_explain e = fixture();
  e.est_cost = 3e-3;
  e.est_priority = 2e-3;
  char *t = render(&e, "text");
  ASSERT_HAS(t, "estimated latency: cost 3.00 ms vs priority 2.00 ms (+50%)");
  free(t);
  e.est_priority = INFINITY;
  t = render(&e, "text");
  ASSERT_HAS(t, "estimated latency: cost 3.00 ms vs priority inf (n/a)");
  free(t);
  fx_devices[1].planned_peak = 20u << 20;
  t = render(&e, "text");
  fx_devices[1].planned_peak = 1500000;
  ASSERT_HAS(t, "(125%)  OVER CAPACITY");
  free(t);
}
END_TEST

/* A copy of a graph input or initializer (no producing node) comes from
 * the host. */
START_TEST(test_text_boundary_from_host) {
  het_explain_node n[2] = {
      {"copy:x->emu", "Copy", "emu", "boundary: host -> emu", 0, 1e-5,
       "copy", 12288, NULL, 0, -1, NULL},
      {"conv", "Conv", "emu", "r", 0, 1e-5, NULL, 0, NULL, 0, -1, "fp32"}};
  het_explain_edge ed = {0, 1, "x@emu", 12288};
  het_explain_subgraph sg = {"emu", 2, 2e-5};
  het_explain e = {.model = "m", .algorithm = "priority", .n_nodes = 2,
                   .nodes = n, .n_edges = 1, .edges = &ed,
                   .n_subgraphs = 1, .subgraphs = &sg};
  char *t = render(&e, "text"), line[512];
  line_with(t, "copy    host -> emu", line, sizeof line);
  ASSERT_HAS(line, "12288 (12.00 KiB)");
  free(t);
}
END_TEST

/* ---- JSON -------------------------------------------------------------------- */

START_TEST(test_json_valid_and_complete) {
  het_explain e = fixture();
  char *j = render(&e, "json");
  ck_assert_msg(json_valid(j), "invalid JSON:\n%.3000s", j);
  ASSERT_HAS(j, "\"name\":\"conv1\",\"op_type\":\"Conv\",\"provider\":\"emu\","
                "\"precision\":\"fp16\",\"placed_by\":\"cost\",\"reason\":\"cost: 0.50 ms on emu vs 2.10 ms on cpu\","
                "\"subgraph\":0");
  ASSERT_HAS(j, "\"name\":\"topk\",\"op_type\":\"TopK\",\"provider\":\"cpu\","
                "\"precision\":\"fp32\",\"placed_by\":\"rule 1 (p.yaml:2:3)\",\"reason\":\"emu refused: TopK not supported\"");
  ck_assert_int_eq(count_of(j, "\"op_type\":"), 5);
  ck_assert_int_eq(count_of(j, "\"reason\":"), 5);
  ASSERT_HAS(j, "\"name\":\"copy_r1_d2h\",\"op_type\":\"Copy\",\"provider\":"
                "\"host\",\"precision\":null,");
  ASSERT_HAS(j, "\"node\":2,\"name\":\"copy_r1_d2h\",\"kind\":\"copy\","
                "\"from_provider\":\"emu\",\"to_provider\":\"host\","
                "\"bytes\":401408}");
  ASSERT_HAS(j, "\"kind\":\"cast\",\"from_provider\":\"cpu\","
                "\"to_provider\":\"cpu\",\"bytes\":1000}");
  ASSERT_HAS(j, "{\"index\":0,\"provider\":\"emu\",\"n_nodes\":2,"
                "\"est_seconds\":0.0008}");
  ASSERT_HAS(j, "{\"provider\":\"emu\",\"planned_peak\":1500000,"
                "\"capacity\":16777216,\"arena\":262144,"
                "\"intermediates\":1048576,\"weights\":524288,"
                "\"estimated\":false}");
  ASSERT_HAS(j, "{\"provider\":\"host\",\"planned_peak\":2000000,"
                "\"capacity\":0,\"arena\":600000,\"intermediates\":3000000,"
                "\"weights\":1200000,");
  ASSERT_HAS(j, "\"from\":1,\"to\":2,\"value\":\"r1\",\"bytes\":401408,"
                "\"crosses_device\":true}");
  ASSERT_HAS(j, "\"from\":0,\"to\":1,\"value\":\"c1\",\"bytes\":401408,"
                "\"crosses_device\":false}");
  ASSERT_HAS(j, "\"estimates\": {\"total_seconds\":0.00123,"
                "\"cost_seconds\":0.00123,\"priority_seconds\":0.00234,");
  ASSERT_HAS(j, "\"warnings\": [\"provider 'cuda' skipped: not built\"]");
  ASSERT_HAS(j, "\"summary\": \"estimated latency: cost 1.23 ms vs priority "
                "2.34 ms (-47%)\"");
  free(j);
}
END_TEST

START_TEST(test_json_escapes_names) {
  het_explain_node n[2] = {
      {"a\"b\\c\nd\te\x01" "f", "Op", "cpu", "r\r\"", 0, 0, NULL, 0, NULL, 0,
       -1, "fp32"},
      {"caf\xc3\xa9 \xff\xfe", "Op", "cpu", NULL, 0, 0, NULL, 0, NULL, 0, -1,
       NULL}};
  het_explain_subgraph sg = {"cpu", 2, 0};
  het_explain e = {.model = "C:\\m\"x\".onnx", .algorithm = "cost",
                   .n_nodes = 2, .nodes = n, .n_subgraphs = 1,
                   .subgraphs = &sg, .est_priority = NAN, .est_cost = 1};
  char *j = render(&e, "json");
  ck_assert_msg(json_valid(j), "invalid JSON:\n%.3000s", j);
  ASSERT_HAS(j, "\"name\":\"a\\\"b\\\\c\\nd\\te\\u0001f\"");
  ASSERT_HAS(j, "\"reason\":\"r\\r\\\"\"");
  ASSERT_HAS(j, "\"name\":\"caf\xc3\xa9 \\ufffd\\ufffd\"");
  ASSERT_HAS(j, "\"reason\":null");
  ASSERT_HAS(j, "\"model\": \"C:\\\\m\\\"x\\\".onnx\"");
  ASSERT_HAS(j, "\"priority_seconds\":null,\"cost_vs_priority_percent\":null");
  free(j);
}
END_TEST

/* The validator itself rejects what it must (a check that cannot fail is
 * no check). */
START_TEST(test_json_validator_rejects) {
  ck_assert(json_valid("{\"a\":[1,2.5e-3,true,null,\"x\\u00e9\"]}"));
  ck_assert(!json_valid("{\"a\":1,}"));
  ck_assert(!json_valid("{\"a\":\"x\ny\"}"));
  ck_assert(!json_valid("{\"a\":\"\\q\"}"));
  ck_assert(!json_valid("{\"a\":inf}"));
  ck_assert(!json_valid("{\"a\":1} x"));
}
END_TEST

/* ---- DOT ---------------------------------------------------------------------- */

START_TEST(test_dot_nodes_colours_clusters_edges) {
  het_explain e = fixture();
  char *d = render(&e, "dot");
  char line[512], id[16];
  ck_assert_msg(strncmp(d, "digraph partition {", 19) == 0, "%.2000s", d);
  ck_assert_int_eq(count_of(d, "{"), count_of(d, "}"));
  for (int i = 0; i < e.n_nodes; i++) {
    snprintf(id, sizeof id, "  n%d [", i);
    ck_assert_int_eq(count_of(d, id), 1);
  }
  line_with(d, "n0 [", line, sizeof line);
  ASSERT_HAS(line, "shape=box, fillcolor=\"#fdbf6f\"");   /* emu orange */
  line_with(d, "n3 [", line, sizeof line);
  ASSERT_HAS(line, "shape=box, fillcolor=\"#a6cee3\"");   /* cpu light blue */
  ASSERT_HAS(line, "emu refused: TopK not supported");    /* tooltip */
  line_with(d, "n2 [", line, sizeof line);
  ASSERT_HAS(line, "shape=cds");
  ASSERT_HAS(line, "392.00 KiB");
  line_with(d, "n4 [", line, sizeof line);
  ASSERT_HAS(line, "shape=hexagon");
  ck_assert_int_eq(count_of(d, "cluster_sg0"), 1);
  ck_assert_int_eq(count_of(d, "cluster_sg1"), 0); /* copy alone: no cluster */
  ck_assert_int_eq(count_of(d, "cluster_sg2"), 1);
  ASSERT_HAS(d, "label=\"subgraph 0: emu, 2 nodes, 800.00 us\"");
  ASSERT_HAS(d, "  n0 -> n1;\n");
  line_with(d, "n1 -> n2", line, sizeof line);
  ASSERT_HAS(line, "label=\"392.00 KiB\"");
  line_with(d, "n3 -> n4", line, sizeof line);
  ck_assert_ptr_null(strstr(line, "label"));
  ASSERT_HAS(d, "estimated latency: cost 1.23 ms vs priority 2.34 ms (-47%)");
  ASSERT_HAS(d, "(-47%)\\nhost: peak 1.91 MiB, arena 585.94 KiB vs "
                "intermediates 2.86 MiB without reuse (5.0x), weights 1.14 MiB"
                "\\nemu: peak 1.43 MiB, arena 256.00 KiB vs intermediates "
                "1.00 MiB without reuse (4.0x), weights 512.00 KiB\"];");
  free(d);
}
END_TEST

START_TEST(test_dot_escapes_and_palette) {
  het_explain_node n[3] = {
      {"say \"hi\"\\", "Op", "npu", "r", 0, 0, NULL, 0, NULL, 0, -1, NULL},
      {"b", "Op", "tpu", "r", 0, 0, NULL, 0, NULL, 0, -1, NULL},
      {"c", "Op", "npu", "r", 0, 0, NULL, 0, NULL, 0, -1, NULL}};
  het_explain_subgraph sg = {"npu", 3, 0};
  het_explain e = {.model = "m", .algorithm = "cost", .n_nodes = 3,
                   .nodes = n, .n_subgraphs = 1, .subgraphs = &sg};
  char *d = render(&e, "dot");
  char l0[512], l1[512], l2[512];
  ASSERT_HAS(d, "label=\"say \\\"hi\\\"\\\\\\nOp\"");
  line_with(d, "n0 [", l0, sizeof l0);
  line_with(d, "n1 [", l1, sizeof l1);
  line_with(d, "n2 [", l2, sizeof l2);
  const char *c0 = strstr(l0, "fillcolor="), *c1 = strstr(l1, "fillcolor=");
  const char *c2 = strstr(l2, "fillcolor=");
  ck_assert(strncmp(c0, c2, 20) == 0);  /* same provider, same colour */
  ck_assert(strncmp(c0, c1, 20) != 0);  /* other provider, other colour */
  free(d);
}
END_TEST

/* ---- HTML --------------------------------------------------------------------- */

START_TEST(test_html_self_contained) {
  het_explain e = fixture();
  char *h = render(&e, "html");
  ck_assert_msg(strncmp(h, "<!DOCTYPE html>", 15) == 0, "%.2000s", h);
  ck_assert_ptr_null(strstr(h, "http://"));
  ck_assert_ptr_null(strstr(h, "https://"));
  ck_assert_ptr_null(strstr(h, "<link"));
  ck_assert_ptr_null(strstr(h, " src="));
  ck_assert_ptr_null(strstr(h, "@import"));
  ASSERT_HAS(h, "<style>");
  ASSERT_HAS(h, "</html>");
  for (int i = 0; i < e.n_nodes; i++)
    ASSERT_HAS(h, fx_nodes[i].name);
  ASSERT_HAS(h, "<td>cost: 0.50 ms on emu vs 2.10 ms on cpu</td>");
  ASSERT_HAS(h, "<td>emu refused: TopK not supported</td>");
  ASSERT_HAS(h, "<td>boundary: r1 emu -&gt; cpu</td>");
  ck_assert_int_eq(count_of(h, "<tr><td"), 5 + 3 + 2 + 2); /* nodes, sg, bnd, dev */
  ASSERT_HAS(h, "estimated latency: cost 1.23 ms vs priority 2.34 ms (-47%)");
  ASSERT_HAS(h, "<li>provider &#39;cuda&#39; skipped: not built</li>");
  ASSERT_HAS(h, "data-v=\"401408\">392.00 KiB</td>");
  ASSERT_HAS(h, "id=\"nodes\"");
  ASSERT_HAS(h, "id=\"devices\"");
  ASSERT_HAS(h, "data-v=\"1500000\">1.43 MiB</td><td class=\"n\" "
                "data-v=\"262144\">256.00 KiB</td><td class=\"n\" "
                "data-v=\"1048576\">1.00 MiB</td><td class=\"n\" "
                "data-v=\"524288\">512.00 KiB</td>");
  ASSERT_HAS(h, "<th>intermediates without reuse</th><th>weights</th>");
  ASSERT_HAS(h, "id=\"subgraphs\"");
  ASSERT_HAS(h, "id=\"boundaries\"");
  ASSERT_HAS(h, "<svg");
  free(h);
}
END_TEST

START_TEST(test_html_escapes) {
  het_explain_node n = {"<script>alert(1)</script>", "Op&", "cpu", "a<b",
                        0, 0, NULL, 0, NULL, 0, -1, "<i>"};
  het_explain_subgraph sg = {"cpu", 1, 0};
  het_explain e = {.model = "m", .algorithm = "cost", .n_nodes = 1,
                   .nodes = &n, .n_subgraphs = 1, .subgraphs = &sg};
  char *h = render(&e, "html");
  ck_assert_ptr_null(strstr(h, "<script>alert"));
  ASSERT_HAS(h, "&lt;script&gt;alert(1)&lt;/script&gt;");
  ASSERT_HAS(h, "<td>Op&amp;</td>");
  ASSERT_HAS(h, "<td>a&lt;b</td>");
  ASSERT_HAS(h, "<td>&lt;i&gt;</td>"); /* the precision cell */
  free(h);
}
END_TEST

/* ---- errors and limits -------------------------------------------------------- */

START_TEST(test_unknown_format_named) {
  het_explain e = fixture();
  char *out = (char *)"untouched";
  ck_assert_int_eq(het_explain_format(&e, "xml", &out), HET_ERR_INVALID_ARGUMENT);
  ASSERT_HAS(het_last_error(), "'xml'");
  ck_assert_str_eq(out, "untouched");
  ck_assert_int_eq(het_explain_format(&e, "JSON", &out), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_explain_format(NULL, "json", &out), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_explain_format(&e, NULL, &out), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_explain_format(&e, "json", NULL), HET_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_inconsistent_report_refused) {
  het_explain e = fixture();
  het_explain_edge bad = {0, 9, "ghost", 4};
  e.edges = &bad;
  e.n_edges = 1;
  char *out = NULL;
  ck_assert_int_eq(het_explain_format(&e, "dot", &out), HET_ERR_INVALID_ARGUMENT);
  ASSERT_HAS(het_last_error(), "'ghost'");
  ck_assert_ptr_null(out);
  e = fixture();
  e.n_subgraphs = 2; /* node cast_t is in subgraph 2 */
  ck_assert_int_eq(het_explain_format(&e, "text", &out), HET_ERR_INVALID_ARGUMENT);
  ASSERT_HAS(het_last_error(), "'topk'");
}
END_TEST

START_TEST(test_empty_report) {
  het_explain e = {0};
  const char *formats[] = {"text", "json", "dot", "html"};
  for (int f = 0; f < 4; f++) {
    char *out = render(&e, formats[f]);
    if (f == 1)
      ck_assert_msg(json_valid(out), "%.2000s", out);
    free(out);
  }
}
END_TEST

/* 5000 nodes in a chain alternating providers: buffers grow, JSON stays
 * valid, every node and crossing edge is there. */
START_TEST(test_large_report) {
  enum { N = 5000 };
  het_explain_node *n = calloc(N, sizeof *n);
  het_explain_edge *ed = calloc(N, sizeof *ed);
  het_explain_subgraph *sg = calloc(N, sizeof *sg);
  char(*names)[16] = calloc(N, 16);
  ck_assert(n && ed && sg && names);
  for (int i = 0; i < N; i++) {
    snprintf(names[i], 16, "node%d", i);
    n[i] = (het_explain_node){names[i], "Add", i % 2 ? "emu" : "cpu", "r",
                              i, 1e-6, NULL, 0, NULL, 0, -1, "fp32"};
    sg[i] = (het_explain_subgraph){n[i].provider, 1, 1e-6};
    ed[i] = (het_explain_edge){i > 0 ? i - 1 : 0, i, names[i], 64};
  }
  het_explain e = {.model = "big", .algorithm = "cost", .n_nodes = N,
                   .nodes = n, .n_edges = N - 1, .edges = ed + 1,
                   .n_subgraphs = N, .subgraphs = sg};
  char *j = render(&e, "json");
  ck_assert(json_valid(j));
  ck_assert_int_eq(count_of(j, "\"op_type\":"), N);
  ck_assert_int_eq(count_of(j, "\"crosses_device\":true"), N - 1);
  free(j);
  char *d = render(&e, "dot");
  ck_assert_int_eq(count_of(d, "label=\"64 B\""), N - 1);
  ASSERT_HAS(d, "n4998 -> n4999");
  free(d);
  free(n);
  free(ed);
  free(sg);
  free(names);
}
END_TEST

/* With node times: each compute node's estimate, measured time and their
 * ratio in that order, "-" where none was measured, and the totals over
 * the measured nodes (conv1: estimate 500 us, measured 2 ms; topk:
 * estimate 50 us, measured 25 us; relu1 not measured). */
START_TEST(test_node_times_columns) {
  het_explain e = fixture();
  het_explain_node n[5];
  memcpy(n, fx_nodes, sizeof n);
  for (int i = 0; i < 5; i++)
    n[i].model_seconds = n[i].est_seconds;
  n[0].est_seconds = n[0].measured_seconds = 2e-3;
  n[3].est_seconds = n[3].measured_seconds = 25e-6;
  e.nodes = n;
  e.node_times = "times.tsv";
  e.n_compute = 3;
  e.n_measured = 2;
  e.measured_total = 2.025e-3;
  e.model_total = 0.55e-3;
  char *t = render(&e, "text");
  char line[512];
  line_with(t, "  estimate    measured  est/meas", line, sizeof line);
  ck_assert_msg(strstr(line, "placed by") > strstr(line, "est/meas"), "%s",
                line);
  line_with(t, fx_nodes[0].reason, line, sizeof line);
  ASSERT_HAS(line, "  500.00 us     2.00 ms      0.25  cost");
  line_with(t, fx_nodes[3].reason, line, sizeof line);
  ASSERT_HAS(line, "   50.00 us    25.00 us      2.00  rule 1");
  line_with(t, fx_nodes[1].reason, line, sizeof line);
  ASSERT_HAS(line, "  100.00 us           -         -  ");
  ASSERT_HAS(t, "node times (times.tsv): 2 of 3 compute nodes measured on "
                "their provider; their estimate 550.00 us vs measured "
                "2.02 ms (estimate / measured 0.27); placement used the "
                "measured times (the estimate for a node without one)\n");
  free(t);
  char *j = render(&e, "json");
  ck_assert(json_valid(j));
  ASSERT_HAS(j, "\"est_seconds\":0.002,\"boundary\":null,\"bytes\":0,"
                "\"estimate_seconds\":0.0005,\"measured_seconds\":0.002}");
  ASSERT_HAS(j, "\"estimate_seconds\":0.0001,\"measured_seconds\":null}");
  ASSERT_HAS(j, "\"node_times\": {\"file\":\"times.tsv\",\"measured_nodes\":2,"
                "\"compute_nodes\":3,\"estimate_seconds\":0.00055,"
                "\"measured_seconds\":0.002025,\"estimate_over_measured\":");
  ASSERT_HAS(j, "\"placement_used\":\"measured\"}");
  free(j);
  char *h = render(&e, "html");
  ASSERT_HAS(h, "<th>estimate</th><th>measured</th><th>estimate / measured"
                "</th><th>placed by</th>");
  ASSERT_HAS(h, "<td class=\"n\" data-v=\"0.0005\">500.00 us</td>"
                "<td class=\"n\" data-v=\"0.002\">2.00 ms</td>"
                "<td class=\"n\" data-v=\"0.25\">0.25</td>");
  ASSERT_HAS(h, "<p>node times (times.tsv): 2 of 3 compute nodes measured");
  free(h);
  char *d = render(&e, "dot");
  ASSERT_HAS(d, "on emu, 2.00 ms (estimate 500.00 us, measured 2.00 ms): ");
  ASSERT_HAS(d, "\\nnode times (times.tsv): 2 of 3 compute nodes measured");
  free(d);
  /* without a node-times file: one estimate column, no node_times */
  e.node_times = NULL;
  t = render(&e, "text");
  ck_assert_ptr_null(strstr(t, "measured"));
  line_with(t, fx_nodes[0].reason, line, sizeof line);
  ASSERT_HAS(line, "   2.00 ms  cost");
  free(t);
  j = render(&e, "json");
  ck_assert_ptr_null(strstr(j, "estimate_seconds"));
  ASSERT_HAS(j, "\"node_times\": null,");
  free(j);
}
END_TEST

static Suite *explain_suite(void) {
  Suite *s = suite_create("explain");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_text_shows_everything);
  tcase_add_test(core, test_text_comparison_signs);
  tcase_add_test(core, test_text_boundary_from_host);
  tcase_add_test(core, test_json_valid_and_complete);
  tcase_add_test(core, test_json_escapes_names);
  tcase_add_test(core, test_json_validator_rejects);
  tcase_add_test(core, test_dot_nodes_colours_clusters_edges);
  tcase_add_test(core, test_dot_escapes_and_palette);
  tcase_add_test(core, test_html_self_contained);
  tcase_add_test(core, test_html_escapes);
  tcase_add_test(core, test_node_times_columns);
  suite_add_tcase(s, core);
  TCase *limits = tcase_create("limits");
  tcase_add_test(limits, test_empty_report);
  tcase_add_test(limits, test_large_report);
  suite_add_tcase(s, limits);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_unknown_format_named);
  tcase_add_test(errors, test_inconsistent_report_refused);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(explain_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

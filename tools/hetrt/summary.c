/* summary.c — human-readable reports of the `hetrt` command line: shapes,
 * per-output statistics (min/max/mean, first values) and the placement of
 * nodes on providers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/dtype.h"

#define CLI_FIRST_VALUES 8
#define CLI_MAX_PROVIDERS 16

static void cli_format_dims(const int64_t *dims, const char *const *names, int rank,
                            char *buf, size_t cap) {
  if (rank < 0) {
    snprintf(buf, cap, "[?]");
    return;
  }
  size_t off = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < rank && off < cap; d++) {
    const char *sep = d ? "," : "";
    if (dims[d] >= 0)
      off += (size_t)snprintf(buf + off, cap - off, "%s%lld", sep, (long long)dims[d]);
    else
      off += (size_t)snprintf(buf + off, cap - off, "%s%s", sep,
                              names && names[d] ? names[d] : "?");
  }
  if (off < cap)
    snprintf(buf + off, cap - off, "]");
}

void cli_format_desc_shape(const het_value_desc *d, char *buf, size_t cap) {
  cli_format_dims(d->dims, d->dim_names, d->rank, buf, cap);
}

void cli_format_tensor_shape(const het_tensor *t, char *buf, size_t cap) {
  int64_t dims[HET_MAX_RANK];
  int rank = het_tensor_get_dims(t, dims, HET_MAX_RANK);
  cli_format_dims(dims, NULL, rank, buf, cap);
}

static void cli_print_value(FILE *f, het_dtype dt, const void *data, int64_t i) {
  if (het_dtype_is_float(dt))
    fprintf(f, " %.6g", het_dtype_load_f64(dt, data, i));
  else if (dt == HET_DTYPE_UINT64)
    fprintf(f, " %llu", (unsigned long long)het_dtype_load_i64(dt, data, i));
  else
    fprintf(f, " %lld", (long long)het_dtype_load_i64(dt, data, i));
}

void cli_print_tensor_summary(FILE *f, const char *label, const char *name,
                              const het_tensor *t) {
  char shape[256];
  het_dtype dt = het_tensor_get_dtype(t);
  int64_t n = het_tensor_get_count(t);
  const void *data = het_tensor_get_data((het_tensor *)t);
  cli_format_tensor_shape(t, shape, sizeof shape);
  fprintf(f, "%s '%s': %s %s", label, name, het_dtype_str(dt), shape);
  bool numeric = het_dtype_size(dt) > 0 && dt != HET_DTYPE_COMPLEX64 && dt != HET_DTYPE_COMPLEX128;
  if (!numeric || n == 0 || !data) {
    fprintf(f, "%s\n", n == 0 ? " (empty)" : "");
    return;
  }
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  int64_t nan = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = het_dtype_load_f64(dt, data, i);
    if (isnan(v)) {
      nan++;
      continue;
    }
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
    sum += v;
  }
  if (nan < n)
    fprintf(f, "  min=%.6g max=%.6g mean=%.6g", mn, mx, sum / (double)(n - nan));
  if (nan)
    fprintf(f, "  nan=%lld", (long long)nan);
  fprintf(f, "\n    values:");
  for (int64_t i = 0; i < n && i < CLI_FIRST_VALUES; i++)
    cli_print_value(f, dt, data, i);
  fprintf(f, "%s\n", n > CLI_FIRST_VALUES ? " ..." : "");
}

void cli_print_explain(FILE *f, const het_session *s) {
  char *text = NULL;
  if (het_session_explain(s, "text", &text) != HET_OK) {
    fprintf(stderr, "hetrt: explain: %s\n", het_last_error());
    return;
  }
  fputs(text, f);
  het_string_destroy(text);
}

void cli_print_warnings(const char *prog, const het_session *s) {
  for (size_t i = 0; i < het_session_get_warning_count(s); i++)
    fprintf(stderr, "%s: warning: %s\n", prog, het_session_get_warning(s, i));
}

void cli_print_placement(FILE *f, const het_session *s, bool verbose) {
  const char *prov[CLI_MAX_PROVIDERS];
  size_t count[CLI_MAX_PROVIDERS], n_prov = 0, n = het_session_get_node_count(s);
  fprintf(f, "placement: %zu nodes\n", n);
  for (size_t i = 0; i < n; i++) {
    het_node_placement p;
    if (het_session_get_placement(s, i, &p) != HET_OK) {
      fprintf(f, "  node %zu: %s\n", i, het_last_error());
      continue;
    }
    const char *pv = p.provider ? p.provider : "?";
    if (verbose && p.reason && p.reason[0])
      fprintf(f, "  %-32s %-20s -> %s  (%s)\n", p.name ? p.name : "?",
              p.op_type ? p.op_type : "?", pv, p.reason);
    else if (verbose)
      fprintf(f, "  %-32s %-20s -> %s\n", p.name ? p.name : "?", p.op_type ? p.op_type : "?", pv);
    size_t k = 0;
    while (k < n_prov && strcmp(prov[k], pv) != 0)
      k++;
    if (k == n_prov && n_prov < CLI_MAX_PROVIDERS) {
      prov[n_prov] = pv;
      count[n_prov++] = 0;
    }
    if (k < n_prov)
      count[k]++;
  }
  for (size_t k = 0; k < n_prov; k++)
    fprintf(f, "  %-8s %zu node%s\n", prov[k], count[k], count[k] == 1 ? "" : "s");
}

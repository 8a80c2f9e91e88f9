/* inputs.c — model inputs for the `hetrt` subcommands: TensorProto .pb
 * reading/writing, binding named and positional files to the session's
 * inputs, and generated inputs for benchmarking.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/dtype.h"
#include "onnx/loader.h"

#define CLI_MAX_PB ((size_t)1 << 31)

het_tensor *cli_read_pb(const char *path) {
  uint8_t *buf = NULL;
  size_t len = 0;
  het_tensor *t = NULL;
  het_status st = het_read_file(path, CLI_MAX_PB, &buf, &len);
  if (st == HET_OK)
    st = het_onnx_tensor_decode(buf, len, path, &t, NULL);
  free(buf);
  if (st != HET_OK) {
    fprintf(stderr, "hetrt: %s: %s (%s)\n", path, het_last_error(), het_status_str(st));
    return NULL;
  }
  return t;
}

bool cli_write_pb(const char *path, const het_tensor *t, const char *name) {
  uint8_t *buf = NULL;
  size_t len = 0;
  if (het_onnx_tensor_encode(t, name, &buf, &len) != HET_OK) {
    fprintf(stderr, "hetrt: encoding '%s': %s\n", name, het_last_error());
    return false;
  }
  FILE *f = fopen(path, "wb");
  bool ok = f && fwrite(buf, 1, len, f) == len;
  if (f && fclose(f) != 0)
    ok = false;
  free(buf);
  if (!ok)
    fprintf(stderr, "hetrt: cannot write %s\n", path);
  return ok;
}

void cli_inputs_clear(cli_inputs *in) {
  for (size_t i = 0; i < in->n; i++)
    het_tensor_destroy(in->tensors[i]);
  in->n = 0;
}

/* ---- generated inputs ---- */

static uint64_t cli_rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static double cli_rng_normal(uint64_t *s) {
  double u1 = ((double)(cli_rng_next(s) >> 11) + 1.0) / 9007199254740993.0;
  double u2 = (double)(cli_rng_next(s) >> 11) / 9007199254740992.0;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static het_tensor *cli_generate(const het_value_desc *d, const cli_common *c, uint64_t *rng) {
  int64_t dims[HET_MAX_RANK];
  if (d->rank < 0) {
    fprintf(stderr, "hetrt: input '%s' has unknown rank: give it with --input\n", d->name);
    return NULL;
  }
  for (int k = 0; k < d->rank; k++) {
    dims[k] = d->dims[k] >= 0 ? d->dims[k] : 1;
    for (size_t j = 0; d->dims[k] < 0 && d->dim_names[k] && j < c->n_dims; j++)
      if (strcmp(c->dim_name[j], d->dim_names[k]) == 0)
        dims[k] = c->dim_value[j];
  }
  /* --shape NAME=DIMS: the shape planned for is the one generated (the
   * library has checked it against the model already). */
  size_t len = strlen(d->name);
  for (size_t j = 0; j < c->n_shapes; j++) {
    const char *sh = c->shapes[j];
    if (strncmp(sh, d->name, len) != 0 || sh[len] != '=')
      continue;
    const char *p = sh + len + 1;
    for (int k = 0; k < d->rank && *p; k++) {
      char *end = NULL;
      dims[k] = strtoll(p, &end, 10);
      p = *end ? end + 1 : end;
    }
  }
  het_tensor *t = NULL;
  if (het_tensor_create(d->dtype, dims, d->rank, &t) != HET_OK) {
    fprintf(stderr, "hetrt: generating input '%s': %s\n", d->name, het_last_error());
    return NULL;
  }
  if (het_dtype_is_float(d->dtype)) {
    void *data = het_tensor_get_data(t);
    for (int64_t i = 0; i < het_tensor_get_count(t); i++)
      het_dtype_store_f64(d->dtype, data, i, cli_rng_normal(rng));
  }
  return t; /* integers and bools stay zero */
}

/* ---- binding ---- */

static bool cli_add_input(cli_inputs *out, const char *name, het_tensor *t) {
  if (!t)
    return false;
  out->names[out->n] = name;
  out->tensors[out->n++] = t;
  return true;
}

static bool cli_check_named(het_session *s, const cli_common *c) {
  size_t n_in = het_session_get_input_count(s);
  for (size_t j = 0; j < c->n_named; j++) {
    bool found = false;
    het_value_desc d;
    for (size_t k = 0; k < n_in && !found; k++)
      found = het_session_get_input(s, k, &d) == HET_OK && strcmp(d.name, c->named_name[j]) == 0;
    if (!found) {
      fprintf(stderr, "hetrt: --input %s: the model has no input named '%s' (inputs:",
              c->named_name[j], c->named_name[j]);
      for (size_t k = 0; k < n_in; k++)
        if (het_session_get_input(s, k, &d) == HET_OK)
          fprintf(stderr, " %s", d.name);
      fprintf(stderr, ")\n");
      return false;
    }
  }
  return true;
}

static const char *cli_named_file(const cli_common *c, const char *name) {
  for (size_t j = 0; j < c->n_named; j++)
    if (strcmp(c->named_name[j], name) == 0)
      return c->named_file[j];
  return NULL;
}

bool cli_bind_inputs(het_session *s, const cli_common *c, const char *const *positional,
                     size_t n_positional, bool generate, cli_inputs *out) {
  size_t n_in = het_session_get_input_count(s), next_pos = 0;
  uint64_t rng = c->seed ? c->seed : 0x9E3779B97F4A7C15ull;
  out->n = 0;
  if (n_in > CLI_MAX_ARGS || !cli_check_named(s, c)) {
    if (n_in > CLI_MAX_ARGS)
      fprintf(stderr, "hetrt: model has %zu inputs (max %d)\n", n_in, CLI_MAX_ARGS);
    return false;
  }
  for (size_t k = 0; k < n_in; k++) {
    het_value_desc d;
    if (het_session_get_input(s, k, &d) != HET_OK) {
      fprintf(stderr, "hetrt: input %zu: %s\n", k, het_last_error());
      goto fail;
    }
    const char *file = cli_named_file(c, d.name);
    if (!file && next_pos < n_positional)
      file = positional[next_pos++];
    if (file) {
      if (!cli_add_input(out, d.name, cli_read_pb(file)))
        goto fail;
    } else if (generate) {
      if (!cli_add_input(out, d.name, cli_generate(&d, c, &rng)))
        goto fail;
    } else {
      char shape[256];
      cli_format_desc_shape(&d, shape, sizeof shape);
      fprintf(stderr, "hetrt: missing input '%s' (%s %s): give --input %s=FILE.pb or a positional FILE.pb\n",
              d.name, het_dtype_str(d.dtype), shape, d.name);
      goto fail;
    }
  }
  if (next_pos < n_positional) {
    fprintf(stderr, "hetrt: %zu input files given but the model has only %zu inputs left to fill\n",
            n_positional, next_pos);
    goto fail;
  }
  return true;
fail:
  cli_inputs_clear(out);
  return false;
}

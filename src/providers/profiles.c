/* profiles.c — which provider a device profile configures: the value of
 * its top-level `provider:` key.  Providers parse the rest themselves.
 */
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "core/status.h"
#include "providers/registry.h"

/* Scans the top-level mapping for key; copies its scalar value. */
static het_status het_yaml_top_scalar(yaml_parser_t *p, const char *path,
                                      const char *key, char *out,
                                      size_t cap) {
  int depth = 0;
  bool want_value = false, is_key = true;
  for (;;) {
    yaml_event_t ev;
    if (!yaml_parser_parse(p, &ev))
      return het_error(HET_ERR_INVALID_ARGUMENT, "%s:%zu: %s", path,
                       p->problem_mark.line + 1,
                       p->problem ? p->problem : "YAML syntax error");
    yaml_event_type_t type = ev.type;
    if (type == YAML_STREAM_END_EVENT) {
      yaml_event_delete(&ev);
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "%s: no top-level '%s:' key", path, key);
    }
    if (type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT) {
      if (depth == 1 && !is_key) {
        is_key = true; /* a nested value of some key */
        want_value = false;
      }
      depth++;
    } else if (type == YAML_MAPPING_END_EVENT ||
               type == YAML_SEQUENCE_END_EVENT) {
      depth--;
    } else if (type == YAML_SCALAR_EVENT && depth == 1) {
      const char *v = (const char *)ev.data.scalar.value;
      if (want_value) {
        bool fits = strlen(v) < cap;
        if (fits)
          strcpy(out, v);
        yaml_event_delete(&ev);
        return fits ? HET_OK
                    : het_error(HET_ERR_INVALID_ARGUMENT,
                                "%s: '%s' value too long", path, key);
      }
      if (is_key)
        want_value = strcmp(v, key) == 0;
      is_key = !is_key;
    }
    yaml_event_delete(&ev);
  }
}

het_status het_profile_provider(const char *path, char *name, size_t cap) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return het_error(HET_ERR_IO, "device profile '%s': cannot open", path);
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p)) {
    fclose(f);
    return het_error(HET_ERR_OUT_OF_MEMORY, "device profile: out of memory");
  }
  yaml_parser_set_input_file(&p, f);
  het_status st = het_yaml_top_scalar(&p, path, "provider", name, cap);
  yaml_parser_delete(&p);
  fclose(f);
  return st;
}

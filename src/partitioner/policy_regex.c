/* policy_regex.c — what a policy's name_regex may cost before regcomp sees
 * it.  glibc compiles a POSIX extended regex into a tree in which every
 * '+' and every {n,m} copies the tree of what it repeats (n or m times),
 * so stacked or nested repeats grow it exponentially: "at++++...+" with
 * 27 '+' asked for 1.5 GB (fuzz_policy's finding).  The estimate below
 * walks the pattern once, multiplying the size of each repeated item by
 * its copies, and refuses patterns whose tree would pass a bound far
 * above any sensible node-name pattern.  Anchors are costlier still: an
 * anchor (^ $ \b \B \< \> \` \') under several stacked or nested
 * repeats makes regcomp's closure computation exponential long before
 * the tree is large: "(^|/)++++f" compiled in 7 ms, "(^|/)+++++f" in
 * 17 s, "(\b|/)++++x" in more than 20 s (fuzz_policy's finding), so an
 * anchor may sit under at most HET_REGEX_MAX_ANCHOR_REPEATS repeats.  So
 * may an item that can match nothing ((), x*, x?, (a|)): with an anchor
 * anywhere before it, "^()++++x" compiled in 7 ms, "^()+++++x" and
 * "^a*+++++x" in 12 s (CI's fuzz_policy, 2026-12-07: "(^()+++++++)tion").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partitioner/policy.h"

/* Tree nodes a pattern may expand to, and the longest pattern. */
#define HET_REGEX_MAX_NODES 20000.0
#define HET_REGEX_MAX_LENGTH 1024
#define HET_REGEX_MAX_DEPTH 64
#define HET_REGEX_MAX_ANCHOR_REPEATS 2

/* Whether the item at p is an anchor (outside a bracket expression). */
static bool het_regex_anchor(const char *p) {
  return *p == '^' || *p == '$' ||
         (p[0] == '\\' && p[1] && strchr("bB<>`'", p[1]));
}

/* The end of the bracket expression starting at p ('['), or NULL. */
static const char *het_bracket_end(const char *p) {
  p++;
  if (*p == '^')
    p++;
  if (*p == ']')
    p++; /* a leading ']' is a member */
  while (*p && *p != ']') {
    if (p[0] == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
      const char *close = strchr(p + 2, p[1]);
      if (!close || close[1] != ']')
        return NULL;
      p = close + 2;
    } else {
      p++;
    }
  }
  return *p ? p : NULL;
}

/* Copies made by the interval at p ('{'), *end after it, *least its least
 * count; 0 when p does not start an interval ({n}, {n,}, {n,m}). */
static double het_interval(const char *p, const char **end, long *least) {
  char *e;
  long lo = strtol(p + 1, &e, 10);
  if (e == p + 1 || lo < 0)
    return 0;
  long hi = lo;
  if (*e == ',') {
    char *e2;
    hi = strtol(e + 1, &e2, 10);
    if (e2 == e + 1)
      hi = lo + 1; /* {n,}: n copies and a star */
    e = e2;
  }
  if (*e != '}')
    return 0;
  *end = e + 1;
  *least = lo;
  double copies = (double)(hi > lo ? hi : lo);
  return copies < 1 ? 1 : copies;
}

bool het_policy_regex_bounded(const char *pattern, char *why, size_t cap) {
  size_t len = strlen(pattern);
  if (len > HET_REGEX_MAX_LENGTH) {
    snprintf(why, cap, "longer than %d characters", HET_REGEX_MAX_LENGTH);
    return false;
  }
  /* per open group: nodes so far, and the size of its last item; the
   * most repeats over an anchor in it, and over one in its last item
   * (-1: no anchor) */
  double total[HET_REGEX_MAX_DEPTH + 1] = {0}, last[HET_REGEX_MAX_DEPTH + 1] = {0};
  int anch[HET_REGEX_MAX_DEPTH + 1], anch_last[HET_REGEX_MAX_DEPTH + 1];
  anch[0] = anch_last[0] = -1;
  /* per open group, whether the current alternative can match nothing
   * (so far, and before its last item), whether an earlier one can, the
   * repeats over the last item since it could (-1: it cannot), and the
   * most over any such item in the group (what the group carries out) */
  bool alt_null[HET_REGEX_MAX_DEPTH + 1], pre_null[HET_REGEX_MAX_DEPTH + 1],
      any_null[HET_REGEX_MAX_DEPTH + 1];
  int null_last[HET_REGEX_MAX_DEPTH + 1], null_max[HET_REGEX_MAX_DEPTH + 1];
  alt_null[0] = pre_null[0] = true;
  any_null[0] = false;
  null_last[0] = -1;
  null_max[0] = 0;
  int depth = 0;
  for (const char *p = pattern; *p;) {
    double copies = 0;
    long least = 1; /* a repeat's least count: 0 lets its item match nothing */
    bool item = false, item_null = false; /* an item ends here */
    int item_repeats = 0; /* repeats over it already, when it can match nothing */
    const char *next = p + 1;
    if (*p == '(') {
      if (depth == HET_REGEX_MAX_DEPTH) {
        snprintf(why, cap, "groups nested deeper than %d", HET_REGEX_MAX_DEPTH);
        return false;
      }
      depth++;
      total[depth] = last[depth] = 0;
      anch[depth] = anch_last[depth] = -1;
      alt_null[depth] = pre_null[depth] = true;
      any_null[depth] = false;
      null_last[depth] = -1;
      null_max[depth] = 0;
    } else if (*p == ')' && depth > 0) {
      double size = total[depth] > 1 ? total[depth] : 1;
      int a = anch[depth];
      item_null = any_null[depth] || alt_null[depth];
      item_repeats = null_max[depth];
      depth--;
      total[depth] += size;
      last[depth] = size;
      anch_last[depth] = a;
      anch[depth] = a > anch[depth] ? a : anch[depth];
      item = true;
    } else if (*p == '|') {
      last[depth] = 0;
      anch_last[depth] = -1;
      any_null[depth] = any_null[depth] || alt_null[depth];
      alt_null[depth] = pre_null[depth] = true;
      null_last[depth] = -1;
    } else if (*p == '+') {
      copies = 2;
    } else if (*p == '*' || *p == '?') {
      copies = 1;
      least = 0;
    } else if (*p == '{' && (copies = het_interval(p, &next, &least)) > 0) {
      ;
    } else {
      const char *end = *p == '[' ? het_bracket_end(p) : NULL;
      next = end ? end + 1 : p + (*p == '\\' && p[1] ? 2 : 1);
      total[depth] += 1;
      last[depth] = 1;
      anch_last[depth] = het_regex_anchor(p) ? 0 : -1;
      if (anch_last[depth] == 0 && anch[depth] < 0)
        anch[depth] = 0;
      item = true;
      item_null = anch_last[depth] == 0; /* an anchor matches no character */
    }
    if (item) {
      pre_null[depth] = alt_null[depth];
      alt_null[depth] = pre_null[depth] && item_null;
      null_last[depth] = item_null ? item_repeats : -1;
    }
    if (copies > 0 && null_last[depth] >= 0 &&
        ++null_last[depth] > HET_REGEX_MAX_ANCHOR_REPEATS &&
        anch_last[depth] < 0) {
      snprintf(why, cap, "an item that can match nothing ((), x*, x?, ...) "
               "under more than %d stacked or nested repeats",
               HET_REGEX_MAX_ANCHOR_REPEATS);
      return false;
    }
    if (copies > 0 && least == 0 && null_last[depth] < 0) {
      null_last[depth] = 0; /* x* and x?: from here on x can match nothing */
      alt_null[depth] = pre_null[depth];
    }
    if (null_last[depth] > null_max[depth])
      null_max[depth] = null_last[depth];
    if (copies > 0) { /* the last item, copied (+1: the repeat's node) */
      double grown = last[depth] * copies + 1;
      total[depth] += grown - last[depth];
      last[depth] = grown;
      if (anch_last[depth] >= 0 &&
          ++anch_last[depth] > HET_REGEX_MAX_ANCHOR_REPEATS) {
        snprintf(why, cap, "an anchor (^, $, \\b, ...) under more than %d "
                 "stacked or nested repeats", HET_REGEX_MAX_ANCHOR_REPEATS);
        return false;
      }
      if (anch_last[depth] > anch[depth])
        anch[depth] = anch_last[depth];
    }
    if (total[depth] > HET_REGEX_MAX_NODES) {
      snprintf(why, cap, "its repeats would expand it past %.0f nodes",
               HET_REGEX_MAX_NODES);
      return false;
    }
    p = next;
  }
  return true;
}

/* session_regime.h — the shape regimes of a session (session_regime.c):
 * what reports and traces read of them.  Fields of a regime or a choice
 * never change once it is counted in n_regimes / n_choices (read those
 * counts under lock).
 */
#ifndef HET_SESSION_SESSION_REGIME_H
#define HET_SESSION_SESSION_REGIME_H

#include <pthread.h>
#include <stdint.h>

#include "report/explain.h"
#include "session/session.h"

#define HET_REGIME_KEY 32      /* open dims a key tells apart */
#define HET_REGIME_CHOICES 64  /* keys remembered; later ones take the
                                  regime of the nearest key */

/* Per open input dim, in input order: floor(log2(dim)) (-1 for 0); an
 * input of open rank adds its rank first. */
typedef struct het_regime_key {
  int n;
  int16_t b[HET_REGIME_KEY];
} het_regime_key;

typedef struct het_regime {
  het_session *session;   /* NULL for regime 0: the session itself */
  char shapes[256];       /* what it was planned for */
  long run;               /* the run that made it (0: creation) */
  int from;               /* the regime that run would have used */
  double est_before;      /* from's estimate at these shapes (seconds) */
  double est_after;       /* this regime's own */
  int n_moved;            /* model nodes placed unlike in from */
  char moved[512];        /* "conv1 emu->cpu, ..." (the first 8) */
  bool stored;            /* loaded from the plan file */
} het_regime;

/* What a key's first run decided. */
typedef struct het_regime_choice {
  het_regime_key key;
  char shapes[256];       /* that run's shapes */
  long run;               /* its number among the session's runs */
  double at;              /* het_clock_seconds() when it started */
  double seconds;         /* time the evaluation took */
  int kept;               /* the best existing regime at these shapes */
  double est_kept;        /* its estimate at these shapes */
  double est_best;        /* a partition made for these shapes */
  int regime;             /* the regime runs of this key use */
  const char *why;        /* "new regime", "kept: ..." (static) */
  char failure[256];      /* why re-planning failed, or "" */
} het_regime_choice;

struct het_regimes {
  pthread_mutex_t lock;   /* n_regimes, n_choices, runs */
  pthread_mutex_t build;  /* one evaluation at a time */
  bool stored;            /* the regimes a plan file stores: no new ones */
  double gain;            /* replan_gain */
  int max;                /* max_regimes (regime 0 included) */
  long runs;
  bool base_keyed;        /* regime 0 was planned for given shapes */
  het_regime_key base_key;
  char base_hints[200];
  int n_regimes;
  het_regime regimes[HET_MAX_REGIMES];
  int n_choices;
  het_regime_choice choices[HET_REGIME_CHOICES];
};
typedef struct het_regimes het_regimes;

/* The regimes and choices of s into e (strings borrowed from s; arrays
 * from a); nothing when s keeps one partition. */
het_status het_regimes_explain(const het_session *s, het_arena *a,
                               het_explain *e);

#endif

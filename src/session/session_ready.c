/* session_ready.c — compilation after creation.  A session loaded from a
 * plan returns from creation once its graph is placed; its compute steps
 * are compiled (the providers' blobs restored, weights prepared) and its
 * static signature planned (and the sessions of the plan's further shape
 * regimes made) on a thread of its own, and every entry point
 * that needs compiled steps (runs, reports, plan saving, planned peaks)
 * first waits for it through het_session_ready.  The thread first checks
 * the hash of the plan's weights, which creation left unread.  A failure there is the
 * status of every such call, its message restated on the caller's thread.
 * Invariant: the thread is the only one touching the builds and the
 * session arena until het_session_ready has seen it finish.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/status.h"
#include "session/session_aot.h"
#include "session/session_build.h"

struct het_ready {
  pthread_mutex_t lock;
  pthread_t thread;
  bool joined;
  het_status status;
  char message[1024];
};

static void *het_ready_main(void *arg) {
  het_session *s = arg;
  het_status st = het_plan_file_verify(s->aot->file); /* before any use */
  for (int k = 0; k < s->n_builds && st == HET_OK; k++)
    st = het_build_compile(s, s->builds[k]);
  if (st == HET_OK)
    st = het_session_plan_check(s);
  if (st == HET_OK)
    st = het_regimes_load(s);
  s->ready->status = st;
  if (st != HET_OK)
    snprintf(s->ready->message, sizeof s->ready->message, "%s",
             het_last_error());
  return NULL;
}

het_status het_session_start_compile(het_session *s) {
  het_ready *r = calloc(1, sizeof *r);
  if (!r)
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  pthread_mutex_init(&r->lock, NULL);
  s->ready = r;
  if (pthread_create(&r->thread, NULL, het_ready_main, s) != 0) {
    r->joined = true; /* no thread: compile here */
    het_ready_main(s);
    if (r->status != HET_OK)
      return het_error(r->status, "%s", r->message);
  }
  return HET_OK;
}

het_status het_session_ready(const het_session *s) {
  het_ready *r = s->ready;
  if (!r)
    return HET_OK;
  pthread_mutex_lock(&r->lock);
  if (!r->joined) {
    pthread_join(r->thread, NULL);
    r->joined = true;
  }
  pthread_mutex_unlock(&r->lock);
  return r->status == HET_OK ? HET_OK
                             : het_error(r->status, "%s", r->message);
}

void het_session_ready_destroy(het_session *s) {
  het_ready *r = s->ready;
  if (!r)
    return;
  if (!r->joined)
    pthread_join(r->thread, NULL);
  pthread_mutex_destroy(&r->lock);
  free(r);
  s->ready = NULL;
}

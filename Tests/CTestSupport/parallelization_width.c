// How many test cases swift-testing runs at once in this test process. By default it starts
// every one of them (about 1,090) at once, and their work queues on the cooperative pool, which
// has one thread per core: on a 2-core machine a test's timer or wake-up then waited behind the
// others' work for more than the 30 s liveness bounds of `MetricsFileTests` and
// `LifecycleTests` (CI of 2026-11-30 23:17 UTC failed so; in a local run the same two tests
// took 32.7 and 35.7 s). Bounded to 4 test cases per core (2 cores, idle, one run each): the
// two took 1.5 and 2.8 s with the variable set by hand, 23.5 and 26.5 s in a run with this
// constructor; the whole run 82-84 s instead of 63 s. Less queueing, not none: those two tests
// also wait up to 120 s now.
//
// A constructor, so that plain `swift test` (the README's command) gets the bound, set before
// swift-testing reads its environment; an explicit `SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH`
// (the sanitizer step's 4) is kept.
#include "CTestSupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const width_variable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH";

__attribute__((constructor)) static void ctestsupport_bound_parallelization(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  char width[32];
  snprintf(width, sizeof width, "%ld", 4 * cores);
  setenv(width_variable, width, 0);
}

long ctestsupport_parallelization_bound(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return 4 * (cores < 1 ? 1 : cores);
}

#ifndef C_TEST_SUPPORT_H
#define C_TEST_SUPPORT_H

/// Whether `readdir` of a `/proc/self/fd` stream returns a whole `struct dirent` of the calling
/// thread (see process_run_guard.c): 1, or 0 under a sanitizer; -1 if the directory cannot be
/// opened.
int ctestsupport_guards_process_run(void);

/// The number of test cases swift-testing runs at once in the test process unless
/// `SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH` says otherwise: 4 per core (see
/// parallelization_width.c, whose constructor sets that variable).
long ctestsupport_parallelization_bound(void);

#endif

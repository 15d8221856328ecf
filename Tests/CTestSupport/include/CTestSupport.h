#ifndef C_TEST_SUPPORT_H
#define C_TEST_SUPPORT_H

/// Whether `readdir` of a `/proc/self/fd` stream returns a whole `struct dirent` of the calling
/// thread (see process_run_guard.c): 1, or 0 under a sanitizer; -1 if the directory cannot be
/// opened.
int ctestsupport_guards_process_run(void);

#endif

#ifndef C_TEST_SUPPORT_H
#define C_TEST_SUPPORT_H

/// The M_MMAP_THRESHOLD the test process runs with (set before main; see process_run_guard.c).
int ctestsupport_mmap_threshold(void);

/// Whether a directory stream of `/proc/self/fd` (what Foundation's `Process.run()` reads) is a
/// mapping of its own: its address one malloc header past a page boundary, as glibc's mmapped
/// chunks are. 1 or 0; -1 when the directory cannot be opened.
int ctestsupport_directory_stream_is_mapped(void);

#endif

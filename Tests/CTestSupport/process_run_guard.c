// Works around a crash of Foundation's `Process.run()` on Linux (swift-corelibs-foundation
// #5472, fixed upstream after Swift 6.3.1): `findMaximumOpenFromProcSelfFD()` copies the whole
// 256-byte `d_name` of every `/proc/self/fd` entry `readdir` returns, reading past the end of
// glibc's directory buffer; when that buffer ends near an unmapped page (the top of a malloc
// heap), the test process dies with "Bad pointer dereference" in `Process.run() + 6428` (it
// did, in CI's `swift test`, 2026-11-29). The tests start hundreds of processes with
// `Process`, from many threads.
//
// glibc allocates a directory stream (its 32 KiB buffer) with malloc; with the mmap threshold
// at 32 KiB every such stream is a mapping of its own, rounded up to whole pages, so at least
// 4 KiB past the buffer's end stay mapped. This runs before main, in the test process only.
#include "CTestSupport.h"

#include <dirent.h>
#include <malloc.h>
#include <stdint.h>
#include <unistd.h>

enum { mmap_threshold = 32 * 1024 };

__attribute__((constructor)) static void guard_foundation_process_run(void) {
  mallopt(M_MMAP_THRESHOLD, mmap_threshold);
}

int ctestsupport_mmap_threshold(void) { return mmap_threshold; }

int ctestsupport_directory_stream_is_mapped(void) {
  DIR *stream = opendir("/proc/self/fd");
  if (stream == NULL) return -1;
  uintptr_t address = (uintptr_t)stream;
  closedir(stream);
  return address % (uintptr_t)sysconf(_SC_PAGESIZE) == 2 * sizeof(size_t);
}

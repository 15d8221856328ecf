// Works around a crash of Foundation's `Process.run()` on Linux (swift-corelibs-foundation
// #5472, fixed upstream after Swift 6.3.1). To close the child's descriptors it scans
// `/proc/self/fd` and copies the whole 256-byte `d_name` of every entry `readdir` returns. An
// entry is only as long as its name (24 bytes here), so with more than about 1,350 descriptors
// open, glibc's 32 KiB directory buffer is full and the copy of its last entries reads past the
// buffer's end; where that end is the end of a heap mapping, the test process dies with "Bad
// pointer dereference" in `Process.run() + 6428`. The test process does reach that many
// descriptors (1,292-1,364 measured: some 165 runtimes' stores open at once), and CI's
// `swift test` crashed so twice on 2026-11-29.
//
// So the test process, not the product, wraps `opendir`/`readdir`/`closedir` (exported from the
// test executable, see Package.swift, so that libFoundation's calls reach them): an entry read
// from a stream of `/proc/self/fd` is copied into a whole `struct dirent` of the calling thread,
// which a 256-byte copy of `d_name` cannot overrun. Every other stream is left alone. Not under
// a sanitizer, whose runtime intercepts these calls itself (and whose allocator keeps the
// memory after a buffer mapped).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CTestSupport.h"

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CTESTSUPPORT_SANITIZED 1
#endif
#endif

#ifndef CTESTSUPPORT_SANITIZED

enum { tracked_capacity = 64 };
static pthread_mutex_t tracked_lock = PTHREAD_MUTEX_INITIALIZER;
static DIR *tracked[tracked_capacity];
static __thread struct dirent whole_entry;

static void *next_symbol(const char *name) { return dlsym(RTLD_NEXT, name); }

static int is_tracked(DIR *stream) {
  int found = 0;
  pthread_mutex_lock(&tracked_lock);
  for (int index = 0; index < tracked_capacity && !found; index++) found = tracked[index] == stream;
  pthread_mutex_unlock(&tracked_lock);
  return found;
}

static void set_tracked(DIR *old, DIR *new) {
  pthread_mutex_lock(&tracked_lock);
  for (int index = 0; index < tracked_capacity; index++) {
    if (tracked[index] == old) {
      tracked[index] = new;
      break;
    }
  }
  pthread_mutex_unlock(&tracked_lock);
}

DIR *opendir(const char *path) {
  DIR *(*real)(const char *) = (DIR * (*)(const char *)) next_symbol("opendir");
  DIR *stream = real(path);
  if (stream != NULL && strcmp(path, "/proc/self/fd") == 0) set_tracked(NULL, stream);
  return stream;
}

int closedir(DIR *stream) {
  int (*real)(DIR *) = (int (*)(DIR *))next_symbol("closedir");
  set_tracked(stream, NULL);
  return real(stream);
}

struct dirent *readdir(DIR *stream) {
  struct dirent *(*real)(DIR *) = (struct dirent * (*)(DIR *)) next_symbol("readdir");
  struct dirent *entry = real(stream);
  if (entry == NULL || !is_tracked(stream)) return entry;
  size_t length = entry->d_reclen < sizeof whole_entry ? entry->d_reclen : sizeof whole_entry;
  memset(&whole_entry, 0, sizeof whole_entry);
  memcpy(&whole_entry, entry, length);
  whole_entry.d_name[sizeof whole_entry.d_name - 1] = 0;
  return &whole_entry;
}

int ctestsupport_guards_process_run(void) {
  // Looked up as libFoundation's calls are bound: in the global scope, the executable first.
  DIR *(*open)(const char *) = (DIR * (*)(const char *)) dlsym(RTLD_DEFAULT, "opendir");
  struct dirent *(*read)(DIR *) = (struct dirent * (*)(DIR *)) dlsym(RTLD_DEFAULT, "readdir");
  int (*close)(DIR *) = (int (*)(DIR *))dlsym(RTLD_DEFAULT, "closedir");
  DIR *stream = open("/proc/self/fd");
  if (stream == NULL) return -1;
  struct dirent *entry = read(stream);
  int guarded = entry == &whole_entry;
  close(stream);
  return guarded;
}

#else

int ctestsupport_guards_process_run(void) { return 0; }

#endif

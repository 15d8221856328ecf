#include "CThreadSanitizer.h"

// Weak: without `-sanitize=thread` no runtime defines them, they resolve to null and the
// wrappers do nothing; with it, the ThreadSanitizer runtime linked into the binary defines them.
void __tsan_acquire(void *addr) __attribute__((weak));
void __tsan_release(void *addr) __attribute__((weak));

void cthreadsanitizer_acquired(const void *lock) {
  if (__tsan_acquire) {
    __tsan_acquire((void *)lock);
  }
}

void cthreadsanitizer_releasing(const void *lock) {
  if (__tsan_release) {
    __tsan_release((void *)lock);
  }
}

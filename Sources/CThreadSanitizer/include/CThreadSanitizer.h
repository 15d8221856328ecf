#ifndef C_THREAD_SANITIZER_H
#define C_THREAD_SANITIZER_H

/// Tells ThreadSanitizer that the calling thread has just acquired the lock at `lock`
/// (`__tsan_acquire`): what the last releasing thread did happens before what follows.
/// Does nothing when the process runs without ThreadSanitizer.
void cthreadsanitizer_acquired(const void *lock);

/// Tells ThreadSanitizer that the calling thread is about to release the lock at `lock`
/// (`__tsan_release`). Does nothing when the process runs without ThreadSanitizer.
void cthreadsanitizer_releasing(const void *lock);

#endif

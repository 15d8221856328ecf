import Backgrounder
import CSystemShims
import Locking
import SystemCalls

/// The daemon's memory housekeeping: it runs all day, so memory it used in a burst should go
/// back to the kernel instead of staying with the process (issue #11: RSS with 1,000 jobs).
package enum HeapTuning {
  /// The runtime whose store's page cache ``releaseIdleMemory()`` gives back too.
  private static let idleStore = Lock<Backgrounder?>(nil)

  /// Makes every thread allocate from malloc's main arena. glibc gives each thread that
  /// allocates its own arena (up to 8 per core), each keeping its free memory; an idle daemon
  /// gains nothing from that. Call it first in `main`, before any other thread starts.
  package static func useSingleArena() {
    _ = csystem_use_single_malloc_arena()
  }

  /// What the process does once it falls idle (the executor's quiet action, a second after the
  /// last work): ``releaseIdleMemory()`` on a short-lived thread of its own (`bg-idle-release`),
  /// since giving back the store's page cache waits for a commit in progress, which the
  /// executor's thread must not. The thread ends after it, not parked: the quiet action has just
  /// retired the parked ones (``SystemThread/retireParkedThreads()``).
  package static func releaseIdleMemorySoon() {
    try? SystemThread.detach(name: "bg-idle-release", parksAfter: false) { releaseIdleMemory() }
  }

  /// Gives back the store's page cache (while a runtime is set by
  /// ``releaseStoreMemoryWhenIdle(of:)``) and the heap's free memory (`malloc_trim(0)`), and
  /// unmaps the code and read-only data pages the process touched, clean pages of its files that
  /// the page cache keeps and the next wake-up maps again (a minor fault each 64 KiB). Without
  /// this the code used once at start-up, and the pages of each burst, stay resident all day.
  static func releaseIdleMemory() {
    // First the store's page cache, so that the heap's trim returns it too.
    idleStore.withLock { $0 }?.releaseStoreMemory()
    _ = csystem_release_free_heap()
    _ = csystem_release_file_pages()
  }

  /// Makes ``releaseIdleMemory()`` give back `runtime`'s store memory too (nil: none).
  static func releaseStoreMemoryWhenIdle(of runtime: Backgrounder?) {
    idleStore.withLock { $0 = runtime }
  }
}

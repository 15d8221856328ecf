import CSystemShims

/// The daemon's memory housekeeping: it runs all day, so memory it used in a burst should go
/// back to the kernel instead of staying with the process (issue #11: RSS with 1,000 jobs).
public enum HeapTuning {
  /// Makes every thread allocate from malloc's main arena. glibc gives each thread that
  /// allocates its own arena (up to 8 per core), each keeping its free memory; an idle daemon
  /// gains nothing from that. Call it first in `main`, before any other thread starts.
  public static func useSingleArena() {
    _ = csystem_use_single_malloc_arena()
  }

  /// Returns the heap's free memory to the kernel (`malloc_trim(0)`): after loading or
  /// reloading the config, whose parse trees and temporary strings are freed all at once.
  static func releaseFreeMemory() {
    _ = csystem_release_free_heap()
  }

  /// What the daemon does when it falls idle (started, reloaded, its last run ended): returns
  /// the heap's free memory, and unmaps the code and read-only data pages it touched — clean
  /// pages of its files, which the page cache keeps and the next wake-up maps again (a minor
  /// fault each 64 KiB). Without this the code used once at start-up stays resident all day.
  static func releaseIdleMemory() {
    _ = csystem_release_free_heap()
    _ = csystem_release_file_pages()
  }
}

import CSystemShims

/// The daemon's heap housekeeping: it runs all day, so memory freed in bursts should go back to
/// the kernel instead of staying in malloc's free lists (issue #11: RSS with 1,000 jobs).
enum HeapTuning {
  /// Returns the heap's free memory to the kernel (`malloc_trim(0)`): after loading or
  /// reloading the config, whose parse trees and temporary strings are freed all at once.
  static func releaseFreeMemory() {
    _ = csystem_release_free_heap()
  }
}

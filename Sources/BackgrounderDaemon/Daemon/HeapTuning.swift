import CSystemShims

/// The daemon's malloc settings: it runs all day with a few threads that allocate, so a small
/// heap matters more than allocation throughput (issue #11: RSS with 1,000 jobs).
enum HeapTuning {
  /// Arenas glibc's malloc may create. Its default (8 per core) gives most threads an arena of
  /// their own, each keeping freed memory: measured with 1,000 jobs, 2 arenas instead of ~14
  /// keep ~1.3 MiB less resident, with no measurable cost at the daemon's allocation rates.
  static let arenaLimit: Int32 = 2

  /// Caps the number of malloc arenas. Called first thing in the daemon: arenas already
  /// created stay, later ones are not.
  static func limitArenas() {
    _ = csystem_limit_malloc_arenas(arenaLimit)
  }

  /// Returns the heap's free memory to the kernel: after loading or reloading the config, whose
  /// parse trees and temporary strings are freed all at once.
  static func releaseFreeMemory() {
    _ = csystem_release_free_heap()
  }
}

import CTestSupport
import Foundation
import Testing

/// The test process's guard against Foundation's `Process.run()` over-read
/// (Tests/CTestSupport/process_run_guard.c).
@Suite struct ProcessRunGuardTests {
  /// The sanitizers bring allocators of their own, which ignore `mallopt`.
  static let plainMalloc =
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") == nil
    && dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") == nil

  @Test(
    "a directory stream is a mapping of its own, so a read past its buffer stays mapped",
    .enabled(if: plainMalloc, "a sanitizer's allocator ignores mallopt"))
  func directoryStreamsAreMapped() {
    #expect(ctestsupport_mmap_threshold() == 32 * 1024)
    for _ in 0..<20 { #expect(ctestsupport_directory_stream_is_mapped() == 1) }
  }
}

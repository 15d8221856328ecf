import FuzzSupport

/// SwiftPM links an executable with `main` aliased to `FuzzCapture_main`. The test is passed as a
/// closure: naming the `@_cdecl` function here made a debug build (one object per file) emit
/// its C entry `LLVMFuzzerTestOneInput` in this file too, a duplicate symbol at link time.
@_cdecl("FuzzCapture_main")
public func fuzzCaptureMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> Int32 {
  runFuzzer(argc, argv) { data, size in fuzzCapture(data, size) }
}

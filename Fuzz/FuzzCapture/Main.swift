import FuzzSupport

/// SwiftPM links an executable with `main` aliased to `FuzzCapture_main`.
@_cdecl("FuzzCapture_main")
public func fuzzCaptureMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> Int32 {
  runFuzzer(argc, argv, fuzzCapture)
}

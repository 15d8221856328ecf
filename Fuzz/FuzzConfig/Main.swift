import FuzzSupport

/// SwiftPM links an executable with `main` aliased to `FuzzConfig_main`.
@_cdecl("FuzzConfig_main")
public func fuzzConfigMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> Int32 {
  runFuzzer(argc, argv, fuzzConfig)
}

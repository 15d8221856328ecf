import FuzzSupport

/// SwiftPM links an executable with `main` aliased to `FuzzControl_main`.
@_cdecl("FuzzControl_main")
public func fuzzControlMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> Int32 {
  runFuzzer(argc, argv, fuzzControl)
}

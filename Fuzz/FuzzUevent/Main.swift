import FuzzSupport

/// SwiftPM links an executable with `main` aliased to `FuzzUevent_main`.
@_cdecl("FuzzUevent_main")
public func fuzzUeventMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> Int32 {
  runFuzzer(argc, argv, fuzzUevent)
}

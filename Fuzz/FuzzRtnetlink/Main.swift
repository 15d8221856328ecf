import FuzzSupport

/// SwiftPM links an executable with `main` aliased to `FuzzRtnetlink_main`.
@_cdecl("FuzzRtnetlink_main")
public func fuzzRtnetlinkMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> Int32 {
  runFuzzer(argc, argv, fuzzRtnetlink)
}

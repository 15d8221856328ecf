/// SwiftPM links an executable with `main` aliased to `FuzzRtnetlink_main`; it hands over to libFuzzer,
/// which calls `fuzzRtnetlink` with each input.
@_cdecl("FuzzRtnetlink_main")
public func fuzzRtnetlinkMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> Int32 {
  var argc = argc
  var argv = argv
  return runFuzzerDriver(&argc, &argv, fuzzRtnetlink)
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
  _ argc: UnsafeMutablePointer<Int32>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ test: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32
) -> Int32

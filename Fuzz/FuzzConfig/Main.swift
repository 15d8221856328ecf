/// SwiftPM links an executable with `main` aliased to `FuzzConfig_main`; it hands over to libFuzzer,
/// which calls `fuzzConfig` with each input.
@_cdecl("FuzzConfig_main")
public func fuzzConfigMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> Int32 {
  var argc = argc
  var argv = argv
  return runFuzzerDriver(&argc, &argv, fuzzConfig)
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
  _ argc: UnsafeMutablePointer<Int32>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ test: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32
) -> Int32

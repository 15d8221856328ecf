/// SwiftPM links an executable with `main` aliased to `FuzzControl_main`; it hands over to libFuzzer,
/// which calls `fuzzControl` with each input.
@_cdecl("FuzzControl_main")
public func fuzzControlMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> Int32 {
  var argc = argc
  var argv = argv
  return runFuzzerDriver(&argc, &argv, fuzzControl)
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
  _ argc: UnsafeMutablePointer<Int32>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ test: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32
) -> Int32

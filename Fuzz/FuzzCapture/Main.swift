/// SwiftPM links an executable with `main` aliased to `FuzzCapture_main`; it hands over to libFuzzer,
/// which calls `fuzzCapture` with each input.
@_cdecl("FuzzCapture_main")
public func fuzzCaptureMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
) -> Int32 {
  var argc = argc
  var argv = argv
  return runFuzzerDriver(&argc, &argv, fuzzCapture)
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
  _ argc: UnsafeMutablePointer<Int32>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ test: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32
) -> Int32

/// Hands a fuzz target's process over to libFuzzer, which then calls `test` with each input.
/// Each target's `main` (SwiftPM aliases it to `<Target>_main`) is a one-line call to this.
public func runFuzzer(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
  _ test: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32
) -> Int32 {
  var argc = argc
  var argv = argv
  return llvmFuzzerRunDriver(&argc, &argv, test)
}

@_silgen_name("LLVMFuzzerRunDriver")
private func llvmFuzzerRunDriver(
  _ argc: UnsafeMutablePointer<Int32>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ test: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32
) -> Int32

import CSystemShims

/// The running program's build ID (the linker's `NT_GNU_BUILD_ID` note): it changes with every
/// build whose code changes, and is the same for every process of one build.
public enum ProgramBuildID {
  /// Lowercase hexadecimal; nil when the program was linked without one.
  public static let hex: String? = {
    var bytes = [UInt8](repeating: 0, count: 64)
    let length = Int(csystem_program_build_id(&bytes, Int32(bytes.count)))
    guard length > 0 else { return nil }
    let digits: [UInt8] = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(length * 2)
    for byte in bytes[..<length] {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0xf)])
    }
    return String(decoding: text, as: UTF8.self)
  }()
}

/// Reading `/proc/self/mountinfo` (proc(5)): one line per mount, the fifth field its mount
/// point with space, tab, newline and backslash written as octal escapes (`\040`, `\011`,
/// `\012`, `\134`).
public enum MountInfo {
  /// The mount points `text` lists, unescaped, in the kernel's order. A line with fewer than
  /// five fields is skipped. Bytes that are not UTF-8 are replaced (U+FFFD): such a path can
  /// never equal a configured one.
  public static func mountPoints(_ text: some Collection<UInt8>) -> [String] {
    var points: [String] = []
    for line in text.split(separator: UInt8(ascii: "\n")) {
      let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5)
      guard fields.count >= 5 else { continue }
      points.append(String(decoding: unescape(fields[4]), as: UTF8.self))
    }
    return points
  }

  /// `field` with each `\ooo` (three octal digits) replaced by its byte.
  static func unescape(_ field: some Collection<UInt8>) -> [UInt8] {
    let bytes = Array(field)
    var result: [UInt8] = []
    result.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: "\\"), index + 3 < bytes.count,
        let value = octal(bytes[(index + 1)...(index + 3)])
      {
        result.append(value)
        index += 4
      } else {
        result.append(bytes[index])
        index += 1
      }
    }
    return result
  }

  private static func octal(_ digits: ArraySlice<UInt8>) -> UInt8? {
    var value = 0
    for digit in digits {
      guard (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(digit) else { return nil }
      value = value * 8 + Int(digit - UInt8(ascii: "0"))
    }
    return value <= 255 ? UInt8(value) : nil
  }
}

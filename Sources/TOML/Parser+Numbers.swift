/// Integers (decimal, `0x`, `0o`, `0b`, with underscores, 64-bit) and floats (fraction,
/// exponent, `inf`, `nan`).
extension Parser {
  mutating func parseNumber() throws(TOMLError) -> TOMLValue {
    let start = index
    let startPosition = markPosition()
    var negative = false
    if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
      negative = current == UInt8(ascii: "-")
      index += 1
    }
    if isAt("inf") || isAt("nan") {
      let isInfinity = current == UInt8(ascii: "i")
      index += 3
      if isInfinity { return .float(negative ? -.infinity : .infinity) }
      return .float(negative ? -.nan : .nan)
    }
    if index == start, current == UInt8(ascii: "0"),
      let radix = Self.radix(of: peek(1))
    {
      index += 2
      return .integer(try parseRadixInteger(radix, at: startPosition))
    }
    if let value = plainInteger(negative: negative) { return .integer(value) }
    let integerDigits = try digitRun(leadingZeros: false, what: "a number")
    var isFloat = false
    var digits = (negative ? "-" : "") + integerDigits
    if current == UInt8(ascii: ".") {
      index += 1
      digits += "." + (try digitRun(leadingZeros: true, what: "the fraction after '.'"))
      isFloat = true
    }
    if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
      index += 1
      digits += "e"
      if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
        digits.append(Character(Unicode.Scalar(bytes[index])))
        index += 1
      }
      digits += try digitRun(leadingZeros: true, what: "the exponent")
      isFloat = true
    }
    if isFloat {
      guard let value = Double(digits) else {
        throw error("invalid float \(digits)", at: startPosition)
      }
      return .float(value)
    }
    guard let value = Int64(digits) else {
      throw error(
        "integer \(digits) is out of range (-9223372036854775808 to 9223372036854775807)",
        at: startPosition)
    }
    return .integer(value)
  }

  /// The common case of a decimal integer without underscores, fraction or exponent, short
  /// enough not to overflow, read without building its text; nil (and `index` unmoved) for
  /// anything else, which the general path reads or rejects.
  private mutating func plainInteger(negative: Bool) -> Int64? {
    var end = index
    var value: Int64 = 0
    while end < bytes.count, Self.isDigit(bytes[end]) {
      value = value &* 10 &+ Int64(bytes[end] &- UInt8(ascii: "0"))
      end += 1
    }
    let count = end - index
    guard count > 0, count <= 18, count == 1 || bytes[index] != UInt8(ascii: "0") else {
      return nil
    }
    if end < bytes.count {
      switch bytes[end] {
      case UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
      default: break
      }
    }
    index = end
    return negative ? -value : value
  }

  private static func radix(of byte: UInt8?) -> Int64? {
    switch byte {
    case UInt8(ascii: "x"): 16
    case UInt8(ascii: "o"): 8
    case UInt8(ascii: "b"): 2
    default: nil
    }
  }

  /// Digits, single underscores between them allowed; returns them without underscores.
  /// Without `leadingZeros`, a number may not start with 0 unless it is just 0.
  private mutating func digitRun(leadingZeros: Bool, what: String) throws(TOMLError) -> String {
    guard let first = current, Self.isDigit(first) else { throw expected("a digit in \(what)") }
    let start = index
    var digits: [UInt8] = []
    while let byte = current {
      if Self.isDigit(byte) {
        digits.append(byte)
        index += 1
      } else if byte == UInt8(ascii: "_") {
        index += 1
        guard let next = current, Self.isDigit(next) else {
          throw error("an underscore in a number must be between two digits")
        }
      } else {
        break
      }
    }
    if !leadingZeros, first == UInt8(ascii: "0"), index - start > 1 {
      throw error(
        "leading zeros are not allowed in a decimal number", at: position(of: start))
    }
    return String(decoding: digits, as: UTF8.self)
  }

  /// The digits after `0x`, `0o` or `0b`: non-negative, at most Int64.max.
  private mutating func parseRadixInteger(
    _ radix: Int64, at start: TOMLPosition
  ) throws(TOMLError) -> Int64 {
    var value: Int64 = 0
    var sawDigit = false
    while let byte = current {
      if byte == UInt8(ascii: "_") {
        index += 1
        guard sawDigit, let next = current,
          Self.hexDigitValue(next).map({ Int64($0) < radix })
            == true
        else {
          throw error("an underscore in a number must be between two digits")
        }
        continue
      }
      guard let digit = Self.hexDigitValue(byte).map(Int64.init), digit < radix else { break }
      let (shifted, overflow) = value.multipliedReportingOverflow(by: radix)
      let (sum, overflowSum) = shifted.addingReportingOverflow(digit)
      guard !overflow, !overflowSum else {
        throw error("integer is out of range (at most 9223372036854775807)", at: start)
      }
      value = sum
      sawDigit = true
      index += 1
    }
    guard sawDigit else { throw expected("a digit after the base prefix") }
    return value
  }
}

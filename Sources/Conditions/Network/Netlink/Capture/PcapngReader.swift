/// The pcapng half of ``PcapReader``: section headers (either byte order), interface
/// descriptions (LINKTYPE_NETLINK only, any timestamp resolution), enhanced and simple packet
/// blocks with their comments; other blocks are skipped, as the format asks.
enum PcapngReader {
  private struct Interface {
    var linkType: UInt16
    var ticksPerSecond: Int64
  }

  private struct Cursor {
    let bytes: [UInt8]
    var swapped = false

    func u16(_ offset: Int) -> UInt16 {
      let value = bytes[...].loadUInt16(at: offset)
      return swapped ? value.byteSwapped : value
    }

    func u32(_ offset: Int) -> UInt32 {
      let value = bytes[...].loadUInt32(at: offset)
      return swapped ? value.byteSwapped : value
    }
  }

  static func records(in bytes: [UInt8]) throws(PcapError) -> [PcapRecord] {
    var cursor = Cursor(bytes: bytes)
    var interfaces: [Interface] = []
    var records: [PcapRecord] = []
    var offset = 0
    var number = 0
    while offset < bytes.count {
      number += 1
      guard bytes.count - offset >= 12 else {
        throw PcapError("block \(number): header truncated at byte \(offset)")
      }
      let type = cursor.u32(offset)
      if type == PcapFormat.blockSectionHeader {
        guard bytes.count - offset >= 28 else {
          throw PcapError("block \(number): section header truncated")
        }
        let magic = bytes[...].loadUInt32(at: offset + 8)
        switch magic {
        case PcapFormat.byteOrderMagic: cursor.swapped = false
        case PcapFormat.byteOrderMagic.byteSwapped: cursor.swapped = true
        default: throw PcapError("block \(number): bad byte-order magic")
        }
        interfaces = []
      }
      let length = Int(cursor.u32(offset + 4))
      guard length >= 12, length % 4 == 0, length <= bytes.count - offset else {
        throw PcapError(
          "block \(number): length \(length) is not a multiple of 4 within the "
            + "\(bytes.count - offset) bytes left")
      }
      guard Int(cursor.u32(offset + length - 4)) == length else {
        throw PcapError("block \(number): trailing length differs from \(length)")
      }
      let body = offset + 8..<offset + length - 4
      switch type {
      case PcapFormat.blockInterfaceDescription:
        interfaces.append(try interface(cursor, body: body, number: number))
      case PcapFormat.blockEnhancedPacket, PcapFormat.blockSimplePacket:
        records.append(
          try packet(cursor, type: type, body: body, interfaces: interfaces, number: number))
      default:
        break
      }
      offset += length
    }
    return records
  }

  private static func interface(_ cursor: Cursor, body: Range<Int>, number: Int)
    throws(PcapError) -> Interface
  {
    guard body.count >= 8 else { throw PcapError("block \(number): interface block truncated") }
    let linkType = cursor.u16(body.lowerBound)
    guard UInt32(linkType) == PcapFormat.linkTypeNetlink else {
      throw PcapError("block \(number): link type \(linkType), expected 253 (LINKTYPE_NETLINK)")
    }
    var ticks: Int64 = 1_000_000
    for (code, value) in try options(cursor, in: body.lowerBound + 8..<body.upperBound)
    where code == PcapFormat.optionTimestampResolution && value.count >= 1 {
      let exponent = Int64(value.first! & 0x7F)
      guard exponent <= 18 else { throw PcapError("block \(number): if_tsresol \(exponent)") }
      let base: Int64 = value.first! & 0x80 != 0 ? 2 : 10
      ticks = (0..<exponent).reduce(1) { result, _ in result * base }
    }
    return Interface(linkType: linkType, ticksPerSecond: ticks)
  }

  private static func packet(
    _ cursor: Cursor, type: UInt32, body: Range<Int>, interfaces: [Interface], number: Int
  ) throws(PcapError) -> PcapRecord {
    let isEnhanced = type == PcapFormat.blockEnhancedPacket
    let fixed = isEnhanced ? 20 : 4
    guard body.count >= fixed else { throw PcapError("block \(number): packet block truncated") }
    let interfaceID = isEnhanced ? Int(cursor.u32(body.lowerBound)) : 0
    guard interfaceID < interfaces.count else {
      throw PcapError("block \(number): packet of undeclared interface \(interfaceID)")
    }
    let captured =
      isEnhanced
      ? Int(cursor.u32(body.lowerBound + 12))
      : min(Int(cursor.u32(body.lowerBound)), body.count - fixed)
    guard captured <= body.count - fixed else {
      throw PcapError(
        "block \(number): truncated, claims \(captured) bytes but \(body.count - fixed) remain")
    }
    guard captured >= PcapFormat.cookedHeaderSize else {
      throw PcapError("block \(number): \(captured) bytes, shorter than the cooked header")
    }
    var timestamp: Int64 = 0
    if isEnhanced {
      let ticks =
        Int64(cursor.u32(body.lowerBound + 4)) << 32
        | Int64(cursor.u32(body.lowerBound + 8))
      let perSecond = interfaces[interfaceID].ticksPerSecond
      let (seconds, fraction) = ticks.quotientAndRemainder(dividingBy: perSecond)
      let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
      guard !overflow else {
        throw PcapError(
          "block \(number): timestamp of \(ticks) ticks at \(perSecond)/s is out of range")
      }
      // fraction < perSecond, so the microseconds it adds stay below 1,000,000.
      timestamp =
        whole + perSecond.dividingFullWidth(fraction.multipliedFullWidth(by: 1_000_000)).quotient
    }
    let dataStart = body.lowerBound + fixed
    var record = try PcapReader.decodeCooked(
      cursor.bytes[dataStart..<dataStart + captured], number: number, timestamp: timestamp)
    if isEnhanced {
      let optionStart = dataStart + NetlinkFraming.alignedLength(captured)
      record.comments = try options(cursor, in: min(optionStart, body.upperBound)..<body.upperBound)
        .filter { $0.code == PcapFormat.optionComment }
        .map { String(decoding: $0.value, as: UTF8.self) }
    }
    return record
  }

  private static func options(_ cursor: Cursor, in range: Range<Int>) throws(PcapError)
    -> [(code: UInt16, value: ArraySlice<UInt8>)]
  {
    var found: [(code: UInt16, value: ArraySlice<UInt8>)] = []
    var offset = range.lowerBound
    while range.upperBound - offset >= 4 {
      let code = cursor.u16(offset)
      let length = Int(cursor.u16(offset + 2))
      if code == PcapFormat.optionEnd { break }
      guard length <= range.upperBound - offset - 4 else {
        throw PcapError("option \(code) of length \(length) runs past its block")
      }
      found.append((code, cursor.bytes[offset + 4..<offset + 4 + length]))
      offset += 4 + NetlinkFraming.alignedLength(length)
    }
    return found
  }
}

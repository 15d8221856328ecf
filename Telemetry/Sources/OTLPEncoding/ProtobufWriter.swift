/// Protocol Buffers wire format, as much of it as the two OTLP requests need: varints, 64-bit
/// fixed fields and length-delimited fields (strings, bytes, nested messages, packed nothing).
/// Fields are written in the order given; proto3 readers accept any order and explicit zeros.
public struct ProtobufWriter {
  public private(set) var bytes: [UInt8] = []

  public init() {}

  /// The wire types used.
  enum WireType: UInt8 {
    case varint = 0
    case fixed64 = 1
    case lengthDelimited = 2
  }

  mutating func varint(_ value: UInt64) {
    var rest = value
    while rest >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
      rest >>= 7
    }
    bytes.append(UInt8(rest))
  }

  mutating func tag(_ field: Int, _ type: WireType) {
    varint(UInt64(field) << 3 | UInt64(type.rawValue))
  }

  /// An `int64`/`uint64`/enum field (a negative int64 takes ten bytes, as protobuf says).
  public mutating func int(_ field: Int, _ value: Int64) {
    tag(field, .varint)
    varint(UInt64(bitPattern: value))
  }

  public mutating func bool(_ field: Int, _ value: Bool) {
    int(field, value ? 1 : 0)
  }

  /// A `fixed64` field, little-endian.
  public mutating func fixed64(_ field: Int, _ value: UInt64) {
    tag(field, .fixed64)
    for shift in stride(from: 0, to: 64, by: 8) {
      bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
    }
  }

  public mutating func double(_ field: Int, _ value: Double) {
    fixed64(field, value.bitPattern)
  }

  public mutating func bytes(_ field: Int, _ value: [UInt8]) {
    tag(field, .lengthDelimited)
    varint(UInt64(value.count))
    bytes.append(contentsOf: value)
  }

  public mutating func string(_ field: Int, _ value: String) {
    bytes(field, Array(value.utf8))
  }

  /// A nested message field, written by `body`.
  public mutating func message(_ field: Int, _ body: (inout ProtobufWriter) -> Void) {
    var inner = ProtobufWriter()
    body(&inner)
    bytes(field, inner.bytes)
  }
}

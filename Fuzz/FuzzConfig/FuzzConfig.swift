import BackgrounderDaemon
import TOML

/// libFuzzer entry: the input is the bytes of a daemon config file, UTF-8 or not, as
/// `ConfigurationLoader.load` hands them to the TOML parser. Any input must give a configuration
/// or an error, never a crash; a document the parser accepts must be valid UTF-8; every job of
/// an accepted configuration must map to a runtime request.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  if (try? TOMLTable(parsing: bytes)) != nil {
    precondition(
      String(validating: bytes, as: UTF8.self) != nil, "the parser accepted invalid UTF-8")
  }
  let locations = DefaultLocations(
    configPath: "/fuzz/config.toml", storePath: "/fuzz/store.sqlite",
    controlSocketPath: "/fuzz/control.sock")
  guard
    let configuration = try? ConfigurationLoader.parse(
      contents: bytes, path: "/fuzz/config.toml", locations: locations)
  else { return 0 }
  for job in configuration.jobs {
    do {
      _ = try JobRequests.request(for: job, origin: .config)
    } catch {
      preconditionFailure("accepted job \(job.id) has no runtime request: \(error)")
    }
  }
  return 0
}

import BackgrounderDaemon

/// libFuzzer entry: the input is the bytes of a daemon config file, UTF-8 or not, as
/// `ConfigurationLoader.load` hands them to the TOML parser. Any input must give a configuration
/// or an error, never a crash; an accepted file must be valid UTF-8 (comments and strings of a
/// config are where other bytes could hide); every job of it must map to a runtime request.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let locations = DefaultLocations(
    configPath: "/fuzz/config.toml", storePath: "/fuzz/store.sqlite",
    controlSocketPath: "/fuzz/control.sock")
  guard
    let configuration = try? ConfigurationLoader.parse(
      contents: bytes, path: "/fuzz/config.toml", locations: locations)
  else { return 0 }
  precondition(String(validating: bytes, as: UTF8.self) != nil, "accepted invalid UTF-8")
  for job in configuration.jobs {
    do {
      _ = try JobRequests.request(for: job, origin: .config)
    } catch {
      preconditionFailure("accepted job \(job.id) has no runtime request: \(error)")
    }
  }
  return 0
}

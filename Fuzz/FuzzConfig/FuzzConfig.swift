import BackgrounderDaemon

/// libFuzzer entry: the input is a daemon config file. Text that is not UTF-8 is refused by
/// `ConfigurationLoader.load` before parsing, so only valid UTF-8 reaches the parser here. Every
/// job of an accepted configuration must map to a runtime request.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  guard
    let text = String(
      validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  else { return 0 }
  let locations = DefaultLocations(
    configPath: "/fuzz/config.toml", storePath: "/fuzz/store.sqlite",
    controlSocketPath: "/fuzz/control.sock")
  guard
    let configuration = try? ConfigurationLoader.parse(
      text, path: "/fuzz/config.toml", locations: locations)
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

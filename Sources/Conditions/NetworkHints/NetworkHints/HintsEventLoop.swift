import CSystemdBus
import DBus
import EventLoops
import Glibc
import Logging
import Nl80211
import Reachability

/// The hints' state, driven by an `EventLoop`: the D-Bus connection to NetworkManager (served
/// there by ``BusConnection/serve(on:processed:broke:)``, with sd-bus's own deadline) and the
/// nl80211 socket are registered there, with one timer for the next deadline of its own (a
/// reconnection, the stale limit); nothing is scheduled while idle. Every method runs on the
/// loop's thread, so the state needs no lock. NetworkManager's and ModemManager's reads are
/// asynchronous calls on the served connection (``HintsBusRead``), timed out by sd-bus's
/// deadline: a silent NetworkManager never holds the shared loop, and no thread is started.
final class HintsEventLoop: @unchecked Sendable {
  // @unchecked: touched only on the loop's thread.

  /// Set by the D-Bus match callback, read after `sd_bus_process`.
  final class SignalFlag {
    var refreshNeeded = false
  }

  let configuration: NetworkHintsConfiguration
  let monitor: ReachabilityMonitor
  let logger: Logger
  private let loop: EventLoop
  private let signals = SignalFlag()
  private(set) var bus: BusConnection?
  /// The read of NetworkManager or ModemManager under way, if any.
  private var read: HintsBusRead?
  /// Tells a finished read's result from one dropped since (the bus lost, the hints stopped).
  private var readGeneration: UInt64 = 0
  private var reading: Bool { read != nil }
  private var everConnected = false
  private var reconnectAt: UInt64?
  private var reconnectDelay: UInt64 = 1_000_000
  private var networkManager: NetworkManagerSource?
  /// ModemManager (HintsEventLoop+ModemManager.swift), on the same bus connection.
  var modemManager: ModemManagerSource?
  let modemManagerSignals = SignalFlag()
  private var wifi: Nl80211Socket?
  private var wifiRegistration: EventLoop.Registration?
  private var tracker = WifiIdentityTracker()
  private var wifiDumps = Nl80211DumpQueue()
  private var timer: EventLoop.Timer?
  private var stopped = false
  private let onSettled: @Sendable () -> Void
  private var hasSettled = false

  static let maximumReconnectDelay: UInt64 = 60_000_000

  init(
    configuration: NetworkHintsConfiguration, monitor: ReachabilityMonitor, logger: Logger,
    loop: EventLoop, onSettled: @escaping @Sendable () -> Void
  ) {
    self.onSettled = onSettled
    self.configuration = configuration
    self.monitor = monitor
    self.logger = logger
    self.loop = loop
    if configuration.useNetworkManager {
      networkManager = NetworkManagerSource(
        limits: configuration.networkManagerLimits, wall: wallSeconds())
    }
    if configuration.useModemManager {
      modemManager = ModemManagerSource(
        limits: configuration.networkManagerLimits, wall: wallSeconds())
    }
  }

  /// Connects and opens what the configuration asks for, on the loop. Failures of D-Bus or
  /// nl80211 are logged and degrade to "no hints"; they never stop the hints.
  func start() {
    if configuration.useNetworkManager || configuration.useModemManager { connectBus() }
    if configuration.watchWifi { openWifi() }
    settleIfDone()
    rearm()
  }

  /// Deregisters everything and closes the bus and the nl80211 socket, on the loop. A read
  /// still under way is dropped (its calls with it).
  func stop() {
    stopped = true
    read = nil
    if let timer { loop.cancel(timer) }
    timer = nil
    dropBus()
    closeWifi()
  }

  /// One round: a read when the bus's signals asked for one (after the bus was processed), a
  /// due reconnection, nl80211 read when ready, the stale limit checked.
  private func step(wifiReady: Bool = false) {
    guard !stopped else { return }
    startRead()
    if let reconnectAt, reconnectAt <= csd_monotonic_microseconds() { connectBus() }
    if wifiReady { serviceWifi() }
    if !reading,
      let publication = networkManager?.tick(
        now: csd_monotonic_microseconds(), wall: wallSeconds())
    {
      logger.info("NetworkManager stayed away past the stale limit: kernel signals decide")
      publish(publication)
    }
    if !reading { tickModemManager() }
    settleIfDone()
    rearm()
  }

  /// Schedules the next deadline of the hints' own (the bus's are its own).
  private func rearm() {
    guard !stopped else { return }
    var deadline: UInt64?
    let staleLimits = reading ? [] : [networkManager?.staleUntil, modemManager?.staleUntil]
    for next in ([reconnectAt] + staleLimits).compactMap({ $0 }) {
      deadline = min(deadline ?? next, next)
    }
    if let timer { loop.cancel(timer) }
    timer = nil
    guard let deadline else { return }
    let now = csd_monotonic_microseconds()
    let delay = Duration.microseconds(deadline <= now ? 0 : Int64(deadline - now))
    timer = loop.schedule(after: delay) { [self] in
      timer = nil
      step()
    }
  }

  /// Serves the bus on the loop: each round of processing ends in ``step(wifiReady:)``.
  private func serveBus() {
    guard let bus, !stopped else { return }
    bus.serve(
      on: loop, processed: { [self] in step() },
      broke: { [self] error in
        lostBus(error)
        step()
      })
  }

  /// Stops serving the bus and closes it; a read under way is dropped.
  private func dropBus() {
    read = nil
    bus?.stopServing()
    bus = nil
  }

  /// Reports once that the first NetworkManager read and the first nl80211 dumps (interfaces,
  /// then the scan results of those whose reply had no SSID) are done.
  private func settleIfDone() {
    guard !hasSettled, wifiDumps.isIdle, !reading else { return }
    hasSettled = true
    if configuration.watchWifi {
      let state: HintSourceState = wifi == nil ? .absent : .answered
      monitor.updateHints { $0.sources[.nl80211] = state }
    }
    onSettled()
  }

  // MARK: - NetworkManager

  private func connectBus() {
    reconnectAt = nil
    do {
      let bus = try BusConnection(address: configuration.busAddress) { [logger] refusal in
        logger.debug("ignored a forged D-Bus signal: \(refusal)")
      }
      let signals = self.signals
      try bus.subscribe(
        from: BusSignals.busDriver,
        match: "path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
          + "member='NameOwnerChanged',arg0='\(NetworkManagerSnapshot.service)'"
      ) { _ in signals.refreshNeeded = true }
      try bus.subscribe(
        from: NetworkManagerSnapshot.service,
        match: "path_namespace='\(NetworkManagerSnapshot.managerPath)'"
      ) { message in
        if !Self.onlyAccessPointChanged(message) { signals.refreshNeeded = true }
      }
      if modemManager != nil { try addModemManagerMatches(bus) }
      self.bus = bus
      everConnected = true
      reconnectDelay = 1_000_000
      logger.debug("connected to D-Bus for NetworkManager and ModemManager hints")
      signals.refreshNeeded = networkManager != nil
      modemManagerSignals.refreshNeeded = modemManager != nil
      startRead()
      serveBus()
    } catch {
      if everConnected {
        scheduleReconnect()
      } else {
        logger.debug("NetworkManager hints off: \(error)")
        notOnBus()
        modemManagerNotOnBus()
      }
    }
  }

  /// Reads what the signals asked for — NetworkManager's state, ModemManager's modems — with
  /// asynchronous calls on the served bus (``HintsBusRead``); ``finishRead(_:generation:)``
  /// takes the answers on the loop, after the round of processing that completed them. Signals
  /// that come meanwhile ask for the next read.
  private func startRead() {
    guard let bus, !reading else { return }
    let networkManagerTimeout = signals.refreshNeeded ? networkManager?.readTimeout : nil
    let modemManagerTimeout =
      modemManagerSignals.refreshNeeded ? modemManager?.readTimeout : nil
    signals.refreshNeeded = false
    modemManagerSignals.refreshNeeded = false
    guard networkManagerTimeout != nil || modemManagerTimeout != nil else { return }
    readGeneration &+= 1
    let generation = readGeneration
    read = HintsBusRead(
      bus: bus, networkManagerTimeout: networkManagerTimeout,
      modemManagerTimeout: modemManagerTimeout
    ) { [self, loop] results in
      loop.execute { [self] in finishRead(results, generation: generation) }
    }
  }

  /// Takes a read's results, on the loop (none of a read dropped since).
  private func finishRead(_ result: HintsBusRead.Results, generation: UInt64) {
    guard generation == readGeneration, reading else { return }
    read = nil
    guard !stopped else { return }
    let busKept = result.networkManager.map(finishNetworkManagerRead) ?? true
    // On a lost bus ModemManager is marked stale already; its answer, if any, is not taken.
    if busKept, let answer = result.modemManager { finishModemManagerRead(answer) }
    step()
  }

  /// Publishes what NetworkManager's read decides; false when the bus was lost.
  private func finishNetworkManagerRead(
    _ result: Result<NetworkManagerSnapshot, BusError>
  ) -> Bool {
    guard var source = networkManager else { return true }
    let publication: NetworkManagerSource.Publication?
    do {
      publication = source.answered(try result.get())
    } catch {
      if error.isTimeout {
        logger.info(
          "NetworkManager did not answer within \(source.limits.sourceTimeout): \(error)")
        publication = source.silent(now: csd_monotonic_microseconds(), wall: wallSeconds())
      } else if error.name == nil {
        lostBus(error)
        return false
      } else {
        if source.state != .absent { logger.debug("NetworkManager not available: \(error)") }
        publication = source.notOnBus(now: csd_monotonic_microseconds(), wall: wallSeconds())
      }
    }
    networkManager = source
    if let publication { publish(publication) }
    return true
  }

  /// NetworkManager is not reachable over D-Bus: a last answer is kept as stale.
  private func notOnBus() {
    guard var source = networkManager else { return }
    let publication = source.notOnBus(now: csd_monotonic_microseconds(), wall: wallSeconds())
    networkManager = source
    if let publication { publish(publication) }
  }

  private func publish(_ publication: NetworkManagerSource.Publication) {
    let snapshot = publication.snapshot
    monitor.updateHints { hints in
      hints.networkManagerMetered = snapshot.metered
      hints.networkManagerConnectivity = snapshot.connectivity
      hints.networkManagerDeviceConnectivity = snapshot.deviceConnectivity
      hints.networkManagerChecksConnectivity = snapshot.checksConnectivity
      hints.sources[.networkManager] = publication.state
    }
  }

  func lostBus(_ error: BusError) {
    logger.notice("D-Bus connection lost, NetworkManager's last answer kept (stale): \(error)")
    dropBus()
    notOnBus()
    modemManagerNotOnBus()
    scheduleReconnect()
  }

  private func scheduleReconnect() {
    reconnectAt = csd_monotonic_microseconds() + reconnectDelay
    reconnectDelay = min(reconnectDelay * 2, Self.maximumReconnectDelay)
  }

  /// Whether a signal is an access point's update (signal strength), which changes nothing we
  /// read; every other signal of NetworkManager asks for one re-read after processing.
  private static func onlyAccessPointChanged(_ message: BusMessage) -> Bool {
    message.path?.hasPrefix("/org/freedesktop/NetworkManager/AccessPoint") ?? false
  }

  // MARK: - nl80211

  private func openWifi() {
    do {
      let socket = try Nl80211Socket()
      wifi = socket
      wifiRegistration = try loop.register(socket.fileDescriptor, interest: .readable) {
        [self] _ in step(wifiReady: true)
      }
      wifiDumps.enqueue(.interfaces)
      try sendNextWifiDump(socket)
    } catch {
      logger.debug("Wi-Fi SSIDs off: \(error)")
      closeWifi()
      wifiDumps = Nl80211DumpQueue()
    }
  }

  /// Stops watching the nl80211 socket and closes it.
  private func closeWifi() {
    if let registration = wifiRegistration { loop.deregister(registration) }
    wifiRegistration = nil
    wifi = nil
  }

  private func serviceWifi() {
    guard let wifi else { return }
    var changed = false
    do {
      while let datagram = try wifi.receive() {
        if datagram.isEmpty {
          wifiDumps.enqueue(.interfaces)  // events were lost
        }
        for result in Nl80211Parser.messages(in: datagram, family: wifi.family) {
          switch result {
          case .success(let message):
            let effects = tracker.apply(message)
            changed = changed || effects.changed
            for index in effects.requery { try wifi.requestInterface(index: index) }
            for index in effects.scan { wifiDumps.enqueue(.scan(interfaceIndex: index)) }
          case .failure(let error):
            logger.debug("skipped a malformed nl80211 message: \(error)")
          }
        }
        for sequence in Nl80211Parser.endedRequests(in: datagram) {
          if case .scan(let index) = wifiDumps.ended(sequence: sequence) {
            changed = tracker.endScan(index: index).changed || changed
          }
        }
        try sendNextWifiDump(wifi)
      }
    } catch {
      logger.notice("Wi-Fi SSIDs off: \(error)")
      closeWifi()
      wifiDumps = Nl80211DumpQueue()
      tracker = WifiIdentityTracker()
      changed = true
    }
    if changed {
      let ssids = tracker.ssids
      monitor.updateHints { $0.ssids = ssids }
    }
  }

  /// Sends the next queued dump when none is running (one at a time: the kernel answers a
  /// second with `EBUSY`).
  private func sendNextWifiDump(_ socket: Nl80211Socket) throws {
    guard let dump = wifiDumps.next() else { return }
    wifiDumps.sent(sequence: try socket.request(dump))
    if case .scan(let index) = dump { tracker.beginScan(index: index) }
  }
}

/// The wall clock in seconds since 1970, for the times people read ("away since 12:03:10").
func wallSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_REALTIME, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

import CSystemdBus
import Glibc
import Logging
import Nl80211
import Reachability
import SystemCalls

/// The hints thread's state: the D-Bus connection to NetworkManager and the nl80211 socket,
/// both in one `poll()` with no timeout while idle. Used by that thread only.
final class HintsEventLoop {
  /// Set by the D-Bus match callback, read after `sd_bus_process`.
  final class SignalFlag {
    var refreshNeeded = false
  }

  let configuration: NetworkHintsConfiguration
  let monitor: ReachabilityMonitor
  let logger: Logger
  private let wakeDescriptor: Int32
  private let signals = SignalFlag()
  private(set) var bus: SystemBus?
  private var everConnected = false
  private var reconnectAt: UInt64?
  private var reconnectDelay: UInt64 = 1_000_000
  private var networkManager: NetworkManagerSource?
  /// ModemManager (HintsEventLoop+ModemManager.swift), on the same bus connection.
  var modemManager: ModemManagerSource?
  let modemManagerSignals = SignalFlag()
  private var wifi: Nl80211Socket?
  private var tracker = WifiIdentityTracker()
  private var wifiDumps = Nl80211DumpQueue()
  private let onSettled: @Sendable () -> Void
  private var hasSettled = false

  static let maximumReconnectDelay: UInt64 = 60_000_000

  init(
    configuration: NetworkHintsConfiguration, monitor: ReachabilityMonitor, logger: Logger,
    wakeDescriptor: Int32, onSettled: @escaping @Sendable () -> Void
  ) {
    self.onSettled = onSettled
    self.configuration = configuration
    self.monitor = monitor
    self.logger = logger
    self.wakeDescriptor = wakeDescriptor
    if configuration.useNetworkManager {
      networkManager = NetworkManagerSource(
        limits: configuration.networkManagerLimits, wall: wallSeconds())
    }
    if configuration.useModemManager {
      modemManager = ModemManagerSource(
        limits: configuration.networkManagerLimits, wall: wallSeconds())
    }
  }

  /// Runs until the wake descriptor becomes readable. Failures of D-Bus or nl80211 are logged
  /// and degrade to "no hints"; they never end the loop.
  func run() {
    if configuration.useNetworkManager || configuration.useModemManager { connectBus() }
    if configuration.watchWifi { openWifi() }
    settleIfDone()
    while true {
      var descriptors = [pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)]
      var timeout: Int32 = -1
      var busIndex: Int?
      var wifiIndex: Int?
      if let bus {
        do {
          let parameters = try bus.pollParameters()
          busIndex = descriptors.count
          descriptors.append(
            pollfd(fd: parameters.descriptor, events: parameters.events, revents: 0))
          timeout = parameters.timeout
        } catch {
          lostBus(error)
        }
      }
      let deadlines = [reconnectAt, networkManager?.staleUntil, modemManager?.staleUntil]
      for deadline in deadlines.compactMap({ $0 }) {
        let now = csd_monotonic_microseconds()
        let wait = deadline <= now ? 0 : Int32(clamping: (deadline - now + 999) / 1000)
        timeout = timeout < 0 ? wait : min(timeout, wait)
      }
      if let wifi {
        wifiIndex = descriptors.count
        descriptors.append(pollfd(fd: wifi.fileDescriptor, events: Int16(POLLIN), revents: 0))
      }
      let ready: Int32
      do {
        ready = try systemCall("poll") { poll(&descriptors, nfds_t(descriptors.count), timeout) }
      } catch {
        logger.error("hints poll failed: \(error)")
        return
      }
      if descriptors[0].revents != 0 { return }
      if let busIndex, ready == 0 || descriptors[busIndex].revents != 0 { serviceBus() }
      if let reconnectAt, reconnectAt <= csd_monotonic_microseconds() { connectBus() }
      if let wifiIndex, descriptors[wifiIndex].revents != 0 { serviceWifi() }
      if let publication = networkManager?.tick(
        now: csd_monotonic_microseconds(), wall: wallSeconds())
      {
        logger.info("NetworkManager stayed away past the stale limit: kernel signals decide")
        publish(publication)
      }
      tickModemManager()
      settleIfDone()
    }
  }

  /// Reports once that the first NetworkManager read and the first nl80211 dumps (interfaces,
  /// then the scan results of those whose reply had no SSID) are done.
  private func settleIfDone() {
    guard !hasSettled, wifiDumps.isIdle else { return }
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
      let bus = try SystemBus(address: configuration.busAddress)
      let context = Unmanaged.passUnretained(signals).toOpaque()
      try bus.addMatch(
        "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
          + "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
          + "arg0='\(NetworkManagerSnapshot.service)'",
        handler: Self.onSignal, context: context)
      try bus.addMatch(
        "type='signal',path_namespace='\(NetworkManagerSnapshot.managerPath)'",
        handler: Self.onSignal, context: context)
      if modemManager != nil { try addModemManagerMatches(bus) }
      self.bus = bus
      everConnected = true
      reconnectDelay = 1_000_000
      logger.debug("connected to D-Bus for NetworkManager hints")
      refresh()
      refreshModemManager()
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

  private func serviceBus() {
    guard let bus else { return }
    do {
      try bus.processPending()
    } catch {
      lostBus(error)
      return
    }
    if signals.refreshNeeded { refresh() }
    if modemManagerSignals.refreshNeeded { refreshModemManager() }
  }

  private func refresh() {
    signals.refreshNeeded = false
    guard let bus, var source = networkManager else { return }
    let publication: NetworkManagerSource.Publication?
    do {
      let deadline = source.readDeadline(now: csd_monotonic_microseconds())
      publication = source.answered(try NetworkManagerSnapshot.read(from: bus, deadline: deadline))
    } catch {
      if error.isTimeout {
        logger.info(
          "NetworkManager did not answer within \(source.limits.sourceTimeout): \(error)")
        publication = source.silent(now: csd_monotonic_microseconds(), wall: wallSeconds())
      } else if error.name == nil {
        lostBus(error)
        return
      } else {
        if source.state != .absent { logger.debug("NetworkManager not available: \(error)") }
        publication = source.notOnBus(now: csd_monotonic_microseconds(), wall: wallSeconds())
      }
    }
    networkManager = source
    if let publication { publish(publication) }
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
    bus = nil
    notOnBus()
    modemManagerNotOnBus()
    scheduleReconnect()
  }

  private func scheduleReconnect() {
    reconnectAt = csd_monotonic_microseconds() + reconnectDelay
    reconnectDelay = min(reconnectDelay * 2, Self.maximumReconnectDelay)
  }

  /// The match callback: every matched signal asks for one re-read after processing, except
  /// access-point updates (signal strength), which change nothing we read.
  private static let onSignal: sd_bus_message_handler_t = { message, context, _ in
    guard let message, let context else { return 0 }
    if let path = sd_bus_message_get_path(message),
      String(cString: path).hasPrefix("/org/freedesktop/NetworkManager/AccessPoint")
    {
      return 0
    }
    Unmanaged<SignalFlag>.fromOpaque(context).takeUnretainedValue().refreshNeeded = true
    return 0
  }

  // MARK: - nl80211

  private func openWifi() {
    do {
      let socket = try Nl80211Socket()
      wifi = socket
      wifiDumps.enqueue(.interfaces)
      try sendNextWifiDump(socket)
    } catch {
      logger.debug("Wi-Fi SSIDs off: \(error)")
      wifi = nil
      wifiDumps = Nl80211DumpQueue()
    }
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
      self.wifi = nil
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

// SPDX-License-Identifier: Apache-2.0
import SnapbackWire

/// What the timeline service needs of a connected player: send it frames, close it, know who it is.
///
/// The libuv ``Connection`` is the daemon's conformer; SnapbackEmbedded's `EmbeddedPeer` is the in-process one, for
/// tests and the fuzzer, the way NIOEmbedded stands in for a socket. Used on the service's thread only.
public protocol PeerPort: AnyObject {
    /// Unique for the daemon's life; used in log lines.
    var id: UInt64 { get }
    /// The peer's uid, gid and pid, for access control and limits.
    var peer: PeerCredentials { get }
    /// The service's per-connection state.
    var serviceState: ConnectionState? { get set }
    /// Whether frames can still be queued (open, or draining before a close).
    var canSend: Bool { get }
    /// The largest request body accepted.
    var maxFrameSize: Int { get }
    /// The most output queued for a peer that is not reading before it is disconnected.
    var maxOutboundBytes: Int { get }
    /// Output queued and not yet taken by the peer (a watcher's is checked against its own bound).
    var queuedOutboundBytes: Int { get }

    /// Queues a frame; `header.length` is set from `body`. Returns false if it could not be queued (the
    /// peer is closing, or has just been dropped for not reading).
    @discardableResult
    func send(_ header: FrameHeader, body: UnsafeRawBufferPointer) -> Bool

    /// Queues a frame whose body is encoded in place: `encodeBody` gets `capacity` writable bytes and
    /// returns how many it used. `header.length` is set from that.
    @discardableResult
    func send(
        _ header: FrameHeader, reservingBodyCapacity capacity: Int,
        encodeBody: (UnsafeMutableRawBufferPointer) -> Int
    ) -> Bool

    /// Stops reading and closes once the queued output is written.
    func closeAfterFlush(reason: String, level: Logger.Level)

    /// The peer's Hello was accepted: from now on it may stay idle between frames (a ``Connection`` is
    /// closed if this has not happened by its Hello timeout).
    func completeHandshake()

    /// The request just delivered is answered later (it is decoded off the service's thread): the
    /// requests after it wait, unread, until ``resumeRequests()``, so that a peer's requests are still
    /// answered in the order it sent them. A ``Connection`` stops reading its socket meanwhile.
    func holdRequests()

    /// Delivers the requests that waited since ``holdRequests()`` and reads on. Does nothing unless
    /// held; a port that closed meanwhile stays closed.
    func resumeRequests()
}

extension PeerPort {
    /// Queues a frame with a body from an array.
    @discardableResult
    public func send(_ header: FrameHeader, body: [UInt8] = []) -> Bool {
        body.withUnsafeBytes { send(header, body: $0) }
    }

    public func closeAfterFlush(reason: String) {
        closeAfterFlush(reason: reason, level: .info)
    }

    /// For peers that have no Hello timeout (in process): nothing to do.
    public func completeHandshake() {}
}

/// Time and timers for the service: the loop's clocks in the daemon (``LoopClock``), a manual clock
/// that fires due timers when told to in process (SnapbackEmbedded's `ManualClock`).
///
/// Two readings. The wall clock dates what people read and what outlives the daemon (a bookmark's
/// "saved at", a decision's time, a watched break's and the last break's time in the store); it is
/// stepped (NTP setting a box that booted at 1970, an operator). The monotonic clock never steps and
/// measures every duration: the timeline's times (cooldowns, playhead extrapolation, timer deadlines),
/// the bookmark tick, the watched-break retention, uptime. See ``WallClockSteps``.
public protocol ServiceClock: AnyObject {
    /// Wall time, seconds since the Unix epoch (`CLOCK_REALTIME`).
    func now() -> Double
    /// Seconds on a clock that never steps and counts a suspended box's sleep (`CLOCK_BOOTTIME`): the
    /// time the timeline is given with every event.
    func monotonic() -> Double
    /// A stopped one-shot timer calling `callback` on the service's thread.
    func makeTimer(_ callback: @escaping () -> Void) -> any ServiceTimer
}

/// A timer made by a ``ServiceClock``.
public protocol ServiceTimer: AnyObject {
    /// Fires once after `seconds` of monotonic time, whatever the double: NaN and negatives fire at once, huge values are
    /// clamped. Restarts a running timer.
    func start(afterSeconds seconds: Double)
    func stop()
    /// Closes the timer for good and releases its callback.
    func close()
    var isActive: Bool { get }
}

import CLibUV
import Glibc

/// What a handler factory gets: the loop to put timers and the service actor on, the options, the
/// logger.
public struct DaemonContext: Sendable {
    public let loop: EventLoop
    public let options: DaemonOptions
    /// Runs closures from other threads (the store's writer) on the loop thread; closed last.
    public let post: LoopPost
    /// The executor for the service actor: `loop.executor`.
    public var executor: LoopExecutor { loop.executor }
    public var logger: Logger { loop.logger }
}

/// The daemon: parse → set up → run → clean up.
///
/// ```swift
/// // Sources/snapbackd/main.swift
/// exit(Daemon.main(arguments: CommandLine.arguments) { context in try MyService(context: context) })
/// ```
///
/// Stopping (SIGTERM, SIGINT) closes the listener, calls the handler's `shutdown()`, lets every
/// connection write its queued output for up to ``drainTimeoutMilliseconds``, then closes every handle
/// left (connections, timers, signal watchers, the executor's wake-up) and runs the loop until it has
/// none: `uv_loop_close` must then succeed, or the exit status is 1. A second signal cuts the drain
/// short.
public final class Daemon {
    public typealias HandlerFactory = (DaemonContext) throws -> any ConnectionHandler

    public static let version = "0.1.0"
    /// How long connections get to take their last frames when the daemon stops.
    public static let drainTimeoutMilliseconds: UInt64 = 2000

    private let options: DaemonOptions
    private let makeHandler: HandlerFactory
    private let logger: Logger

    private var loop: EventLoop?
    private var handler: (any ConnectionHandler)?
    private var listener: Listener?
    private var signals: SignalWatcher?
    private var post: LoopPost?
    private var drainTimer: LoopTimer?
    private var isStopping = false
    private var isFinishing = false

    public init(options: DaemonOptions, makeHandler: @escaping HandlerFactory) {
        self.options = options
        self.makeHandler = makeHandler
        self.logger = Logger(level: options.logLevel)
    }

    /// Parses `arguments` (with the program name first), runs the daemon, and returns the exit status:
    /// 0 after a clean stop (and for `--help`, `--version`), 1 if it could not start or stop cleanly,
    /// 2 for a bad command line.
    public static func main(arguments: [String], makeHandler: @escaping HandlerFactory) -> Int32 {
        let command: DaemonOptions.Command
        do {
            command = try DaemonOptions.parse(arguments.dropFirst())
        } catch {
            writeStandardError("snapbackd: \(error.message)\n\n\(DaemonOptions.usage)\n")
            return 2
        }
        switch command {
        case .help:
            print(DaemonOptions.usage)
            fflush(nil)
            return 0
        case .version:
            print("snapbackd \(version)")
            fflush(nil)
            return 0
        case .run(let options):
            return Daemon(options: options, makeHandler: makeHandler).run()
        }
    }

    /// Sets up, runs until stopped, cleans up; returns the exit status.
    public func run() -> Int32 {
        // A peer hanging up mid-write must give EPIPE, not kill the daemon.
        signal(SIGPIPE, SIG_IGN)
        // The signal mask is inherited: a parent that blocks these (some supervisors and test runners
        // do) would make the daemon deaf to them. Done before libuv starts any thread.
        var handled = sigset_t()
        sigemptyset(&handled)
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            sigaddset(&handled, signal)
        }
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        let loop: EventLoop
        do {
            loop = try EventLoop(logger: logger)
        } catch {
            logger.error("cannot create the event loop: \(error)")
            return 1
        }
        self.loop = loop
        var status: Int32 = 0
        do {
            try setUp(loop)
            logger.notice("snapbackd \(Self.version) listening on \(options.socketPath) (pid \(getpid()))")
            loop.run()
        } catch {
            logger.error("cannot start: \(error)")
            status = 1
            finish()
        }
        // Let go of the components first: a timer whose owner is released only now, or one armed
        // while stopping (in connectionClosed), is closed here, and the loop runs until every close
        // callback has run (after a failed start, those of everything finish() closed).
        handler = nil
        listener = nil
        signals = nil
        post = nil
        drainTimer = nil
        loop.closeAllTimers()
        loop.runUntilClosed()
        if loop.close() != 0 {
            logger.error("the event loop still had open handles at exit")
            status = 1
        }
        self.loop = nil
        if status == 0 {
            logger.notice("stopped")
        }
        return status
    }

    private func setUp(_ loop: EventLoop) throws {
        // Refuse to start beside a running daemon before the handler opens the state store.
        try Listener.prepareSocketPath(options.socketPath, logger: logger)
        try Listener.makeDirectories(options.stateDirectory)
        let post = try LoopPost(loop: loop)
        self.post = post
        let handler = try makeHandler(DaemonContext(loop: loop, options: options, post: post))
        self.handler = handler
        listener = try Listener(
            loop: loop,
            path: options.socketPath,
            configuration: options.connectionConfiguration,
            handler: handler
        )
        signals = try SignalWatcher(loop: loop, signals: [SIGINT, SIGTERM, SIGHUP]) { [unowned self] signal in
            self.received(signal)
        }
    }

    private func received(_ signal: Int32) {
        switch signal {
        case SIGHUP:
            if let reloading = handler as? ConfigurationReloading {
                logger.notice("SIGHUP: reloading the configuration")
                reloading.reloadConfiguration()
            } else {
                logger.notice("SIGHUP: nothing to reload")
            }
        default:
            if isStopping {
                logger.notice("\(SignalWatcher.name(of: signal)) again: stopping now")
                finish()
            } else {
                stop(reason: SignalWatcher.name(of: signal))
            }
        }
    }

    /// Stops accepting, lets the handler finish, drains connections until the deadline.
    private func stop(reason: String) {
        guard let loop, !isStopping else { return }
        isStopping = true
        logger.notice("\(reason): stopping, \(loop.connections.count) connection(s) to drain")
        listener?.close()
        handler?.shutdown()
        loop.flushPending()
        for connection in Array(loop.connections.values) {
            connection.closeAfterFlush(reason: "daemon stopping", level: .debug)
        }
        if loop.connections.isEmpty {
            finish()
            return
        }
        loop.whenNoConnections = { [unowned self] in self.finish() }
        let timer = LoopTimer(loop: loop) { [unowned self] in
            self.logger.warning("drain deadline passed; closing \(self.loop?.connections.count ?? 0) connection(s)")
            self.finish()
        }
        timer.start(after: Self.drainTimeoutMilliseconds)
        drainTimer = timer
    }

    /// Closes every handle still open, in reverse order of creation; `run()` returns once their close
    /// callbacks have run.
    private func finish() {
        guard let loop, !isFinishing else { return }
        isFinishing = true
        isStopping = true
        loop.whenNoConnections = nil
        drainTimer?.close()
        listener?.close()
        for connection in Array(loop.connections.values) {
            connection.close(reason: "daemon stopped", level: .info)
        }
        let timers = loop.closeAllTimers()
        if timers > 0 {
            logger.debug("closed \(timers) timer(s) left open")
        }
        signals?.close()
        post?.close()
        loop.closeOwnHandles()
    }
}

func writeStandardError(_ text: String) {
    fflush(nil)
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}

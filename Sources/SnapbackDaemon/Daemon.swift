// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc
import SnapbackConfigFile

/// What a handler factory gets, on the loop thread: the loop to put timers and the service on, the
/// options, the configuration in force at start, the logger.
public struct DaemonContext {
    public let loop: EventLoop
    public let options: DaemonOptions
    /// Files and command line merged. Later changes reach a handler that implements
    /// ``ConfigurationReloading``.
    public let configuration: DaemonConfiguration
    /// Runs closures from other threads (the store's writer) on the loop thread; closed last.
    public let post: LoopPost
    public var logger: Logger { loop.logger }
}

/// The daemon: parse → set up → run → clean up.
///
/// ```swift
/// // Sources/snapbackd/main.swift
/// exit(Daemon.main(arguments: CommandLine.arguments) { context in try MyService(context: context) })
/// ```
///
/// Under systemd: the listening socket is adopted when passed (``SocketActivation``), READY=1 is sent
/// once it is open and the handler (and so the state store) is set up, STOPPING=1 when a stop begins,
/// RELOADING=1 … READY=1 around a SIGHUP reload, and WATCHDOG=1 every half `WATCHDOG_USEC` from a timer
/// on the loop thread, so a stalled loop stops the pings (``ServiceNotifier``).
///
/// Stopping (SIGTERM, SIGINT) closes the listener, calls the handler's `shutdown()`, lets every
/// connection write its queued output for up to ``drainTimeoutMilliseconds``, then closes every handle
/// left (connections, timers, signal watchers, the mailbox's wake-up) and runs the loop until it has
/// none: `uv_loop_close` must then succeed, or the exit status is 1. A second signal cuts the drain
/// short.
public final class Daemon {
    public typealias HandlerFactory = (DaemonContext) throws -> any ConnectionHandler

    public static let version = "0.1.0"
    /// How long connections get to take their last frames when the daemon stops.
    public static let drainTimeoutMilliseconds: UInt64 = 2000

    private let options: DaemonOptions
    /// Files and command line merged; replaced by a successful reload.
    private var configuration: DaemonConfiguration
    private var configurationFiles: [String]
    private let makeHandler: HandlerFactory
    private let logger: Logger
    private var notifier: ServiceNotifier?
    private var activation: SocketActivation.Activated?
    private var watchdogMicroseconds: UInt64?
    private var watchdogTimer: LoopTimer?
    /// Where clients connect, for the log and the status line.
    private var listeningOn = ""

    private var loop: EventLoop?
    private var handler: (any ConnectionHandler)?
    private var listener: Listener?
    private var signals: SignalWatcher?
    private var post: LoopPost?
    private var drainTimer: LoopTimer?
    private var isStopping = false
    private var isFinishing = false
    private var isReloading = false
    private var reloadAgain = false

    /// - Parameters:
    ///   - configuration: as loaded from the files; the command line's options are laid over it here.
    ///   - configurationFiles: the files it came from, for the log.
    public init(
        options: DaemonOptions, configuration: DaemonConfiguration = DaemonConfiguration(),
        configurationFiles: [String] = [], makeHandler: @escaping HandlerFactory
    ) {
        self.options = options
        self.configuration = configuration.overridden(by: options)
        self.configurationFiles = configurationFiles
        self.makeHandler = makeHandler
        self.logger = Logger(level: self.configuration.logLevel)
    }

    /// Parses `arguments` (with the program name first), loads the configuration, runs the daemon, and
    /// returns the exit status: 0 after a clean stop (and for `--help`, `--version`, a valid
    /// `--check-config`), 1 if it could not start (an invalid configuration file included: logged as
    /// `file:line: reason`) or stop cleanly, 2 for a bad command line.
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
        case .checkConfiguration(let options):
            do {
                let loaded = try ConfigurationLoader.load(path: options.configPath)
                let files = loaded.files.isEmpty ? "built-in defaults only" : loaded.files.joined(separator: ", ")
                print("# snapbackd \(version): the configuration in force (\(files), then the command line)")
                print(ConfigurationFile.render(loaded.configuration.overridden(by: options)), terminator: "")
                fflush(nil)
                return 0
            } catch {
                writeStandardError("\(error)\n")
                return 1
            }
        case .run(let options):
            let loaded: ConfigurationLoader.Loaded
            do {
                loaded = try ConfigurationLoader.load(path: options.configPath)
            } catch {
                // One line, `file:line: reason`, at error priority; nothing was started.
                Logger(level: .error).error(error.description)
                return 1
            }
            return Daemon(
                options: options, configuration: loaded.configuration,
                configurationFiles: loaded.files, makeHandler: makeHandler
            ).run()
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
        // The environment is read (and the systemd variables unset) while this is the only thread:
        // the store's writer thread may call getenv.
        do {
            activation = try SocketActivation.take()
        } catch {
            logger.error("cannot start: \(error)")
            return 1
        }
        notifier = ServiceNotifier(logger: logger)
        watchdogMicroseconds = ServiceNotifier.watchdogMicroseconds()
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
            logger.notice("snapbackd \(Self.version) listening on \(listeningOn) (pid \(getpid()))")
            notifier?.send("READY=1", "STATUS=listening on \(listeningOn)")
            // glibc gives the top of the heap back once 128 KiB of it are free, and takes it again at the
            // next large request: an OpenSession of 1,000 breaks and its close moved the break by ~300 KiB
            // each time, two brk calls and a score of page faults per cycle (a third of the close's time).
            // 1 MiB stays instead (check-budget counts the brk calls), and blocks under 1 MiB (a frame of the
            // default 256 KiB `max-frame-size` among them) come from the heap rather than from a mapping of
            // their own each time. MemoryReturn still trims the heap after a bulk close. Set once started:
            // what start-up allocated and freed is given back as before (check-footprint's idle RSS).
            mallopt(M_TRIM_THRESHOLD, 1 << 20)
            mallopt(M_MMAP_THRESHOLD, 1 << 20)
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
        watchdogTimer = nil
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
        // Lines still waiting for stderr get a moment more; the loop is gone, so this may block briefly.
        LogSink.standardError.drain(milliseconds: 1000)
        return status
    }

    private func setUp(_ loop: EventLoop) throws {
        // Signals first: once the socket accepts, a SIGTERM must be a graceful stop (handled when the
        // loop runs), not the default action.
        signals = try SignalWatcher(loop: loop, signals: [SIGINT, SIGTERM, SIGHUP]) { [unowned self] signal in
            self.received(signal)
        }
        // Refuse to start beside a running daemon before the handler opens the state store.
        if activation == nil {
            try Listener.prepareSocketPath(options.socketPath, logger: logger)
        }
        try Listener.makeDirectories(options.stateDirectory)
        let post = try LoopPost(loop: loop)
        self.post = post
        let handler = try makeHandler(DaemonContext(loop: loop, options: options, configuration: configuration, post: post))
        self.handler = handler
        let socketPath: String?
        if let activation {
            listener = try Listener(
                loop: loop,
                adoptingFileDescriptor: activation.fd,
                configuration: configuration.connectionConfiguration,
                handler: handler
            )
            socketPath = SocketActivation.boundPath(of: activation.fd)
            listeningOn = "\(socketPath ?? "an unnamed socket") (socket activation\(activation.name.map { ", \($0)" } ?? ""))"
        } else {
            listener = try Listener(
                loop: loop,
                path: options.socketPath,
                configuration: configuration.connectionConfiguration,
                handler: handler
            )
            socketPath = options.socketPath
            listeningOn = options.socketPath
        }
        // `@socket` in allow-groups: the group owning the socket file (SocketGroup= under systemd).
        var status = stat()
        if let socketPath, stat(socketPath, &status) == 0 {
            configuration.socketGroup = status.st_gid
        }
        (handler as? ConfigurationReloading)?.apply(configuration)
        logger.info(
            "configuration: \(configurationFiles.isEmpty ? "built-in defaults" : configurationFiles.joined(separator: ", ")); "
                + "allowed: \(configuration.access.describe(socketGroup: configuration.socketGroup))")
        if let usec = watchdogMicroseconds, let notifier {
            // Every half interval, from the loop thread: if the loop stalls, the pings stop.
            let interval = max(1, usec / 2 / 1000)
            let timer = LoopTimer(loop: loop) { [unowned notifier] in
                notifier.send("WATCHDOG=1")
            }
            timer.start(after: interval, repeatingEvery: interval)
            watchdogTimer = timer
            logger.info("watchdog: WATCHDOG=1 every \(interval) ms (WATCHDOG_USEC=\(usec))")
        }
    }

    private func received(_ signal: Int32) {
        switch signal {
        case SIGHUP:
            reload()
        default:
            if isStopping {
                logger.notice("\(SignalWatcher.name(of: signal)) again: stopping now")
                finish()
            } else {
                stop(reason: SignalWatcher.name(of: signal))
            }
        }
    }

    /// SIGHUP: loads the files again and lays the command line over them. A valid configuration applies
    /// to what is opened from now on (one notice line); an invalid one is logged (one error line,
    /// `file:line: reason`) and the one in force is kept. Nothing open is dropped either way.
    ///
    /// The files are read and user and group names resolved on a thread of their own: a name-service
    /// lookup may block, and the loop must not. A SIGHUP during a reload loads again once it is done.
    private func reload() {
        guard !isStopping else { return }
        guard !isReloading else {
            reloadAgain = true
            return
        }
        guard let post else { return }
        isReloading = true
        notifier?.send(
            "RELOADING=1", "STATUS=reloading the configuration",
            "MONOTONIC_USEC=\(ServiceNotifier.monotonicMicroseconds())")
        let path = options.configPath
        nonisolated(unsafe) let daemon = self  // touched again only on the loop thread, in the post
        let started = DetachedThread.run {
            let result = Result { () throws(ConfigurationError) in try ConfigurationLoader.load(path: path) }
            post.post { daemon.finishReload(result) }
        }
        if !started {
            finishReload(Result { () throws(ConfigurationError) in try ConfigurationLoader.load(path: path) })
        }
    }

    /// Loop thread: applies (or refuses) what the reload thread loaded.
    private func finishReload(_ result: Result<ConfigurationLoader.Loaded, ConfigurationError>) {
        isReloading = false
        defer {
            if reloadAgain {
                reloadAgain = false
                reload()
            }
        }
        guard !isStopping else { return }
        let loaded: ConfigurationLoader.Loaded
        switch result {
        case .success(let value):
            loaded = value
        case .failure(let error):
            logger.error("SIGHUP: configuration not reloaded, keeping the one in force: \(error)")
            notifier?.send("READY=1", "STATUS=listening on \(listeningOn); last reload refused: \(error)")
            return
        }
        var next = loaded.configuration.overridden(by: options)
        next.socketGroup = configuration.socketGroup
        if next.sync != configuration.sync {
            logger.warning("SIGHUP: the [sync] keys changed; the store keeps its values until the next start")
            next.sync = configuration.sync
        }
        let changed = next != configuration
        configuration = next
        configurationFiles = loaded.files
        logger.level = next.logLevel
        listener?.configuration = next.connectionConfiguration
        (handler as? ConfigurationReloading)?.apply(next)
        let files = loaded.files.isEmpty ? "built-in defaults" : loaded.files.joined(separator: ", ")
        logger.notice(
            "SIGHUP: configuration reloaded from \(files)\(changed ? "" : " (unchanged)"); "
                + "it applies to sessions and connections opened from now on")
        notifier?.send("READY=1", "STATUS=listening on \(listeningOn); configuration reloaded")
    }

    /// Stops accepting, lets the handler finish, drains connections until the deadline.
    private func stop(reason: String) {
        guard let loop, !isStopping else { return }
        isStopping = true
        notifier?.send("STOPPING=1", "STATUS=stopping (\(reason))")
        logger.notice("\(reason): stopping, \(loop.connections.count) connection(s) to drain")
        listener?.close()
        handler?.shutdown()
        loop.flushPending()
        // The drain deadline below is the one bound: a connection's own flush timeout, were it the same
        // 2 s, would race it, and which fired first (and so what the log says) would depend on the timers.
        for connection in Array(loop.connections.values) {
            connection.closeAfterFlush(
                reason: "daemon stopping", level: .debug, timeoutMilliseconds: 2 * Self.drainTimeoutMilliseconds)
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
        watchdogTimer?.close()
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

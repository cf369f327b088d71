// SPDX-License-Identifier: Apache-2.0
import CLibUV
import Glibc
import SnapbackDaemon
import SnapbackWeb

/// The bridge: its listening sockets on loopback, its pages, and the limits across them (connections in
/// all and per app). Loop-confined.
final class Bridge {
    let loop: EventLoop
    /// Where the pages' long work goes (the manifests of `readCues`), off the loop every page shares.
    let worker: LoopWorker
    /// The configuration in force: a reload (``reload(_:)``) replaces its apps and the limits of pages
    /// accepted after it.
    private(set) var configuration: BridgeConfiguration
    let files: [String: Handshake.StaticFile]
    private var listeners: [UnsafeMutablePointer<uv_tcp_t>] = []
    private var pages: [UInt64: PageConnection] = [:]
    /// Upgraded pages, by app index.
    private var pagesPerApp: [Int]
    private var upgradedPages: Set<UInt64> = []
    private var nextId: UInt64 = 1
    private var stopping = false
    /// Called once every page is gone after ``stop()``.
    var whenStopped: (() -> Void)?

    /// Sockets accepted beyond the page limit, still in their handshake: the slack that lets a page be
    /// told it is over the limit by a close code rather than a reset.
    static let handshakeSlack = 8

    var listeningOn: [String] = []

    init(loop: EventLoop, configuration: BridgeConfiguration, files: [String: Handshake.StaticFile]) {
        self.loop = loop
        worker = LoopWorker(loop: loop)
        self.configuration = configuration
        self.files = files
        pagesPerApp = Array(repeating: 0, count: configuration.apps.count)
    }

    /// Listens on the activated sockets, or binds the configured loopback addresses.
    func listen(activated: [Int32]?) throws(LibUVError) {
        if let activated {
            for fd in activated {
                let handle = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
                uv_tcp_init(loop.raw, handle)
                let opened = uv_tcp_open(handle, uv_os_sock_t(fd))
                guard opened == 0 else { throw LibUVError("uv_tcp_open fd \(fd)", opened) }
                try startListening(handle, name: "fd \(fd)")
            }
            return
        }
        for address in configuration.listen {
            let handle = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
            uv_tcp_init(loop.raw, handle)
            var storage = sockaddr_storage()
            let parsed = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa -> Int32 in
                    address.contains(":")
                        ? sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                            uv_ip6_addr(address, Int32(configuration.port), $0)
                        }
                        : sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                            uv_ip4_addr(address, Int32(configuration.port), $0)
                        }
                }
            }
            guard parsed == 0 else { throw LibUVError("address \(address)", parsed) }
            let bound = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    uv_tcp_bind(handle, $0, address.contains(":") ? UInt32(UV_TCP_IPV6ONLY.rawValue) : 0)
                }
            }
            guard bound == 0 else { throw LibUVError("bind \(address) port \(configuration.port)", bound) }
            try startListening(
                handle, name: address.contains(":") ? "[\(address)]:\(configuration.port)" : "\(address):\(configuration.port)")
        }
    }

    private func startListening(_ handle: UnsafeMutablePointer<uv_tcp_t>, name: String) throws(LibUVError) {
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        let result = uv_listen(asStream(handle), 64) { server, status in
            let bridge = Unmanaged<Bridge>.fromOpaque(server!.pointee.data).takeUnretainedValue()
            bridge.accept(server!, status: status)
        }
        guard result == 0 else { throw LibUVError("listen on \(name)", result) }
        listeners.append(handle)
        listeningOn.append(name)
    }

    private func accept(_ server: UnsafeMutablePointer<uv_stream_t>, status: Int32) {
        guard status == 0 else {
            loop.logger.warning("accept: \(uvErrorDescription(status))")
            return
        }
        let handle = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
        uv_tcp_init(loop.raw, handle)
        guard uv_accept(server, asStream(handle)) == 0 else {
            uv_close(asHandle(handle)) { $0!.deallocate() }
            return
        }
        if stopping || pages.count >= configuration.maxConnections + Self.handshakeSlack {
            // Over even the handshake slack: nothing is read from such a peer.
            loop.logger.warning("connection refused: \(pages.count) open, limit \(configuration.maxConnections) pages")
            uv_close(asHandle(handle)) { $0!.deallocate() }
            return
        }
        uv_tcp_nodelay(handle, 1)
        let page = PageConnection(id: nextId, bridge: self, loop: loop, handle: handle, limits: configuration)
        nextId += 1
        pages[page.id] = page
        page.start()
    }

    /// A page completed its upgrade: nil if it may stay, else why not (told to it as 1013).
    func admit(_ page: PageConnection, appIndex: Int) -> String? {
        let app = configuration.apps[appIndex]
        if upgradedPages.count >= configuration.maxConnections {
            return "the bridge serves at most \(configuration.maxConnections) pages at once"
        }
        if pagesPerApp[appIndex] >= app.maxConnections {
            return "app \(app.name) may have at most \(app.maxConnections) pages connected at once"
        }
        pagesPerApp[appIndex] += 1
        upgradedPages.insert(page.id)
        return nil
    }

    func remove(_ page: PageConnection) {
        if upgradedPages.remove(page.id) != nil, let index = page.appIndex {
            pagesPerApp[index] -= 1
        }
        pages[page.id] = nil
        if stopping && pages.isEmpty, let body = whenStopped {
            whenStopped = nil
            body()
        }
    }

    /// Puts `new` in force, or says why not (it changes what only a restart can: the listening
    /// sockets, snapbackd's socket, the script served). A page of an app that `new` keeps unchanged (same
    /// name, origins, token, profiles, grants, limit) stays connected, under the new `[limits]`; a page of
    /// an app removed or changed is closed 1012, since what it was admitted under no longer holds.
    func reload(_ new: BridgeConfiguration) -> String? {
        if new.listen != configuration.listen || new.port != configuration.port {
            return "the listening addresses or port changed"
        }
        if new.daemonSocket != configuration.daemonSocket { return "socket changed" }
        if new.script != configuration.script { return "script changed" }
        var kept: [Int: Int] = [:]
        for (index, app) in configuration.apps.enumerated() {
            if let found = new.apps.firstIndex(where: { $0.name == app.name }), new.apps[found] == app { kept[index] = found }
        }
        let old = configuration.apps
        configuration = new
        pagesPerApp = Array(repeating: 0, count: new.apps.count)
        for page in pages.values {
            page.apply(limits: new)
            guard let index = page.appIndex else { continue }  // in its handshake: decides under `new`
            if let found = kept[index] {
                page.reassign(appIndex: found)
                if upgradedPages.contains(page.id) { pagesPerApp[found] += 1 }
                continue
            }
            // Out of the counts now: its app's slot in them is gone.
            upgradedPages.remove(page.id)
            let what = new.apps.contains { $0.name == old[index].name } ? "changed" : "removed"
            page.closeWebSocket(.serviceRestart, "app \(old[index].name) was \(what) by a configuration reload")
        }
        return nil
    }

    /// Stops listening and closes every page with 1001 (going away).
    func stop() {
        stopping = true
        for handle in listeners {
            uv_close(asHandle(handle)) { $0!.deallocate() }
        }
        listeners = []
        for page in pages.values {
            page.closeWebSocket(.goingAway, "snapback-web is stopping")
            if case .handshake = page.state { page.abort("snapback-web is stopping") }
        }
        if pages.isEmpty, let body = whenStopped {
            whenStopped = nil
            body()
        }
    }

    var pageCount: Int { pages.count }
}

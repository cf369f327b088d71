// SPDX-License-Identifier: Apache-2.0
// snapback.js: a page's <video> under snapback, through snapback-web (docs/web.md). One ES module, no
// dependency, no build step; served by the bridge at /snapback.js.
//
//   import { attach } from "http://127.0.0.1:9932/snapback.js";
//   const player = attach(video, { token, contentId: "film", breaks: [{ id: "mid", start: 600, duration: 30 }],
//                                  onPush: (push) => banner(push.reason) });
//
// It reports what the viewer and the element do (playhead, seeks from/to, pause, rate, end), carries out
// the seeks snapback pushes (and does not report them as the viewer's), gives the page every push to show
// (it shows nothing itself), reconnects and reopens its session where the video is, and closes the
// session on pagehide.

const CALLSIGN = "Snapback.1.";
const SUBPROTOCOL = "snapback.v1.json";
const TOKEN_PREFIX = "snapback.token.";
/// How close (seconds) the element's position must be to a seek snapback.js made for the seek to be its own.
const OWN_SEEK_TOLERANCE = 0.3;

/// Attaches `video` to snapback. Options:
///   bridge     the bridge's JSON-RPC URL (default: ws://<the host this module came from>/jsonrpc)
///   token      the app's token (snapback-web.conf: the app's entry)
///   contentId, streamId, profile   as OpenSession takes them (streamId defaults to the video's URL)
///   breaks     [{id, start, duration, adDurations}] in stream seconds: the ads in the video's own timeline
///   resume     OpenSession's ResumeOptions (default {useBookmark: true})
///   policyPreset, contentDuration   passed on to OpenSession
///   onPush(push)      every push, proto3 JSON (push.reason says why); the seeks are already carried out
///   onSession(reply)  each OpenSession reply (again after a reconnect)
///   onError(error)    a refused call or a lost connection ({code, message})
/// Returns {close(), call(method, params), get sessionId(), get connected()}.
export function attach(video, options = {}) {
  const player = new Player(video, options);
  player.start();
  return player;
}

class Player {
  constructor(video, options) {
    this.video = video;
    this.options = options;
    this.bridge = options.bridge || new URL("/jsonrpc", import.meta.url).href.replace(/^http/, "ws");
    this.listenerId = "snapback" + Math.floor(Math.random() * 1e9);
    this.ws = null;
    this.sessionId = null;
    this.nextId = 1;
    this.calls = new Map();
    this.closed = false;
    this.retry = 0;
    this.retryTimer = null;
    this.lastPosition = null;
    this.seekFrom = null;
    this.ownSeek = null;
    this.opens = 0;
    this.listeners = [];
  }

  get connected() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN && this.sessionId !== null;
  }

  start() {
    const on = (target, event, handler) => {
      target.addEventListener(event, handler);
      this.listeners.push([target, event, handler]);
    };
    const v = this.video;
    on(v, "timeupdate", () => this.playhead());
    on(v, "playing", () => this.playhead());
    on(v, "ratechange", () => this.playhead());
    on(v, "seeking", () => this.seeking());
    on(v, "seeked", () => this.seeked());
    on(v, "pause", () => {
      if (!v.ended && !v.seeking) this.event("pause", { streamTime: v.currentTime });
    });
    on(v, "ended", () => this.event("contentComplete", {}));
    on(window, "pagehide", () => this.close());
    this.connect();
  }

  // The connection: the token as a sub-protocol entry (out of URLs and logs), register, then OpenSession.
  connect() {
    if (this.closed) return;
    const ws = new WebSocket(this.bridge, [SUBPROTOCOL, TOKEN_PREFIX + this.options.token]);
    this.ws = ws;
    ws.onopen = () => {
      this.retry = 0;
      this.call("register", { event: "push", id: this.listenerId }).catch((e) => this.error(e));
      this.open();
    };
    ws.onmessage = (message) => this.received(message.data);
    ws.onclose = (close) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.sessionId = null;
      for (const [, call] of this.calls) call.reject({ code: close.code, message: close.reason || "connection closed" });
      this.calls.clear();
      if (this.closed) return;
      this.error({ code: close.code, message: close.reason || "connection to snapback-web lost" });
      // Back off 0.5 s, 1 s, 2 s … up to 10 s; the session is reopened where the video then is.
      const delay = Math.min(10000, 500 * 2 ** this.retry++);
      this.retryTimer = setTimeout(() => this.connect(), delay);
    };
  }

  open() {
    const o = this.options;
    const request = {
      streamId: o.streamId || this.video.currentSrc || this.video.src || "",
      contentId: o.contentId || "",
      profile: o.profile || "",
      breaks: o.breaks || [],
    };
    if (o.policyPreset) request.policyPreset = o.policyPreset;
    const duration = o.contentDuration;
    if (duration !== undefined) request.contentDuration = duration;
    // The first open resumes as the page asks (from the bookmark by default); a reopen after a lost
    // connection resumes where the video is, in its own breaks, as libsnapback does.
    const reopen = this.opens > 0;
    request.resume = reopen ? { resumeStreamTime: this.video.currentTime } : o.resume || { useBookmark: true };
    this.opens++;
    this.call("openSession", request)
      .then((reply) => {
        this.sessionId = reply.sessionId;
        if (!reopen && reply.startStreamTime !== undefined) this.seekTo(reply.startStreamTime);
        this.lastPosition = null;
        this.playhead();
        if (o.onSession) o.onSession(reply);
      })
      .catch((e) => this.error(e));
  }

  call(method, params) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return Promise.reject({ code: 14, message: "not connected" });
    const id = this.nextId++;
    ws.send(JSON.stringify({ jsonrpc: "2.0", id, method: CALLSIGN + method, params }));
    return new Promise((resolve, reject) => this.calls.set(id, { resolve, reject }));
  }

  // A session event: sent once the session is open (before, the element's events are not yet its).
  event(method, params) {
    if (!this.connected) return;
    this.call(method, { sessionId: this.sessionId, ...params }).catch((e) => this.error(e));
  }

  received(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.id !== undefined && this.calls.has(message.id)) {
      const call = this.calls.get(message.id);
      this.calls.delete(message.id);
      if (message.error) call.reject(message.error);
      else call.resolve(message.result);
    } else if (message.method === this.listenerId + ".push") {
      this.pushed(message.params);
    }
  }

  pushed(push) {
    if (this.sessionId === null || push.sessionId !== this.sessionId) return;
    if (push.seek) {
      const to = push.seek.streamTime || 0;
      // A resume push names the start the page already took from the reply.
      if (Math.abs(this.video.currentTime - to) > OWN_SEEK_TOLERANCE) this.seekTo(to);
    }
    if (this.options.onPush) this.options.onPush(push);
  }

  seekTo(time) {
    this.ownSeek = time;
    this.video.currentTime = time;
  }

  isOwnSeek() {
    return this.ownSeek !== null && Math.abs(this.video.currentTime - this.ownSeek) <= OWN_SEEK_TOLERANCE;
  }

  playhead() {
    const v = this.video;
    if (v.seeking) return;
    this.lastPosition = v.currentTime;
    this.event("reportPlayhead", { streamTime: v.currentTime, rate: v.playbackRate, playing: !v.paused && !v.ended });
  }

  // `seeking` comes with currentTime already at the target: where the viewer was is the last position seen.
  seeking() {
    if (this.isOwnSeek()) return;
    if (this.seekFrom === null) {
      this.seekFrom = this.lastPosition ?? 0;
      this.event("seekStarted", { fromStreamTime: this.seekFrom });
    }
  }

  seeked() {
    if (this.isOwnSeek()) {
      this.ownSeek = null;
      this.playhead();
      return;
    }
    if (this.seekFrom === null) return;
    const from = this.seekFrom;
    this.seekFrom = null;
    this.event("seekEnded", { fromStreamTime: from, toStreamTime: this.video.currentTime });
    this.lastPosition = this.video.currentTime;
  }

  error(e) {
    if (this.options.onError) this.options.onError(e);
  }

  /// Closes the session (the daemon saves its bookmark) and the connection; the element is left alone.
  close() {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    for (const [target, event, handler] of this.listeners) target.removeEventListener(event, handler);
    this.listeners = [];
    const ws = this.ws;
    if (!ws) return;
    if (ws.readyState === WebSocket.OPEN && this.sessionId !== null) {
      ws.send(JSON.stringify({ jsonrpc: "2.0", method: CALLSIGN + "closeSession", params: { sessionId: this.sessionId } }));
    }
    ws.close(1000);
  }
}

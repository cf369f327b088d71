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
///   hls        an hls.js instance playing into `video` (with enableInterstitialPlayback): its interstitials
///              are the breaks (an ad-rules session: stream time is the primary content's time, each
///              interstitial a mid-roll `midroll-T`; on a live playlist a live session, told each new
///              interstitial as the schedule grows), its primary time is the position, and its own seeks
///              (into and out of an interstitial) are not the viewer's. A stream without interstitials
///              is stitched: the breaks its playlists announce (EXT-X-DATERANGE SCTE35-OUT, CUE-OUT…) are
///              read by the bridge with libsnapback's readers (readCues), not by a parser here; a live
///              playlist's refreshes update them (UpdateBreaks).
/// Returns {close(), call(method, params), get sessionId(), get connected(), get playing()}: `playing` is
/// what the element really does (not paused or ended, not seeking, data to play), as the daemon is told.
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
    this.hls = options.hls || null;
    // hls.js: the interstitials scheduled (primary start times), and the one playing, if any.
    this.interstitials = [];
    this.inInterstitial = null;
    // hls.js: the last playlist text not yet read by the bridge, whether a read is awaited, what the last
    // read said (readCues's result), and the stitched breaks the session was last given.
    this.playlist = null;
    this.cuesPending = false;
    this.cues = null;
    this.sentBreaks = null;
    // A live ad-rules session (hls.js's interstitials on a live playlist): each interstitial told to
    // snapbackd, by its id (the date range's), at the time it had then. hls.js's times of an interstitial
    // move by some milliseconds as a live playlist's refreshes map its dates again: an interstitial is
    // told once, and its break keeps that time (later times are near it: breakIdAt finds it).
    this.sentSchedule = null;
    // hls.js's word on the playlist (LEVEL_LOADED): live or not.
    this.hlsLive = false;
  }

  // The position in stream time: with hls.js, the primary content's (an interstitial's own time is not).
  // Outside an interstitial the element plays the primary content (hls.js's own primary time lags a
  // viewer's seek until its listeners have run).
  position() {
    const im = this.hls && this.hls.interstitialsManager;
    return im && im.primary && this.inInterstitial !== null ? im.primary.currentTime : this.video.currentTime;
  }

  // The element's `ended` is the content's only outside hls.js's interstitials: an interstitial's asset
  // plays in the same element, and its end is the ad's (the element is then handed back to the primary).
  primaryEnded() {
    if (!this.hls) return true;
    if (this.inInterstitial !== null || this.hlsResuming) return false;
    const im = this.hls.interstitialsManager;
    if (!im || !im.primary) return true;  // no interstitial scheduled: the element plays the primary content only
    if (im.playingItem && im.playingItem.event) return false;  // an interstitial's item of the schedule
    return !(im.primary.duration > 0) || im.primary.currentTime >= im.primary.duration - 1;
  }

  /// Whether the element really plays: not paused or ended, not seeking, and with data to go on
  /// (readyState HAVE_FUTURE_DATA), which `!paused` alone does not say (a seek that never completes, a
  /// stalled download).
  get playing() {
    const v = this.video;
    return !v.paused && !v.ended && !v.seeking && v.readyState >= HTMLMediaElement.HAVE_FUTURE_DATA;
  }

  get connected() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN && this.sessionId !== null;
  }

  start() {
    // Capturing: at the element, before hls.js's own listeners react to the viewer's seek with seeks of theirs.
    const on = (target, event, handler) => {
      target.addEventListener(event, handler, true);
      this.listeners.push([target, event, handler]);
    };
    const v = this.video;
    on(v, "timeupdate", () => this.playhead());
    on(v, "playing", () => {
      this.played = true;
      this.playhead();
    });
    on(v, "ratechange", () => this.playhead());
    on(v, "seeking", () => {
      this.seeking();
      this.stalled();
    });
    on(v, "seeked", () => this.seeked());
    // Out of data: the element neither advances nor says so but by `waiting` (readyState below
    // HAVE_FUTURE_DATA); `canplay`/`playing` and the next timeupdate report it playing again.
    on(v, "waiting", () => this.stalled());
    on(v, "canplay", () => this.playhead());
    on(v, "pause", () => {
      if (v.ended || v.seeking) return;
      this.reportedPlaying = false;
      this.event("pause", { streamTime: v.currentTime });
    });
    on(v, "ended", () => {
      if (!this.primaryEnded()) return;
      this.event("contentComplete", {});
    });
    on(window, "pagehide", () => this.close());
    if (this.hls) this.watchHls();
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
      // With hls.js the first session waits for the interstitial schedule (its ad rules) and for the
      // bridge's reading of the playlist (its stitched breaks).
      if (this.hls && this.opens === 0) {
        this.readCues();
        this.openWhenKnown();
      } else {
        this.open();
      }
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
      breaks: this.hls ? [] : o.breaks || [],
    };
    // hls.js: interstitials make an ad-rules session; without them the stream is stitched, its breaks
    // those the bridge read in its playlist (interstitials win when a stream has both).
    // On a live playlist the schedule grows as it does (updateSchedule).
    this.sentSchedule = null;
    if (this.hls && this.interstitials.length > 0) {
      request.adRules = { midrollTimes: this.interstitials.map((i) => i.start) };
      if ((this.cues && this.cues.live) || this.hlsLive) {
        request.kind = "SESSION_KIND_LIVE";
        this.sentSchedule = new Map(this.interstitials.map((i) => [i.id, i.start]));
      }
    } else if (this.hls && this.cues) {
      request.breaks = this.cues.session || [];
      if (this.cues.live) request.kind = "SESSION_KIND_LIVE";
    }
    this.sentBreaks = JSON.stringify(request.breaks);
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
        if (this.hls) this.readBreakIds();
        this.updateStitched();  // a playlist read while the session was opening
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
      const target = this.ownSeek ?? this.position();
      if (this.inInterstitial !== null || this.hlsResuming) this.pendingSeek = to;  // once hls.js is back in the primary content
      else if (Math.abs(target - to) > OWN_SEEK_TOLERANCE) this.seekTo(to);
    }
    if (this.options.onPush) this.options.onPush(push);
  }

  // Before its metadata an element may not take a position (WebKit reads it back as 0): the seek waits.
  seekTo(time) {
    this.ownSeek = time;
    const v = this.video;
    // Through hls.js's primary player when it schedules interstitials (without them it has none).
    const im = this.hls && this.hls.interstitialsManager;
    if (im && im.primary && typeof im.primary.seekTo === "function") {
      im.primary.seekTo(time);
      return;
    }
    if (v.readyState >= HTMLMediaElement.HAVE_METADATA) {
      v.currentTime = time;
      return;
    }
    v.addEventListener("loadedmetadata", () => {
      if (this.ownSeek === time) v.currentTime = time;
    }, { once: true });
  }

  isOwnSeek() {
    // With hls.js, every seek while an interstitial plays or hands back to the primary content is its own.
    if (this.inInterstitial !== null || this.hlsResuming) return true;
    return this.ownSeek !== null && Math.abs(this.position() - this.ownSeek) <= OWN_SEEK_TOLERANCE;
  }

  playhead() {
    const v = this.video;
    // Until a pushed seek is carried out, the old position is no news (the daemon takes the seek as done).
    if (v.seeking || (this.ownSeek !== null && !this.isOwnSeek())) return;
    // During an interstitial the element plays the ad: the primary content is held where it stopped.
    if (this.inInterstitial !== null) return;
    const at = this.position();
    this.lastPosition = at;
    this.reportedPlaying = this.connected && this.playing;
    this.event("reportPlayhead", { streamTime: at, rate: v.playbackRate, playing: this.reportedPlaying });
  }

  // The element stopped advancing (seeking, or waiting for data) after a report that it played: the
  // daemon, which extrapolates a playing session's position, is told it does not play. The position is
  // the one it already has (a pushed seek's target, or the last reported), so nothing is decided by it.
  stalled() {
    if (!this.reportedPlaying || this.playing || this.inInterstitial !== null || this.hlsResuming) return;
    const at = this.ownSeek ?? this.lastPosition;
    if (at === null) return;
    this.reportedPlaying = false;
    this.event("reportPlayhead", { streamTime: at, rate: this.video.playbackRate, playing: false });
  }

  // `seeking` comes with currentTime already at the target: where the viewer was is the last position seen.
  // With hls.js the seek is told whole at once, before hls.js answers it by playing an interstitial.
  seeking() {
    if (this.isOwnSeek()) return;
    if (this.hls) {
      if (!this.played) return;  // hls.js placing the start, not a viewer
      const from = this.lastPosition ?? 0;
      this.lastPosition = this.position();
      this.event("seekEnded", { fromStreamTime: from, toStreamTime: this.lastPosition });
      return;
    }
    if (this.seekFrom === null) {
      this.seekFrom = this.lastPosition ?? 0;
      this.event("seekStarted", { fromStreamTime: this.seekFrom });
    }
  }

  seeked() {
    if (this.hlsResuming) {
      this.resumed();
      return;
    }
    if (this.hls && this.inInterstitial !== null) return;
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

  resumed() {
    if (!this.hlsResuming) return;
    this.hlsResuming = false;
    clearTimeout(this.resumeTimer);
    this.lastPosition = this.position();
    if (this.pendingSeek !== undefined) {
      const to = this.pendingSeek;
      this.pendingSeek = undefined;
      this.seekTo(to);
    } else {
      this.playhead();
    }
  }

  // The ids snapbackd gave the interstitials' mid-rolls, by their start.
  readBreakIds() {
    this.call("getSessionState", { sessionId: this.sessionId })
      .then((state) => {
        this.breakIds = (state.breaks || []).map((b) => ({ id: b.id, start: b.start || 0 }));
      })
      .catch((e) => this.error(e));
  }

  breakIdAt(start) {
    let best = null;
    for (const b of this.breakIds || []) if (best === null || Math.abs(b.start - start) < Math.abs(best.start - start)) best = b;
    return best ? best.id : "midroll-" + String(Math.round(start * 1000) / 1000);
  }

  // The first session opens once hls.js's schedule is known and no reading of the playlist is awaited.
  openWhenKnown() {
    if (this.opens === 0 && this.scheduleKnown && !this.cuesPending && this.ws && this.ws.readyState === WebSocket.OPEN) this.open();
  }

  // hls.js's playlist text, as its loader fetched it (the XMLHttpRequest of its default loader).
  levelLoaded(data) {
    if (data.details) this.hlsLive = data.details.live === true;
    const request = data.networkDetails;
    if (!request || typeof request.responseText !== "string") return;
    this.playlist = request.responseText;
    this.readCues();
  }

  // The bridge reads the playlist with libsnapback's readers, keeping what each refresh of a live one
  // said; an open session is given the stitched breaks when they changed.
  // One read at a time: a refresh that comes meanwhile waits, and only the latest is read.
  readCues() {
    if (this.cuesPending || this.playlist === null || !this.ws || this.ws.readyState !== WebSocket.OPEN) return;
    const text = this.playlist;
    this.playlist = null;
    this.cuesPending = true;
    this.call("readCues", { text, format: "hls", reader: "playlist" })
      .then((result) => {
        this.cues = result;
        this.updateStitched();
      })
      .catch((e) => this.error(e))
      .finally(() => {
        this.cuesPending = false;
        this.readCues();
        this.openWhenKnown();
      });
  }

  updateStitched() {
    if (this.sessionId === null || !this.cues || this.interstitials.length > 0) return;
    const breaks = this.cues.session || [];
    if (JSON.stringify(breaks) === this.sentBreaks) return;
    this.sentBreaks = JSON.stringify(breaks);
    this.event("updateBreaks", { breaks });
  }

  // A live ad-rules session is told the interstitial schedule when it changed (UpdateBreaks' midroll_times:
  // snapbackd adds the new mid-rolls), then its break ids are read again. An on-demand schedule is whole
  // when the session opens.
  updateSchedule() {
    if (this.sessionId === null || this.sentSchedule === null) return;
    const fresh = this.interstitials.filter((i) => !this.sentSchedule.has(i.id));
    if (fresh.length === 0) return;
    for (const i of fresh) this.sentSchedule.set(i.id, i.start);
    this.call("updateBreaks", { sessionId: this.sessionId, midrollTimes: [...this.sentSchedule.values()] })
      .then(() => this.readBreakIds())
      .catch((e) => this.error(e));
  }

  // hls.js's interstitials: the schedule (the session's ad rules, grown on a live playlist), and each one
  // played, as AdBreakStarted/AdBreakEnded.
  watchHls() {
    const Events = this.hls.constructor.Events;
    const id = (start) => this.breakIdAt(start);
    const scheduled = () => {
      if (this.scheduleKnown) return;
      this.scheduleKnown = true;
      this.openWhenKnown();
    };
    const handlers = [
      [Events.INTERSTITIALS_UPDATED, (_, data) => {
        this.interstitials = data.events.map((e) => ({ id: e.identifier, start: e.startTime, duration: e.duration }));
        scheduled();
        this.updateSchedule();
      }],
      // A stream without interstitials has no INTERSTITIALS_UPDATED: its playlist, once read, says so.
      [Events.LEVEL_UPDATED, () => setTimeout(scheduled, 0)],
      [Events.LEVEL_LOADED, (_, data) => this.levelLoaded(data)],
      [Events.INTERSTITIAL_STARTED, (_, data) => {
        const start = data.event ? data.event.startTime : this.position();
        this.inInterstitial = start;
        this.event("adBreakStarted", { breakId: id(start) });
      }],
      [Events.INTERSTITIAL_ENDED, () => {
        if (this.inInterstitial === null) return;
        this.event("adBreakEnded", { breakId: id(this.inInterstitial) });
      }],
      // hls.js seeks back into the primary content (where it chooses, hls.js#7029): that seek is its
      // own, and a seek snapback pushed meanwhile follows it.
      [Events.INTERSTITIALS_PRIMARY_RESUMED, () => {
        this.inInterstitial = null;
        this.hlsResuming = true;
        clearTimeout(this.resumeTimer);
        this.resumeTimer = setTimeout(() => this.resumed(), 1000);
      }],
    ];
    for (const [event, handler] of handlers) this.hls.on(event, handler);
    this.hlsHandlers = handlers;
  }

  error(e) {
    if (this.options.onError) this.options.onError(e);
  }

  /// Closes the session (the daemon saves its bookmark) and the connection; the element is left alone.
  close() {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.resumeTimer);
    for (const [target, event, handler] of this.listeners) target.removeEventListener(event, handler, true);
    this.listeners = [];
    for (const [event, handler] of this.hlsHandlers || []) this.hls.off(event, handler);
    const ws = this.ws;
    if (!ws) return;
    if (ws.readyState === WebSocket.OPEN && this.sessionId !== null) {
      ws.send(JSON.stringify({ jsonrpc: "2.0", method: CALLSIGN + "closeSession", params: { sessionId: this.sessionId } }));
    }
    ws.close(1000);
  }
}

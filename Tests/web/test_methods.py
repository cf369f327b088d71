#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""snapback-web's methods against the real snapbackd, over real sockets: every `Snapback.1.<method>` by the
generated table, params and results in proto3 JSON, snapbackd's status as the JSON-RPC error, pushes as
Thunder notifications; and the scoping of two apps: neither sees the other's sessions, content ids or
bookmarks, a profile not the app's is refused, admin and stream methods need their grant, and a page has one
stream of each (a further one: FAILED_PRECONDITION). readCues: libsnapback's readers in the bridge, bounded,
and read off the loop (a call behind the largest playlist the default bounds admit is answered first; a
page's reads in order, one beyond those waiting refused RESOURCE_EXHAUSTED).

    python3 Tests/web/test_methods.py .build/debug/snapbackd .build/debug/snapback-web

One PASS/FAIL line per check; exits non-zero if any failed.
"""

import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import FAILURES, check, expect, free_port, show_logs, start_bridge, start_daemon, stop, write_config  # noqa: E402
from wsclient import WebSocket  # noqa: E402
import media  # noqa: E402

GUIDE = ("http://127.0.0.1:8000", "guide-token-0123456789abcdef")
KIDS = ("http://127.0.0.1:8001", "kids-token-0123456789abcdefg")
OPS = ("http://127.0.0.1:8002", "ops-token-0123456789abcdefgh")
WATCHER = ("http://127.0.0.1:8003", "watcher-token-0123456789abc")
APPS = {"guide": {"origin": GUIDE[0], "token": GUIDE[1], "profiles": "alice"},
        "kids": {"origin": KIDS[0], "token": KIDS[1], "profiles": "kid"},
        "ops": {"origin": OPS[0], "token": OPS[1], "grants": "admin watch-decisions"},
        "watcher": {"origin": WATCHER[0], "token": WATCHER[1], "grants": "watch-decisions sync"}}
# readCues of a page that wait while one of its is read (PageRPC.maxCueReadsWaiting).
CUE_READS_WAITING = 4
BREAKS = [{"id": "mid", "start": 10, "duration": 5, "adDurations": [5]}]


class Page:
    """One page's WebSocket: calls answered by id, notifications kept aside as they come."""

    def __init__(self, port, app):
        self.ws = WebSocket("127.0.0.1", port, path="/jsonrpc?token=" + app[1], origin=app[0])
        expect(self.ws.status == 101, "upgrade %d %r" % (self.ws.status, self.ws.body))
        self.notes = []
        self.next = 1

    def call(self, method, params=None):
        self.next += 1
        id = self.next
        message = {"jsonrpc": "2.0", "id": id, "method": "Snapback.1." + method}
        if params is not None:
            message["params"] = params
        import json
        self.ws.send_text(json.dumps(message))
        while True:
            reply = self.ws.recv_json(timeout=5)
            if "id" in reply:
                expect(reply["id"] == id, "answer to %r, wanted %r: %r" % (reply["id"], id, reply))
                return reply
            self.notes.append(reply)

    def result(self, method, params=None):
        reply = self.call(method, params)
        expect("result" in reply, "%s: %r" % (method, reply))
        return reply["result"]

    def error(self, method, params=None):
        reply = self.call(method, params)
        expect("error" in reply, "%s answered %r, wanted an error" % (method, reply))
        return reply["error"]

    def notification(self, method, timeout=3):
        deadline = time.monotonic() + timeout
        while True:
            for n in self.notes:
                if n["method"] == method:
                    self.notes.remove(n)
                    return n["params"]
            left = deadline - time.monotonic()
            expect(left > 0, "no %s notification (have %r)" % (method, self.notes))
            reply = self.ws.recv_json(timeout=left)
            expect("id" not in reply, "an answer nobody asked for: %r" % reply)
            self.notes.append(reply)

    def close(self):
        self.ws.close()


def main():
    snapbackd, web = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="snapback-web-methods-")
    sock_path = os.path.join(tmp, "snapbackd.sock")
    port = free_port()
    daemon = start_daemon(snapbackd, tmp, sock_path)
    bridge = None
    try:
        config = write_config(tmp, port, sock_path, APPS)
        bridge = start_bridge(web, config, os.path.join(tmp, "snapback-web.log"), port)
        run_checks(port)
    finally:
        stop(bridge, daemon)
        if FAILURES:
            show_logs(tmp, ("snapback-web.log", "snapbackd.log"))
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failed" % len(FAILURES) if FAILURES else "all passed")
    sys.exit(1 if FAILURES else 0)


def run_checks(port):
    state = {}

    def snapback_through_the_bridge():
        page = Page(port, GUIDE)
        expect(page.result("register", {"event": "push", "id": "player"}) is None, "register")
        opened = page.result("openSession", {"streamId": "film.mp4", "contentId": "film", "profile": "alice",
                                             "breaks": BREAKS, "contentDuration": 60})
        sid = opened["sessionId"]
        expect(isinstance(sid, str) and int(sid) > 0, "sessionId as a decimal string: %r" % opened)
        page.result("reportPlayhead", {"sessionId": sid, "streamTime": 2, "rate": 1, "playing": True})
        page.result("seekStarted", {"sessionId": sid, "fromStreamTime": 2})
        page.result("seekEnded", {"sessionId": sid, "fromStreamTime": 2, "toStreamTime": 30})
        push = page.notification("player.push")
        expect(push.get("sessionId") == sid and push["seek"]["streamTime"] == 10 and
               push["seek"]["reason"] == "SEEK_REASON_SNAPBACK", "snapback push %r" % push)
        state["guide"] = (page, sid)
        return "seek 2->30 pushed back to %s (%s)" % (push["seek"]["streamTime"], push.get("reason"))
    check("a seek over an unwatched break: the snapback push as player.push", snapback_through_the_bridge)

    def unary_replies():
        page, sid = state["guide"]
        ct = page.result("contentTimeForStreamTime", {"sessionId": sid, "streamTime": 20})
        at = page.result("breakAt", {"sessionId": sid, "streamTime": 12})
        st = page.result("getSessionState", {"sessionId": sid})
        expect(ct == {"contentTime": 15}, "contentTimeForStreamTime %r" % ct)
        expect(at["previous"]["id"] == "mid" and "next" not in at, "breakAt %r" % at)
        expect(st["breaks"][0]["id"] == "mid", "getSessionState %r" % st)
        return "content time 15, break at 12: %s, state with %d break(s)" % (at["previous"]["id"], len(st["breaks"]))
    check("unary methods answer their reply's JSON", unary_replies)

    def daemon_errors():
        page, sid = state["guide"]
        e = page.error("seekEnded", {"sessionId": "999999", "fromStreamTime": 1, "toStreamTime": 2})
        expect(e["code"] == 5 and e["data"] == {"status": "NOT_FOUND"} and e["message"], "unknown session %r" % e)
        e2 = page.error("seekEnded", {"sessionId": sid, "toStreamTime": "soon"})
        expect(e2["code"] == -32602 and "number" in e2["message"], "bad params %r" % e2)
        e3 = page.error("seekEnded", {"sessionId": sid, "to": 3})
        expect(e3["code"] == -32602 and "no field" in e3["message"], "unknown field %r" % e3)
        e4 = page.error("noSuchMethod", {})
        expect(e4["code"] == -32601, "unknown method %r" % e4)
        return "NOT_FOUND -> %d %r; bad params -32602" % (e["code"], e["message"])
    check("snapbackd's status as the JSON-RPC error, bad params refused before it", daemon_errors)

    def other_app_sees_nothing():
        page, sid = state["guide"]
        kids = Page(port, KIDS)
        kid = kids.result("openSession", {"streamId": "cartoon.mp4", "contentId": "cartoon", "profile": "kid",
                                          "breaks": BREAKS})["sessionId"]
        mine = page.result("listSessions", {})
        theirs = kids.result("listSessions", {})
        expect([s["contentId"] for s in mine.get("sessions", [])] == ["film"], "guide lists %r" % mine)
        expect([s["contentId"] for s in theirs.get("sessions", [])] == ["cartoon"], "kids list %r" % theirs)
        e = kids.error("getSession", {"sessionId": sid})
        expect(e["code"] == 5, "kids GetSession of guide's %r" % e)
        e = kids.error("getSessionState", {"sessionId": sid})
        expect(e["code"] == 5, "kids GetSessionState of guide's %r" % e)
        e = kids.error("seekEnded", {"sessionId": sid, "fromStreamTime": 1, "toStreamTime": 2})
        expect(e["code"] == 5, "kids SeekEnded on guide's %r" % e)
        expect(kids.result("getSession", {"sessionId": kid})["contentId"] == "cartoon", "own GetSession")
        state["kids"] = (kids, kid)
        return "each lists only its own; the other's id is NOT_FOUND"
    check("two apps: neither sees the other's sessions or content ids", other_app_sees_nothing)

    def profiles_and_grants():
        page, _ = state["guide"]
        kids, _ = state["kids"]
        out = []
        for who, p, method, params, code in (
                ("kids", kids, "listBookmarks", {"profile": "alice"}, 7),
                ("kids", kids, "getBookmark", {"profile": "alice", "contentId": "film"}, 7),
                ("kids", kids, "openSession", {"streamId": "x", "contentId": "x", "profile": ""}, 7),
                ("guide", page, "listBookmarks", {}, 7),
                ("guide", page, "deleteBookmark", {"profile": "alice", "contentId": "film"}, 7),
                ("guide", page, "clearBookmarks", {"profile": "alice"}, 7),
                ("guide", page, "watchDecisions", {}, 7),
                ("guide", page, "watchChanges", {}, 7),
                ("guide", page, "merge", {}, 7),
                ("guide", page, "getStatus", {}, 7),
                ("guide", page, "getMetrics", {}, 7),
                ("guide", page, "hello", {"protocolVersion": 1}, 9)):
            e = p.error(method, params)
            expect(e["code"] == code, "%s %s %r: %r" % (who, method, params, e))
            out.append(method)
        return "refused: " + " ".join(out)
    check("a profile not the app's, admin, sync and decisions without their grant: refused", profiles_and_grants)

    def bookmarks_kept_apart():
        page, sid = state["guide"]
        kids, kid = state["kids"]
        page.result("reportPlayhead", {"sessionId": sid, "streamTime": 40, "rate": 1, "playing": True})
        page.result("closeSession", {"sessionId": sid})
        kids.result("reportPlayhead", {"sessionId": kid, "streamTime": 3, "rate": 1, "playing": True})
        kids.result("closeSession", {"sessionId": kid})
        mine = page.result("listBookmarks", {"profile": "alice"})
        theirs = kids.result("listBookmarks", {"profile": "kid"})
        expect([b["contentId"] for b in mine.get("bookmarks", [])] == ["film"], "guide's bookmarks %r" % mine)
        expect("film" not in [b["contentId"] for b in theirs.get("bookmarks", [])], "kids see film: %r" % theirs)
        got = page.result("getBookmark", {"profile": "alice", "contentId": "film"})
        expect(got["contentId"] == "film" and got["profile"] == "alice", "getBookmark %r" % got)
        e = page.error("getSession", {"sessionId": sid})
        expect(e["code"] == 5, "closed session still the page's: %r" % e)
        return "guide: %r; kids: %r" % ([b["contentId"] for b in mine["bookmarks"]],
                                        [b["contentId"] for b in theirs.get("bookmarks", [])])
    check("bookmarks by the app's profiles: each sees only its own", bookmarks_kept_apart)

    def granted_app():
        ops = Page(port, OPS)
        expect(ops.result("register", {"event": "decision", "id": "ops"}) is None, "register decision")
        expect(ops.result("watchDecisions", {}) == {}, "watchDecisions starts")
        everyone = ops.result("listSessions", {})
        page = Page(port, GUIDE)
        page.result("register", {"event": "push", "id": "p"})
        sid = page.result("openSession", {"streamId": "film.mp4", "contentId": "film", "profile": "alice",
                                          "breaks": BREAKS})["sessionId"]
        page.result("reportPlayhead", {"sessionId": sid, "streamTime": 2, "rate": 1, "playing": True})
        page.result("seekEnded", {"sessionId": sid, "fromStreamTime": 2, "toStreamTime": 30})
        decision = ops.notification("ops.decision")
        status = ops.result("getStatus", {})
        metrics = ops.result("getMetrics", {})
        listed = ops.result("listSessions", {})
        page.close()
        ops.close()
        expect(decision.get("sessionId") == sid, "decision of the guide's session %r" % decision)
        expect(sid in [s["sessionId"] for s in listed.get("sessions", [])], "admin lists every session %r" % listed)
        expect(decision.get("kind") == "DECISION_KIND_SEEK" and decision.get("contentId") == "film", "decision %r" % decision)
        expect(metrics.get("families", [{}])[0].get("name") == "snapbackd_seeks_commanded", "getMetrics %r" % metrics.keys())
        return "decision %s; getStatus %d keys; lists %d sessions (before: %d)" % (
            decision.get("kind", decision.get("action", "?")), len(status), len(listed["sessions"]),
            len(everyone.get("sessions", [])))
    check("an app granted admin and watch-decisions: every session, decisions as ops.decision", granted_app)

    def one_stream_of_each():
        # Two of each asked for at once (the second while the first waits for snapbackd), then a third
        # once the first is running: the bridge answers both extra ones itself.
        import json
        page = Page(port, WATCHER)
        out = []
        for method, params in (("watchDecisions", {}), ("watchChanges", {"after": "0"})):
            ids = [page.next + 1, page.next + 2]
            page.next += 2
            for id in ids:
                page.ws.send_text(json.dumps({"jsonrpc": "2.0", "id": id, "method": "Snapback.1." + method, "params": params}))
            replies = {}
            while len(replies) < 2:
                reply = page.ws.recv_json(timeout=5)
                if "id" in reply:
                    replies[reply["id"]] = reply
            expect("result" in replies[ids[0]], "%s: the first %r" % (method, replies[ids[0]]))
            third = page.error(method, params)
            for e in (replies[ids[1]]["error"], third):
                expect(e["code"] == 9 and e["data"] == {"status": "FAILED_PRECONDITION"} and "one per page" in e["message"],
                       "%s: a further one %r" % (method, e))
            out.append("%s: 1 started, 2 refused %d %r" % (method, third["code"], third["message"]))
        other = Page(port, WATCHER)
        expect(other.result("watchDecisions", {}) == {}, "another page's own stream")
        expect(page.result("register", {"event": "decision", "id": "w"}) is None, "the refused page goes on")
        other.close()
        page.close()
        return "; ".join(out) + "; another page has its own"
    check("one WatchDecisions and one WatchChanges stream per page; a further one: FAILED_PRECONDITION", one_stream_of_each)

    def read_cues():
        page = Page(port, GUIDE)
        head = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n"
        seg = lambda first, n: "".join("#EXTINF:10.0,\ns%d.ts\n" % i for i in range(first, first + n))
        opened = head + "#EXT-X-MEDIA-SEQUENCE:0\n" + seg(0, 3) + "#EXT-X-CUE-OUT:DURATION=30\n" + seg(3, 1)
        closed = head + "#EXT-X-MEDIA-SEQUENCE:6\n" + seg(6, 2) + "#EXT-X-CUE-IN\n"
        a = page.result("readCues", {"text": opened, "reader": "live"})
        expect(a["format"] == "hls" and a["live"] is True and "update" not in a, "first read %r" % a)
        expect(a["session"] == [{"id": "cue-out@30", "start": 30, "duration": 30, "open": True}], "open break %r" % a)
        # The reader keeps the break that slid out of the window, and closes it.
        b = page.result("readCues", {"text": closed, "reader": "live"})
        expect(b["session"] == [{"id": "cue-out@30", "start": 30, "duration": 50}], "closed break %r" % b)
        expect(b["update"] == {"breaks": [{"id": "cue-out@30", "start": 30, "duration": 50}]}, "update %r" % b)
        # reset: a new reader, which has not seen the CUE-OUT.
        c = page.result("readCues", {"text": closed, "reader": "live", "reset": True})
        expect(c["session"] == [], "after reset %r" % c)
        vmap = ('<vmap:VMAP xmlns:vmap="http://www.iab.net/videosuite/vmap" version="1.0">'
                '<vmap:AdBreak timeOffset="00:10:00" breakType="linear" breakId="m"><vmap:AdSource>'
                '<vmap:AdTagURI>https://ads.example/x</vmap:AdTagURI></vmap:AdSource></vmap:AdBreak></vmap:VMAP>')
        v = page.result("readCues", {"text": vmap, "reader": "ads"})
        expect(v["format"] == "vmap" and v["adRules"] == {"midrollTimes": [600]} and "session" not in v, "vmap %r" % v)
        e = page.error("readCues", {"text": "<!DOCTYPE x [<!ENTITY a 'b'>]><MPD/>", "reader": "mpd", "format": "dash"})
        expect(e["code"] == 3 and e["data"] == {"status": "INVALID_ARGUMENT"} and "DOCTYPE" in e["message"], "refused %r" % e)
        e2 = page.error("readCues", {"text": 5})
        expect(e2["code"] == -32602 and "wrong type" in e2["message"], "text not a string %r" % e2)
        e3 = page.error("readCues", {"text": opened, "format": "m3u"})
        expect(e3["code"] == -32602 and "hls, dash or vmap" in e3["message"], "format %r" % e3)
        # "mpd" was refused whole and kept no reader: "live" and "ads" are held, two more may be.
        page.result("readCues", {"text": opened, "reader": "third"})
        page.result("readCues", {"text": opened, "reader": "fourth"})
        e4 = page.error("readCues", {"text": opened, "reader": "fifth"})
        expect(e4["code"] == 8 and "at most 4" in e4["message"], "a fifth reader %r" % e4)
        page.close()
        return "a live playlist's CUE-OUT opened then closed across refreshes; VMAP as ad rules; DOCTYPE %r; fifth reader %r" % (
            e["message"], e4["message"])
    check("readCues: a page's manifests read by libsnapback's readers in the bridge, bounded", read_cues)

    def read_cues_off_loop():
        """The largest playlist the default bounds admit (media.cue_playlist: 256 KiB of SCTE35-OUT date
        ranges, in 64 KiB frames), then on the same connection a call the bridge answers itself: read on
        the loop, the playlist would be answered first; read on the worker, the call is. Then more reads
        behind it wait their turn, in order, and beyond maxCueReadsWaiting are refused."""
        import json
        page = Page(port, GUIDE)
        text, ranges = media.cue_playlist(256 * 1024)

        def send(id, method, params):
            page.ws.send_text(json.dumps({"jsonrpc": "2.0", "id": id, "method": "Snapback.1." + method, "params": params}),
                              frame_size=64 * 1024)
        send(10, "readCues", {"text": text, "format": "hls", "reader": "big"})
        send(11, "register", {"event": "push", "id": "p"})
        small = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\ns.ts\n#EXT-X-ENDLIST\n"
        for id in range(12, 12 + CUE_READS_WAITING + 1):
            send(id, "readCues", {"text": small, "reader": "big"})
        replies = [page.ws.recv_json(timeout=60) for _ in range(CUE_READS_WAITING + 3)]
        order = [r["id"] for r in replies]
        refused = replies[1]
        expect(order[0] == 11 and replies[0]["result"] is None, "the register was answered behind the read: %r" % order)
        expect(refused["id"] == 12 + CUE_READS_WAITING and refused["error"]["code"] == 8
               and "readCues waiting" in refused["error"]["message"], "the read beyond those waiting %r" % refused)
        expect(order[2:] == [10] + list(range(12, 12 + CUE_READS_WAITING)), "the reads answered out of order: %r" % order)
        big = replies[2]["result"]
        expect(len(big["breaks"]) == 1000 and len(big["rejected"]) == ranges - 1000, "the big read %d breaks, %d rejected" % (
            len(big["breaks"]), len(big["rejected"])))
        expect(all("result" in r for r in replies[3:]), "the waiting reads %r" % [str(r)[:200] for r in replies[3:]])
        page.close()
        return "%d bytes, %d date ranges: answered after the call behind it (order %r); %d waiting read in turn, one more refused %r" % (
            len(text), ranges, order, CUE_READS_WAITING, refused["error"]["message"])
    check("readCues is read off the loop: a call behind the largest playlist is answered first, the page's reads in order",
          read_cues_off_loop)

    for name in ("guide", "kids"):
        if name in state:
            state[name][0].close()


if __name__ == "__main__":
    main()

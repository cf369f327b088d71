import Glibc
import SnapbackTimeline
import SnapbackClient
import SnapbackWire

let e = environ
let ev: TimelineEvent = .seekEnded(from: 1, to: 2)
var set = cpu_set_t()
print(e as Any, ev, MemoryLayout<cpu_set_t>.size)
exit(2)

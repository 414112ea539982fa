"""Bridge overheads side by side with their floors.

* dispatch round trip (worker -> main thread -> worker) through ``MainThreadExecutor.submit``,
  against a bare ``queue.Queue`` hand-off (request queue + reply queue) making the same trip;
* a full foreign call from a worker (convert the argument, run ``invoke`` on the main thread,
  convert the result), against the same floor;
* handle register + resolve + release, against dict insert + lookup + delete;
* handle resolve alone, against a dict lookup.

Timings come from ``_timing.compare`` (interleaved rounds, median per call). The dispatch rows
are timed on a worker thread while the main thread pumps the executor, as in a host; the floor's
server is a plain thread blocked in ``Queue.get``.

Run: ``python bench/bridge_dispatch.py``; ``main()`` returns the rows for ``bench/run.py``.
"""

from __future__ import annotations

import queue
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import compare, row_timing  # bench/ is not a package: found via sys.path

import tensorbridge.bridge as br

LANG = "bench-host"


def _noop() -> None:
    return None


def _queue_server(requests: queue.Queue[Any], replies: queue.Queue[Any]) -> None:
    while True:
        fn = requests.get()
        if fn is None:
            return
        replies.put(fn())


def _dispatch_timings() -> dict[str, Any]:
    br.define_language(LANG, like="js")
    ex = br.register_host(LANG, stall_timeout=120.0)

    def invoke(args: list[Any], kwargs: dict[str, Any]) -> Any:
        return br.Int(args[0].value + 1)  # a client: read the descriptor, answer with one

    inc = br.from_foreign(LANG, br.ForeignFunction(LANG, invoke, "inc"))
    requests: queue.Queue[Any] = queue.Queue()
    replies: queue.Queue[Any] = queue.Queue()
    server = threading.Thread(target=_queue_server, args=(requests, replies), daemon=True)
    server.start()
    submit = ex.submit

    def hand_off() -> None:
        requests.put(_noop)
        replies.get()

    def job() -> dict[str, Any]:  # runs on a worker; the main thread pumps meanwhile
        return compare({
            "dispatch": lambda: submit(_noop),
            "foreign_call": lambda: inc(1),
            "queue": hand_off,
        })

    try:
        return ex.run(job)
    finally:
        requests.put(None)
        server.join()
        br.unregister_host(LANG)


def _table_timings() -> dict[str, Any]:
    table = br.HandleTable("bench")
    obj = object()
    live = table.register(obj)
    register, resolve, release = table.register, table.resolve, table.release
    d: dict[int, Any] = {1: obj}
    counter = iter(range(2, 1 << 62)).__next__

    def handle_cycle() -> None:
        h = register(obj)
        resolve(h)
        release(h)

    def dict_cycle() -> None:
        k = counter()  # fresh keys, like fresh handle ids
        d[k] = obj
        d[k]  # the lookup is what is measured
        del d[k]

    return compare({
        "handle_cycle": handle_cycle,
        "dict_cycle": dict_cycle,
        "resolve": lambda: resolve(live),
        "dict_lookup": lambda: d[1],
    })


def _row(name: str, ours: Any, peer: str, floor: Any, note: str) -> dict[str, Any]:
    return {
        "name": name,
        "value_us": round(ours.median_us, 3),
        "peer": peer,
        "peer_us": round(floor.median_us, 3),
        "ratio": round(ours.median_us / floor.median_us, 2),
        **row_timing(ours, floor),
        "notes": [note],
        "details": {"ours": ours.as_dict(), "floor": floor.as_dict()},
    }


def main() -> list[dict[str, Any]]:
    t = _dispatch_timings()
    h = _table_timings()
    return [
        _row("bridge dispatch round trip (worker -> main -> worker)", t["dispatch"],
             "queue.Queue hand-off", t["queue"], "no-op callable; Queue.put + Queue.get x2"),
        _row("bridge foreign call from a worker (convert + dispatch + convert)",
             t["foreign_call"], "queue.Queue hand-off", t["queue"],
             "one int argument and result through the js converters"),
        _row("bridge handles register + resolve + release", h["handle_cycle"],
             "dict insert + lookup + delete", h["dict_cycle"], "lock-free refcounted table"),
        _row("bridge handles resolve", h["resolve"], "dict lookup", h["dict_lookup"],
             "id check + liveness check + dict lookup"),
    ]


if __name__ == "__main__":
    rows = main()
    width = max(len(r["name"]) for r in rows)
    print(f"{'measurement':<{width}}  {'us':>8}  {'floor':<30} {'floor us':>8}  ratio")
    for r in rows:
        print(f"{r['name']:<{width}}  {r['value_us']:>8.3f}  {r['peer']:<30} "
              f"{r['peer_us']:>8.3f}  {r['ratio']:>5.2f}x")

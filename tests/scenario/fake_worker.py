"""A stand-in for reference/worker.mjs that speaks its protocol (no Node): tests of the pool's bookkeeping.

    python fake_worker.py --reply-fd N

Each request's ``text`` is a JSON object whose ``do`` says what to do: ``echo`` (the trace is ``trace``), ``error``
(the runner's error ``error``), ``crash`` (the process kills itself with SIGKILL), ``oom`` (prints Node's heap
message and aborts), ``hang`` (never answers), ``recycle`` (answers, asks to be replaced, exits), ``pid`` (the trace
is this process's pid).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def main() -> None:
    reply_fd = int(sys.argv[sys.argv.index("--reply-fd") + 1])
    replies = os.fdopen(reply_fd, "w", buffering=1)
    replies.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        ask = json.loads(request["text"])
        do = ask["do"]
        if do == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        if do == "oom":
            sys.stderr.write("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n")
            sys.stderr.flush()
            os.abort()
        if do == "hang":
            time.sleep(3600)
        answer: dict[str, object] = {"id": request["id"]}
        if do == "error":
            answer["error"] = ask["error"]
        elif do == "pid":
            answer["trace"] = str(os.getpid())
        else:
            answer["trace"] = ask.get("trace", "")
        if do == "recycle":
            answer["recycle"] = True
        replies.write(json.dumps(answer) + "\n")
        if do == "recycle":
            return


if __name__ == "__main__":
    main()

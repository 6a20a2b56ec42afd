"""A function run in a fresh process forked from this one, its JSON result
passed back through a pipe (init_interference.py, profiler_warmup.py). The
parent must not have touched CUDA: each child starts its own context."""

import json
import os
import sys


def start(fn, *args):
    """Forks a child that runs fn(*args) and exits; (pid, read end)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code = 0
        try:
            os.write(w, json.dumps(fn(*args)).encode())
        except Exception as e:  # the parent counts it as failed
            sys.stderr.write("%s%s failed: %s\n" % (fn.__name__, args, e))
            code = 1
        os._exit(code)
    os.close(w)
    return pid, r


def finish(child):
    """The result of a child from start(), or None if it failed."""
    pid, r = child
    with os.fdopen(r) as fh:
        text = fh.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 0 and text:
        return json.loads(text)
    return None

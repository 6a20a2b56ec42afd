#!/usr/bin/env python3
"""Reads a run's TensorBoard event files back with TensorBoard's own reader.

  read_events.py [--pydeps DIR] RUN_DIR
Prints one JSON object {tag: [[step, value], ...]} of every scalar in
RUN_DIR's event files (EventAccumulator, all of them kept). --pydeps adds
the folder scripts/setup.sh installs tensorboard into (build/pydeps-tb).
"""
import json
import sys


def main(argv):
    if len(argv) >= 2 and argv[0] == "--pydeps":
        sys.path.insert(0, argv[1])
        argv = argv[2:]
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 1
    try:
        from tensorboard.backend.event_processing import event_accumulator as ea
    except ImportError as e:
        print(f"read_events: tensorboard is not importable ({e}); "
              "scripts/setup.sh installs it into build/pydeps-tb", file=sys.stderr)
        return 1
    acc = ea.EventAccumulator(argv[0], size_guidance={ea.SCALARS: 0})
    acc.Reload()
    out = {tag: [[e.step, e.value] for e in acc.Scalars(tag)]
           for tag in acc.Tags()["scalars"]}
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

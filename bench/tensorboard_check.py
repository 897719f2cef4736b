"""Check a Plumb-written TensorBoard event directory with TensorBoard's own
readers: tbparse (which reads through TensorBoard's EventAccumulator) and,
when TensorFlow is installed, tf.compat.v1.train.summary_iterator (which
checks each record's CRCs). Every scalar must equal the expected value,
stored as float32 (simple_value is a float field), at the same step.

    python bench/tensorboard_check.py LOGDIR EXPECTED.json
        EXPECTED.json: {"tag": [[step, value], ...], ...}, as
        `PLUMB_TB_EXPORT=DIR go test -run TestExportForCheck ./runlog/tensorboard`
        writes it (LOGDIR is then DIR/run).
    python bench/tensorboard_check.py --runlog RUNDIR
        the expected values are those of RUNDIR/log.jsonl, Plumb's own log,
        under runlog/tensorboard/tblog's tags; the event files are in RUNDIR.

A tag logged twice at one step keeps its last value, on both sides. Exits
1 on any difference, listing the first ones.
"""
import argparse
import glob
import json
import os
import sys

import numpy as np


def expected_from_json(path):
    with open(path) as f:
        raw = json.load(f)
    return {(tag, int(step)): value for tag, pts in raw.items() for step, value in pts}


def expected_from_runlog(rundir):
    """The scalars of Plumb's run log, as runlog/tensorboard/tblog maps them:
    step records give loss, lr, samples_per_sec, rss_bytes, peak_rss_bytes;
    epoch records epoch_loss, epoch_samples_per_sec and epoch_<metric>.
    Zero fields are absent from the log, and left out; a resume record drops
    the records after the step it keeps, as runlog.Read does."""
    recs = []
    with open(os.path.join(rundir, "log.jsonl")) as f:
        for line in f:
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a torn last line, which runlog.Read skips too
    kept = []
    for r in recs:
        if r.get("kind") == "resume":
            kept = [k for k in kept if k.get("step", 0) <= r.get("step", 0)]
        elif r.get("kind") in ("step", "epoch"):
            kept.append(r)
    out = {}
    for r in kept:
        step = r.get("step", 0)
        if r["kind"] == "step":
            fields = {"loss": "loss", "lr": "lr", "samples_per_sec": "samples_per_sec",
                      "rss_bytes": "rss_bytes", "peak_rss_bytes": "peak_rss_bytes"}
        else:
            fields = {"epoch_loss": "loss", "epoch_samples_per_sec": "samples_per_sec"}
        for tag, key in fields.items():
            if r.get(key):
                out[(tag, step)] = r[key]
        for name, v in (r.get("metrics") or {}).items():
            out[("epoch_" + name, step)] = v
    return out


def read_tbparse(logdir):
    from tbparse import SummaryReader

    df = SummaryReader(logdir, pivot=False).scalars
    return {(row.tag, int(row.step)): float(row.value) for row in df.itertuples()}


def read_tf(logdir):
    try:
        import tensorflow as tf
    except ImportError:
        return None
    out = {}
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        for ev in tf.compat.v1.train.summary_iterator(path):
            for v in ev.summary.value:
                if v.WhichOneof("value") == "simple_value":
                    out[(v.tag, int(ev.step))] = float(v.simple_value)
    return out


def compare(name, want, got):
    bad = []
    for key in sorted(set(want) | set(got)):
        if key not in got:
            bad.append(f"{key[0]} at step {key[1]}: missing (want {want[key]!r})")
        elif key not in want:
            bad.append(f"{key[0]} at step {key[1]}: unexpected {got[key]!r}")
        elif np.float32(want[key]) != np.float32(got[key]):
            bad.append(f"{key[0]} at step {key[1]}: {got[key]!r}, want {float(np.float32(want[key]))!r}")
    tags = len({tag for tag, _ in want})
    if bad:
        print(f"{name}: {len(bad)} of {len(want)} scalars differ:")
        for line in bad[:20]:
            print("  " + line)
        return False
    print(f"{name}: all {len(want)} scalars of {tags} tags equal")
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logdir", help="the event directory (with --runlog: the run directory)")
    ap.add_argument("expected", nargs="?", help="JSON of the expected scalars")
    ap.add_argument("--runlog", action="store_true", help="expect the values of LOGDIR/log.jsonl")
    args = ap.parse_args()
    if args.runlog == (args.expected is not None):
        ap.error("give either EXPECTED.json or --runlog")
    want = expected_from_runlog(args.logdir) if args.runlog else expected_from_json(args.expected)
    if not want:
        print("no expected scalars")
        return 1
    ok = compare("tbparse", want, read_tbparse(args.logdir))
    got = read_tf(args.logdir)
    if got is None:
        print("tf.compat.v1.train.summary_iterator: TensorFlow not installed, skipped")
    else:
        ok = compare("tf.compat.v1.train.summary_iterator", want, got) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""What a seed evidence record is measured against, in words and hashes.

A verifier report says how much faster a candidate was than "the baseline"
of its task. On its own that hides three facts a reader needs, and this
module writes them into the record's `context` object (issue 21):

  baseline   the task's reference kernel (file, SHA-256, what it is: for
             matmul_bf16 a 16x16 CUDA-core kernel, not cuBLAS);
  vendor     the vendor library or PyTorch eager call on the same shapes
             (data/evidence/baselines.json) and, once the GPU run has timed
             it with the same protocol, the candidate's ratio to it;
             otherwise "not measured";
  candidate  the candidate file and its SHA-256 (= the report's
             candidate_hash), and whether it is the skill's own code pattern
             ("skill-code") or the skill's technique inside another kernel
             ("technique-in-other-kernel", with what it is instead);
  summary    one sentence: "16.27x over the task reference (...); 0.71x of
             cuBLAS (torch.matmul(A, B) on bfloat16)".

The context is written by scripts/seed_evidence_store.py, not by the
verifier; tests/seed_evidence_test.cc checks every record carries it and
that the hashes match the committed files. Python 3 standard library only.
"""
import hashlib
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATTERNS = ("skill-code", "technique-in-other-kernel")


def sha256_file(rel):
    with open(os.path.join(ROOT, rel), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def vendor_part(base, vendor_row):
    """The `vendor` object: the call, and the same-protocol ratios if the GPU
    run measured them (vendor_row from scripts/seed_vendor_bench.py)."""
    part = {"library": base["vendor"], "call": base["vendor_call"]}
    if not vendor_row or not vendor_row.get("correct"):
        part["status"] = "not measured"
        return part
    part.update(status="measured",
                candidate_over_vendor=vendor_row["candidate_over_vendor"],
                reference_over_vendor=vendor_row["reference_over_vendor"],
                candidate_over_reference=vendor_row["candidate_over_reference"],
                vendor_median_ms=vendor_row["vendor_ms"],
                candidate_median_ms=vendor_row["candidate_ms"],
                reference_median_ms=vendor_row["reference_ms"],
                rounds=vendor_row["rounds"], device=vendor_row["device"],
                torch=vendor_row["torch"], run=vendor_row["run"],
                protocol=vendor_row["protocol"])
    return part


def summary_line(ratio, base, vendor):
    text = "%.2fx over the task reference [%s]" % (ratio, base["reference_is"])
    if vendor["status"] == "measured":
        text += "; %.2fx of %s [%s], same protocol" % (
            vendor["candidate_over_vendor"], base["vendor"], base["vendor_call"])
    else:
        text += "; against %s [%s]: not measured" % (base["vendor"], base["vendor_call"])
    return text


def build(entry, report, baselines, vendor_row=None):
    """The context for `report` (a verifier report dict) of map `entry`.
    Raises ValueError when the entry does not describe the report."""
    task = entry["task"]
    if report.get("task") != task:
        raise ValueError("report is for task %s, map says %s" % (report.get("task"), task))
    if entry.get("pattern") not in PATTERNS:
        raise ValueError("map entry %s has no pattern in %s" % (entry["skill"], PATTERNS))
    base = baselines[task]
    cand_hash = sha256_file(entry["candidate"])
    if report.get("candidate_hash") != cand_hash:
        raise ValueError("candidate_hash differs from %s as committed" % entry["candidate"])
    candidate = {"file": entry["candidate"], "sha256": cand_hash, "pattern": entry["pattern"],
                 "what": entry.get("pattern_note") or entry["note"]}
    vendor = vendor_part(base, vendor_row)
    return {
        "written_by": "scripts/seed_evidence_store.py (not the verifier)",
        "baseline": {"kind": "task-reference", "task": task, "file": base["reference"],
                     "sha256": sha256_file(base["reference"]), "what": base["reference_is"]},
        "vendor": vendor,
        "candidate": candidate,
        "summary": summary_line(report["speedup"]["ratio"], base, vendor),
    }

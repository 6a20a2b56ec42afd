"""A client of KernelGYM's evaluation API as skilldb serve speaks it.

POST /evaluate (synchronous; retried on 429 and 503 honouring Retry-After,
as Dr. Kernel's reward client does), GET /status/{id}, GET /results/{id}.
Standard library only. The reward of a result is the trainer's Policy
Agent turn reward (skilldb.policy_turn_reward): correct_weight x correct +
speedup_weight x min(speedup, cap), 0 for a detected reward hack.
"""

import json
import os
import re
import time
import urllib.error
import urllib.request
import uuid

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)


def extract_kernel_code(text):
    """The last fenced code block of a model's answer, else the whole text
    (what Dr. Kernel's extract_kernel_code falls back to)."""
    blocks = _FENCE.findall(text or "")
    return blocks[-1] if blocks else (text or "")


def server_url(explicit=None):
    """The server: `explicit`, else $SKILLDB_SERVER_URL, else the default."""
    return (explicit or os.environ.get("SKILLDB_SERVER_URL")
            or "http://127.0.0.1:8712").rstrip("/")


def _request(method, url, body=None, token=None, timeout=600.0):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    token = token or os.environ.get("SKILLDB_SERVER_TOKEN")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return res.status, json.loads(res.read() or b"null"), res.headers
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = {"error_message": raw[:500].decode("utf-8", "replace")}
        return e.code, payload, e.headers


def evaluate(payload, url=None, token=None, timeout=600.0, retries=3):
    """POSTs a KernelGYM EvaluationRequest and returns the response dict.
    A request the server refuses (400) or that fails past the retries is a
    dict with status "failed" and the error, as the Dr. Kernel client
    records it."""
    base = server_url(url)
    for attempt in range(retries + 1):
        try:
            status, body, headers = _request("POST", base + "/evaluate",
                                             payload, token, timeout)
        except (urllib.error.URLError, OSError) as e:
            if attempt == retries:
                return {"status": "failed", "error_message": f"cannot reach {base}: {e}"}
            time.sleep(min(2 ** attempt, 30))
            continue
        if status == 200:
            return body
        if status in (429, 503) and attempt < retries:
            wait = headers.get("Retry-After") if headers else None
            time.sleep(min(float(wait) if wait else 2 ** attempt, 30))
            continue
        message = body.get("message") or body.get("error_message") or str(body)
        return {"status": "failed", "error_message": f"HTTP {status}: {message}",
                "error_code": body.get("error_code")}
    return {"status": "failed", "error_message": "retries exhausted"}


def make_payload(kernel_code, task, task_id=None, backend=None, **extra):
    """A KernelGYM EvaluationRequest for `kernel_code`. `task` is a dict
    with skilldb_task (a verifier task, C ABI kernels) and/or
    reference_code (a KernelBench problem), or a plain task name."""
    if isinstance(task, str):
        task = {"skilldb_task": task}
    payload = {
        "task_id": task_id or f"skilldb_{uuid.uuid4().hex[:16]}",
        "kernel_code": kernel_code,
        "backend": backend or task.get("backend", "cuda"),
        "num_correct_trials": task.get("num_correct_trials", 5),
        "num_perf_trials": task.get("num_perf_trials", 100),
        "timeout": task.get("timeout", 300),
        "entry_point": task.get("entry_point", "Model"),
    }
    for key in ("skilldb_task", "reference_code"):
        if task.get(key):
            payload[key] = task[key]
    payload.update(extra)
    return payload


def reward_of(result, **weights):
    """(reward, info) of an EvaluationResponse with the trainer's policy
    turn reward; a failed evaluation earns 0."""
    import skilldb  # the module's own formula (trainer/rewards.h)

    completed = result.get("status") == "completed"
    correct = bool(completed and result.get("correctness"))
    hack = bool(result.get("decoy_kernel"))
    speedup = result.get("speedup") or 0.0
    reward = skilldb.policy_turn_reward(correct, speedup if correct else None,
                                        hack, **weights) if completed else 0.0
    info = {
        "status": result.get("status"),
        "compiled": bool(result.get("compiled")),
        "correctness": correct,
        "speedup": float(speedup),
        "decoy_kernel": hack,
        "error_code": result.get("error_code"),
    }
    return reward, info


def feedback_text(result, limit=2000):
    """What the next turn's prompt tells the model about its kernel:
    verdict, speedup with the verifier's interval, the error; bounded."""
    meta = (result.get("metadata") or {}).get("skilldb", {})
    lines = [f"status: {result.get('status')}, compiled: {result.get('compiled')}, "
             f"correct: {result.get('correctness')}, speedup: {result.get('speedup')}"]
    if meta.get("ci_low") is not None:
        lines.append(f"speedup interval: [{meta.get('ci_low')}, {meta.get('ci_high')}]")
    if result.get("decoy_kernel"):
        lines.append("rejected as a reward hack: " + "; ".join(meta.get("hack_findings", [])))
    if result.get("error_message"):
        lines.append("error: " + str(result["error_message"]))
    text = "\n".join(lines)
    return text if len(text) <= limit else text[:limit] + "..."

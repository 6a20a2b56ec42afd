"""skilldb: a versioned skill library for GPU-kernel agents.

The C++ engine through nanobind (``skilldb._skilldb``), re-exported here:

    import skilldb
    lib = skilldb.open("/path/to/library", create=True)
    lib.put(skilldb.Skill("smem-tiling", "Shared memory tiling", body="..."))
    hits = lib.query("shared memory tiling", k=5, fields="title,summary")
    remote = skilldb.connect("http://127.0.0.1:8712")   # skilldb serve

Every failing call raises a subclass of :class:`skilldb.Error` whose
``code`` is the status code ("not_found", "invalid_argument", ...).
Queries, verification and commits release the GIL; ``skilldb.aio`` wraps a
Library for asyncio. ``skilldb.integrations.verl`` and
``skilldb.integrations.openrlhf`` adapt it to those RL frameworks.
"""

import os as _os

# A wheel carries the verifier's worker and task files inside the package;
# point the verifier at them unless the user already did.
_here = _os.path.dirname(_os.path.abspath(__file__))
_packaged = _os.path.join(_here, "_verify")
if _os.path.isdir(_packaged):
    _os.environ.setdefault("SKILLDB_VERIFY_SOURCE_DIR", _packaged)
    for _name, _var in (("skilldb_verify_worker_host", "SKILLDB_VERIFY_HOST_WORKER"),
                        ("skilldb_verify_worker_cuda", "SKILLDB_VERIFY_CUDA_WORKER")):
        _path = _os.path.join(_packaged, "bin", _name)
        if _os.path.exists(_path):
            _os.environ.setdefault(_var, _path)

from ._skilldb import (  # noqa: E402
    AbortedError,
    AlreadyExistsError,
    AuditEntry,
    Change,
    CommitInfo,
    CorruptionError,
    DeadlineExceededError,
    DiffEntry,
    DuplicateMatch,
    Error,
    FailedPreconditionError,
    Hit,
    InternalError,
    InvalidArgumentError,
    IOError,
    Library,
    LibraryInfo,
    LibraryStats,
    NotFoundError,
    NotSupportedError,
    ProposalOutcome,
    QueryResult,
    QueuedProposal,
    Revision,
    Skill,
    UnavailableError,
    UsageCounters,
    VerificationReport,
    Verifier,
    compute_advantages,
    connect,
    open,
    policy_turn_reward,
    selection_rewards,
    summary_reward,
)

__all__ = [
    "AbortedError", "AlreadyExistsError", "AuditEntry", "Change", "CommitInfo",
    "CorruptionError", "DeadlineExceededError", "DiffEntry", "DuplicateMatch",
    "Error", "FailedPreconditionError", "Hit", "InternalError",
    "InvalidArgumentError", "IOError", "Library", "LibraryInfo", "LibraryStats",
    "NotFoundError", "NotSupportedError", "ProposalOutcome", "QueryResult",
    "QueuedProposal", "Revision", "Skill", "UnavailableError", "UsageCounters",
    "VerificationReport", "Verifier", "compute_advantages", "connect", "open",
    "policy_turn_reward", "selection_rewards", "summary_reward",
]

// Building a confined file system root, shared by the compiler runner
// (subprocess.cc) and the workers (worker/sandbox.cc).
//
// MakePlan (before fork: it allocates) lays out a fresh root: a small tmpfs
// on which each visible path appears read-only at its own place (a
// directory with the mounts below it, each made read-only; a visible path
// inside one already bound is covered by it), the
// listed device nodes (and /dev/null) read-write, an optional /proc of the
// caller's PID namespace, and the one writable directory; the tmpfs is then
// made read-only. EnterRoot (after unshare(CLONE_NEWNS), in the process
// that will use it: system calls only) builds it and pivots into it, the old
// root detached so no path leads back.
#ifndef SKILLDB_VERIFY_CONFINE_H_
#define SKILLDB_VERIFY_CONFINE_H_

#include <string>
#include <vector>

namespace skilldb::verify::internal {

struct RootSpec {
  std::vector<std::string> visible;  // read-only; missing ones skipped
  std::vector<std::string> devices;  // device nodes, read-write
  std::string writable_dir;          // REQUIRED; holds the mount point too
  bool mount_proc = false;           // a /proc (of the caller's PID ns)
};

struct Step {
  enum Kind {
    kTmpfs,
    kMkdir,
    kSymlink,
    kTouch,
    kBindRo,
    kBindRoTree,  // recursive: submounts (a driver mounted under /usr) too
    kRemountRo,   // one submount of a kBindRoTree, made read-only
    kBindRw,
    kProc,
    kSeal
  };
  Kind kind;
  std::string source;      // bind source or symlink text
  std::string target;      // path under the new root
  std::string what;        // for the error message
  unsigned long keep = 0;  // the source mount's flags, kept on remount
};

struct Plan {
  std::vector<Step> steps;
  std::string root;      // the new root's mount point (created by MakePlan)
  bool user_ns = false;  // not root: enter a user namespace first
  std::string uid_map, gid_map;
};

// Steps outside the plan, as reported by EnterRoot/DropPrivileges.
constexpr int kStepUnshare = -1, kStepMaps = -2, kStepFork = -3,
              kStepPrivate = -4, kStepPivot = -5, kStepCaps = -6,
              kStepExec = -7, kStepCwd = -8;

// Lays out the root (and creates its mount point directory).
Plan MakePlan(const RootSpec& spec);

// Builds and enters the root; false with the failing step and errno.
bool EnterRoot(const Plan& plan, int* step, int* err);

// Empties the capability sets and the bounding set (so even uid 0 gains
// none by exec) and sets no_new_privs. False with step and errno.
bool DropPrivileges(int* step, int* err);

// Writes the user namespace's maps (when plan.user_ns). False on failure.
bool WriteIdMaps(const Plan& plan);

// "bind /usr", "pivot_root", ... for a step number.
std::string StepName(const Plan* plan, int step);

}  // namespace skilldb::verify::internal

#endif  // SKILLDB_VERIFY_CONFINE_H_

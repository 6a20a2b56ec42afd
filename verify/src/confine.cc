#include "confine.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace skilldb::verify::internal {
namespace {

bool Failed(int at, int* step, int* err) {
  *err = errno;
  *step = at;
  return false;
}

// The mount flags of the file system holding `path` that a remount must
// keep (in a user namespace they are locked: dropping one fails).
unsigned long MountFlags(const std::string& path) {
  struct statvfs v;
  if (::statvfs(path.c_str(), &v) != 0) return 0;
  unsigned long f = 0;
  if (v.f_flag & ST_NOSUID) f |= MS_NOSUID;
  if (v.f_flag & ST_NODEV) f |= MS_NODEV;
  if (v.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
  if (v.f_flag & ST_RDONLY) f |= MS_RDONLY;
  if (v.f_flag & ST_NOATIME) f |= MS_NOATIME;
  if (v.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (v.f_flag & ST_RELATIME) f |= MS_RELATIME;
  return f;
}

// Every mount point of this process's namespace, parents first
// (/proc/self/mountinfo, field 5, octal escapes decoded).
std::vector<std::string> MountPoints() {
  std::vector<std::string> out;
  FILE* f = std::fopen("/proc/self/mountinfo", "re");
  if (f == nullptr) return out;
  char* line = nullptr;
  size_t cap = 0;
  while (::getline(&line, &cap, f) > 0) {
    const char* q = line;
    for (int field = 0; field < 4 && q != nullptr; ++field) {
      q = std::strchr(q, ' ');
      if (q != nullptr) ++q;
    }
    if (q == nullptr) continue;
    std::string m;
    for (; *q != ' ' && *q != '\0' && *q != '\n'; ++q) {
      if (q[0] == '\\' && q[1] >= '0' && q[1] <= '3' && q[2] != '\0' &&
          q[3] != '\0') {
        m += static_cast<char>((q[1] - '0') * 64 + (q[2] - '0') * 8 +
                               (q[3] - '0'));
        q += 3;
      } else {
        m += *q;
      }
    }
    out.push_back(m);
  }
  std::free(line);
  std::fclose(f);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

void AddDirs(const std::string& root, const std::string& path,
             std::set<std::string>* made, std::vector<Step>* steps) {
  if (path == "/" || path.empty() || made->count(path)) return;
  AddDirs(root, Parent(path), made, steps);
  made->insert(path);
  steps->push_back({Step::kMkdir, "", root + path, "mkdir " + path});
}

}  // namespace

Plan MakePlan(const RootSpec& c) {
  Plan p;
  p.root = c.writable_dir + "/.confined-root";
  p.user_ns = ::geteuid() != 0;
  p.uid_map = "0 " + std::to_string(::geteuid()) + " 1";
  p.gid_map = "0 " + std::to_string(::getegid()) + " 1";
  std::set<std::string> made;
  p.steps.push_back({Step::kTmpfs, "", p.root, "tmpfs root"});
  std::vector<std::string> paths = c.visible;
  std::sort(paths.begin(), paths.end());  // parents before children
  const std::vector<std::string> mounts = MountPoints();
  std::vector<std::string> trees;  // directories bound with their submounts
  auto under = [](const std::string& path, const std::string& dir) {
    return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
           path[dir.size()] == '/';
  };
  for (const std::string& path : paths) {
    struct stat st;
    if (path.empty() || path[0] != '/' || ::lstat(path.c_str(), &st) != 0)
      continue;
    if (std::any_of(trees.begin(), trees.end(),
                    [&](const std::string& t) { return under(path, t); })) {
      continue;  // already visible, read-only, through its parent's bind
    }
    // /sys holds many special submounts (cgroup, bpf, debugfs) a reader of
    // the topology does not need: bound alone.
    if (S_ISDIR(st.st_mode) && path != "/sys") {
      AddDirs(p.root, path, &made, &p.steps);
      p.steps.push_back({Step::kBindRoTree, path, p.root + path, "bind " + path,
                         MountFlags(path)});
      for (const std::string& m : mounts) {
        if (under(m, path)) {
          p.steps.push_back({Step::kRemountRo, "", p.root + m, "read-only " + m,
                             MountFlags(m)});
        }
      }
      trees.push_back(path);
      continue;
    }
    AddDirs(p.root, Parent(path), &made, &p.steps);
    if (S_ISLNK(st.st_mode)) {
      char buf[PATH_MAX];
      const ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf) - 1);
      if (n <= 0) continue;
      made.insert(path);
      p.steps.push_back({Step::kSymlink, std::string(buf, n), p.root + path,
                         "symlink " + path});
    } else if (S_ISDIR(st.st_mode)) {
      AddDirs(p.root, path, &made, &p.steps);
      p.steps.push_back({Step::kBindRo, path, p.root + path, "bind " + path,
                         MountFlags(path)});
    } else {
      p.steps.push_back({Step::kTouch, "", p.root + path, "create " + path});
      p.steps.push_back({Step::kBindRo, path, p.root + path, "bind " + path,
                         MountFlags(path)});
    }
  }
  AddDirs(p.root, "/dev", &made, &p.steps);
  std::vector<std::string> devices = {"/dev/null"};
  devices.insert(devices.end(), c.devices.begin(), c.devices.end());
  for (const std::string& dev : devices) {
    struct stat st;
    if (::stat(dev.c_str(), &st) != 0) continue;
    AddDirs(p.root, Parent(dev), &made, &p.steps);
    p.steps.push_back({Step::kTouch, "", p.root + dev, "create " + dev});
    p.steps.push_back(
        {Step::kBindRw, dev, p.root + dev, "bind " + dev, MountFlags(dev)});
  }
  AddDirs(p.root, "/tmp", &made, &p.steps);
  if (c.mount_proc) {
    AddDirs(p.root, "/proc", &made, &p.steps);
    p.steps.push_back({Step::kProc, "", p.root + "/proc", "mount /proc"});
  }
  AddDirs(p.root, c.writable_dir, &made, &p.steps);
  p.steps.push_back({Step::kBindRw, c.writable_dir, p.root + c.writable_dir,
                     "bind " + c.writable_dir,
                     (MountFlags(c.writable_dir) & ~MS_RDONLY) | MS_NODEV});

  p.steps.push_back({Step::kSeal, "", p.root, "read-only root"});
  ::mkdir(p.root.c_str(), 0700);
  return p;
}

namespace {
bool WriteFileRaw(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) ==
                  static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// Whether the mount at `path` (this namespace's /proc/self/mountinfo, path
// as this process sees it) has peers it propagates to ("shared:N" among its
// optional fields). System calls and the stack only, unlike MountPoints:
// safe after fork. True also when it cannot tell (no /proc, a line too long).
bool MountPropagates(const char* path) {
  const int fd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char line[4096];
  char chunk[4096];
  size_t len = 0;
  bool overflow = false, found = false, shared = true;
  const size_t path_len = std::strlen(path);
  auto check = [&](const char* l, size_t n) {
    // Fields: id parent dev root mountpoint options [optional...] - ...
    size_t field = 0, start = 0;
    for (size_t i = 0; i <= n; ++i) {
      if (i < n && l[i] != ' ') continue;
      const char* w = l + start;
      const size_t wn = i - start;
      if (field == 4 && (wn != path_len || std::memcmp(w, path, wn) != 0)) {
        return;
      }
      if (field == 4) found = true, shared = false;
      if (field >= 6) {
        if (wn == 1 && w[0] == '-') return;
        if (wn > 7 && std::memcmp(w, "shared:", 7) == 0) shared = true;
      }
      ++field;
      start = i + 1;
    }
  };
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (chunk[i] != '\n') {
        if (len < sizeof(line)) line[len++] = chunk[i];
        else overflow = true;
        continue;
      }
      if (!overflow) check(line, len);
      len = 0;
      overflow = false;
    }
  }
  ::close(fd);
  return !found || shared;
}

}  // namespace

bool EnterRoot(const Plan& plan, int* step, int* err) {
  // In a chroot "/" is no mount point (EINVAL): the root is then built only
  // if its tmpfs turns out not to propagate to the namespace this one was
  // copied from (checked right after mounting it), and entered by chroot,
  // since pivot_root needs the current root to be a mount point. With the
  // capabilities dropped next (no CAP_SYS_CHROOT) it cannot be left.
  bool in_chroot = false;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    if (errno != EINVAL) return Failed(kStepPrivate, step, err);
    in_chroot = true;
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    const char* t = s.target.c_str();
    int rc = 0;
    switch (s.kind) {
      case Step::kTmpfs:
        rc = ::mount("tmpfs", t, "tmpfs", MS_NOSUID | MS_NODEV,
                     "size=1m,mode=755");
        break;
      case Step::kMkdir: {
        struct stat st;
        rc = ::mkdir(t, 0755);
        if (rc != 0 && ::stat(t, &st) == 0 && S_ISDIR(st.st_mode)) rc = 0;
        break;
      }
      case Step::kSymlink:
        rc = ::symlink(s.source.c_str(), t);
        break;
      case Step::kTouch: {
        const int fd = ::open(t, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        rc = fd < 0 ? -1 : ::close(fd);
        break;
      }
      case Step::kBindRo:
      case Step::kBindRoTree:
      case Step::kBindRw: {
        rc = ::mount(s.source.c_str(), t, nullptr,
                     MS_BIND | (s.kind == Step::kBindRoTree ? MS_REC : 0),
                     nullptr);
        // A bind of a shared mount joins its peer group: in a chroot (no
        // private "/" before) it is made private before anything else.
        if (rc == 0 && in_chroot) {
          rc = ::mount(nullptr, t, nullptr, MS_REC | MS_PRIVATE, nullptr);
        }
        unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSUID | s.keep;
        if (s.kind != Step::kBindRw) flags |= MS_RDONLY | MS_NODEV;
        if (rc == 0) rc = ::mount(nullptr, t, nullptr, flags, nullptr);
        break;
      }
      case Step::kRemountRo:
        rc = ::mount(
            nullptr, t, nullptr,
            MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | s.keep,
            nullptr);
        break;
      case Step::kProc:
        rc = ::mount("proc", t, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                     nullptr);
        break;
      case Step::kSeal:
        rc = ::mount(nullptr, t, nullptr,
                     MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr);
        break;
    }
    if (rc != 0) return Failed(static_cast<int>(i), step, err);
    if (in_chroot && s.kind == Step::kTmpfs) {
      if (MountPropagates(t)) {
        ::umount2(t, MNT_DETACH);
        errno = EXDEV;  // "cross-device": the mount would reach the host
        return Failed(kStepPrivate, step, err);
      }
      if (::mount(nullptr, t, nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return Failed(kStepPrivate, step, err);
    }
  }
  if (in_chroot) {
    if (::chdir(plan.root.c_str()) != 0 || ::chroot(".") != 0 ||
        ::chdir("/") != 0) {
      return Failed(kStepPivot, step, err);
    }
    return true;
  }
  // pivot_root(".", ".") stacks the old root on the new one; detaching it
  // leaves no path back (a chroot could be left by a privileged process).
  if (::chdir(plan.root.c_str()) != 0 ||
      ::syscall(SYS_pivot_root, ".", ".") != 0 ||
      ::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0) {
    return Failed(kStepPivot, step, err);
  }
  return true;
}

bool DropPrivileges(int* step, int* err) {
  for (int cap = 0; cap <= 63; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      return Failed(kStepCaps, step, err);
    }
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &hdr, data) != 0)
    return Failed(kStepCaps, step, err);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return Failed(kStepCaps, step, err);
  }
  return true;
}

bool WriteIdMaps(const Plan& plan) {
  if (!plan.user_ns) return true;
  WriteFileRaw("/proc/self/setgroups", "deny");
  return WriteFileRaw("/proc/self/uid_map", plan.uid_map) &&
         WriteFileRaw("/proc/self/gid_map", plan.gid_map);
}

std::string StepName(const Plan* plan, int step) {
  switch (step) {
    case kStepUnshare:
      return "unshare (namespaces)";
    case kStepMaps:
      return "user namespace id maps";
    case kStepFork:
      return "fork into the PID namespace";
    case kStepPrivate:
      return "private mounts";
    case kStepPivot:
      return "pivot_root";
    case kStepCaps:
      return "dropping capabilities";
    case kStepExec:
      return "exec";
    case kStepCwd:
      return "chdir to the working directory";
  }
  if (plan != nullptr && step >= 0 &&
      step < static_cast<int>(plan->steps.size())) {
    return plan->steps[step].what;
  }
  return "step " + std::to_string(step);
}

}  // namespace skilldb::verify::internal

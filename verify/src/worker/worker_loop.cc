#include "worker/worker_loop.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gen.h"
#include "ipc.h"

namespace skilldb::verify::internal {
namespace {

using nlohmann::json;

constexpr size_t kGuardBytes = 4096;
constexpr uint8_t kGuardByte = 0xa5;
constexpr uint8_t kPoisonByte = 0xff;  // NaN for float32/bf16/f16, -1 for ints

int64_t ElementSize(int dtype) {
  switch (dtype) {
    case SKDB_BFLOAT16:
    case SKDB_FLOAT16:
      return 2;
    case SKDB_INT64:
      return 8;
    default:
      return 4;
  }
}

// One tensor's spec as the verifier sends it.
struct Spec {
  int dtype = SKDB_FLOAT32;
  std::vector<int64_t> shape;
  int dist = kGenNormal;
  float scale = 100.f;
  double atol = 0, rtol = 0;  // outputs: relative atol (x rms) and rtol
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t v : shape) n *= v;
    return n;
  }
  size_t bytes() const { return static_cast<size_t>(numel() * ElementSize(dtype)); }
  int64_t row_len() const { return shape.empty() ? 1 : shape.back(); }
};

std::vector<Spec> ParseSpecs(const json& list) {
  std::vector<Spec> out;
  for (const json& j : list) {
    Spec s;
    s.dtype = j.value("dtype", 0);
    s.shape = j.value("shape", std::vector<int64_t>{});
    s.dist = j.value("dist", 0);
    s.scale = j.value("scale", 100.f);
    s.atol = j.value("atol", 0.0);
    s.rtol = j.value("rtol", 0.0);
    out.push_back(std::move(s));
  }
  return out;
}

Tensor MakeTensor(const Spec& s, void* data) {
  Tensor t;
  std::memset(&t, 0, sizeof(t));
  t.data = data;
  t.dtype = s.dtype;
  t.ndim = static_cast<int32_t>(s.shape.size());
  int64_t stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    t.shape[i] = s.shape[static_cast<size_t>(i)];
    t.stride[i] = stride;
    stride *= t.shape[i];
  }
  t.numel = stride;
  return t;
}

json CallToJson(const CallReport& r) {
  return json{{"rc", r.rc},
              {"error", r.error},
              {"sticky", r.sticky},
              {"device_ms", r.device_ms},
              {"host_ms", r.host_ms},
              {"kernels", r.kernels},
              {"kernels_executed", r.kernels_executed},
              {"foreign", r.foreign_stream_ops},
              {"foreign_detail", r.foreign_detail},
              {"alloc_denied", r.alloc_denied}};
}

json CountsToJson(const CompareCounts& c) {
  return json{{"unwritten", c.unwritten},   {"mismatches", c.mismatches},
              {"max_abs", c.max_abs},       {"max_rel", c.max_rel},
              {"first_bad", c.first_bad},   {"first_got", c.first_got},
              {"first_want", c.first_want}};
}

// Buffers for one set of tensors; outputs carry guard bands on both sides.
class Arena {
 public:
  Arena(Device* d) : d_(d) {}
  ~Arena() {
    for (void* p : owned_) d_->Free(p);
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  Status Init(const std::vector<Spec>& in, const std::vector<Spec>& out) {
    in_specs_ = in;
    out_specs_ = out;
    for (const Spec& s : in) {
      SKILLDB_ASSIGN_OR_RETURN(void* p, Own(s.bytes()));
      inputs.push_back(MakeTensor(s, p));
    }
    for (const Spec& s : out) {
      SKILLDB_ASSIGN_OR_RETURN(void* p, Own(s.bytes() + 2 * kGuardBytes));
      outputs.push_back(MakeTensor(s, static_cast<char*>(p) + kGuardBytes));
    }
    return Status::Ok();
  }

  Status PoisonOutputs() {
    for (size_t i = 0; i < outputs.size(); ++i) {
      char* data = static_cast<char*>(outputs[i].data);
      SKILLDB_RETURN_IF_ERROR(d_->SetBytes(data - kGuardBytes, kGuardByte,
                                           kGuardBytes));
      SKILLDB_RETURN_IF_ERROR(d_->SetBytes(data, kPoisonByte,
                                           out_specs_[i].bytes()));
      SKILLDB_RETURN_IF_ERROR(d_->SetBytes(data + out_specs_[i].bytes(),
                                           kGuardByte, kGuardBytes));
    }
    return Status::Ok();
  }

  Result<bool> GuardsIntact() {
    std::vector<uint8_t> g(kGuardBytes);
    for (size_t i = 0; i < outputs.size(); ++i) {
      char* data = static_cast<char*>(outputs[i].data);
      for (char* p : {data - kGuardBytes, data + out_specs_[i].bytes()}) {
        SKILLDB_RETURN_IF_ERROR(d_->ToHost(g.data(), p, kGuardBytes));
        for (uint8_t b : g) {
          if (b != kGuardByte) return false;
        }
      }
    }
    return true;
  }

  Status FillInputs(uint64_t seed) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Spec& s = in_specs_[i];
      SKILLDB_RETURN_IF_ERROR(d_->Fill(inputs[i].data, s.dtype, s.numel(),
                                       s.row_len(), SplitMix64(seed + i),
                                       s.dist, s.scale));
    }
    return Status::Ok();
  }

  // Copies inputs into / out of `shadow` (an arena of the same layout).
  Status CopyInputs(Arena* to) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      SKILLDB_RETURN_IF_ERROR(
          d_->Copy(to->inputs[i].data, inputs[i].data, in_specs_[i].bytes()));
    }
    return Status::Ok();
  }

  Result<bool> InputsEqual(Arena* other) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      SKILLDB_ASSIGN_OR_RETURN(
          int64_t diff, d_->CountDifferentBytes(inputs[i].data,
                                                other->inputs[i].data,
                                                in_specs_[i].bytes()));
      if (diff != 0) return false;
    }
    return true;
  }

  // Compares this arena's outputs against `ref`'s with each output's
  // tolerance (atol relative to the reference's rms).
  Result<std::vector<CompareCounts>> CompareOutputs(Arena* ref) {
    std::vector<CompareCounts> out;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Spec& s = out_specs_[i];
      SKILLDB_ASSIGN_OR_RETURN(double ss,
                               d_->SumSquares(ref->outputs[i].data, s.dtype,
                                              s.numel()));
      const double rms = std::max(std::sqrt(ss / static_cast<double>(s.numel())),
                                  1e-30);
      SKILLDB_ASSIGN_OR_RETURN(
          CompareCounts c,
          d_->Compare(outputs[i].data, ref->outputs[i].data, s.dtype,
                      s.numel(), s.atol * rms, s.rtol));
      out.push_back(c);
    }
    return out;
  }

  std::vector<Tensor> inputs, outputs;
  const std::vector<Spec>& in_specs() const { return in_specs_; }
  const std::vector<Spec>& out_specs() const { return out_specs_; }

 private:
  Result<void*> Own(size_t bytes) {
    SKILLDB_ASSIGN_OR_RETURN(void* p, d_->Alloc(std::max<size_t>(bytes, 256)));
    owned_.push_back(p);
    return p;
  }

  Device* d_;
  std::vector<void*> owned_;
  std::vector<Spec> in_specs_, out_specs_;
};

struct Library {
  void* handle = nullptr;
  LaunchFn fn = nullptr;
};

class WorkerLoop {
 public:
  WorkerLoop(int fd, Device* device, std::string notes)
      : fd_(fd), d_(device), notes_(std::move(notes)) {}

  int Run() {
    while (true) {
      auto msg = ReceiveMessage(fd_, -1);
      if (!msg.ok()) return 0;  // the verifier went away
      const std::string op = msg->header.value("op", "");
      if (op == "shutdown") {
        [[maybe_unused]] Status st = Reply({{"ok", true}});
        return 0;
      }
      json reply;
      std::string blob;
      Dispatch(op, *msg, &reply, &blob);
      if (!Reply(reply, blob).ok()) return 0;
      if (sticky_) return kWorkerExitSticky;
    }
  }

 private:
  Status Reply(const json& header, std::string_view blob = {}) {
    return SendMessage(fd_, header, blob);
  }

  void Dispatch(const std::string& op, const Message& m, json* reply,
                std::string* blob) {
    if (op == "hello") {
      Hello(reply);
    } else if (op == "ceilings") {
      Ceil(reply);
    } else if (op == "load") {
      Load(m.header, reply);
    } else if (op == "unload") {
      Unload(m.header.value("slot", ""));
      *reply = {{"ok", true}};
    } else if (op == "reset") {
      check_arenas_.clear();
      std::vector<std::string> slots;
      for (const auto& [slot, lib] : libs_) slots.push_back(slot);
      for (const std::string& slot : slots) Unload(slot);
      *reply = {{"ok", true}, {"late_ops", d_->TakeLateOps()},
                {"leaked_bytes", d_->CandidateBytes()}};
    } else if (op == "ping") {
      Status st = d_->Healthy();
      *reply = {{"ok", st.ok()}, {"error", st.message()}};
    } else if (op == "check") {
      Check(m, reply, blob);
    } else if (op == "full") {
      Full(m.header, reply);
    } else if (op == "round") {
      Round(m.header, reply);
    } else {
      *reply = {{"ok", false}, {"kind", "internal"}, {"error", "unknown op '" + op + "'"}};
    }
  }

  void Hello(json* reply) {
    const DeviceInfo info = d_->Info();
    *reply = {{"ok", true},
              {"name", info.name},
              {"device_class", info.device_class},
              {"sm_count", info.sm_count},
              {"cache_bytes", info.cache_bytes},
              {"memory_bytes", info.memory_bytes},
              {"cupti", info.cupti},
              {"device_count", info.device_count},
              {"notes", notes_ + info.notes}};
  }

  void Ceil(json* reply) {
    auto c = d_->MeasureCeilings();
    if (!c.ok()) {
      *reply = {{"ok", false}, {"kind", "internal"}, {"error", c.status().message()}};
      return;
    }
    *reply = {{"ok", true},
              {"bandwidth", c->bandwidth_bytes_per_s},
              {"fp32_flops", c->fp32_flops_per_s}};
  }

  void Load(const json& h, json* reply) {
    const std::string slot = h.value("slot", "");
    const std::string path = h.value("path", "");
    Unload(slot);
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* err = ::dlerror();
      *reply = {{"ok", false}, {"kind", "load"},
                {"error", std::string("dlopen failed: ") + (err ? err : "?")}};
      return;
    }
    auto fn = reinterpret_cast<LaunchFn>(::dlsym(handle, "launch"));
    if (fn == nullptr) {
      ::dlclose(handle);
      *reply = {{"ok", false}, {"kind", "load"},
                {"error", "the shared object has no symbol 'launch'"}};
      return;
    }
    libs_[slot] = {handle, fn};
    *reply = {{"ok", true}, {"late_ops", d_->TakeLateOps()}};
  }

  void Unload(const std::string& slot) {
    auto it = libs_.find(slot);
    if (it == libs_.end()) return;
    // Each load opened its own reference, so each unload closes one.
    void* handle = it->second.handle;
    libs_.erase(it);
    ::dlclose(handle);
  }

  LaunchFn Fn(const std::string& slot) {
    auto it = libs_.find(slot);
    return it == libs_.end() ? nullptr : it->second.fn;
  }

  void Fail(json* reply, const std::string& kind, const std::string& error) {
    *reply = {{"ok", false}, {"kind", kind}, {"error", error}};
  }

  // Turns a call's CUDA error into a reply; true if the request must stop.
  bool CallFailed(const CallReport& r, json* reply) {
    if (r.sticky) {
      sticky_ = true;
      *reply = {{"ok", false}, {"kind", "sticky"}, {"error", r.error},
                {"call", CallToJson(r)}};
      return true;
    }
    if (!r.error.empty()) {
      *reply = {{"ok", false}, {"kind", "launch"}, {"error", r.error},
                {"call", CallToJson(r)}};
      return true;
    }
    return false;
  }

  // Buffers are keyed by slot, dtypes and shapes only (not distribution),
  // so successive trials at one shape reuse the same pointers.
  static std::string Signature(const std::string& slot, const json& h) {
    std::string sig = slot;
    for (const char* list : {"inputs", "outputs"}) {
      for (const json& t : h[list]) {
        sig += "|" + std::to_string(t.value("dtype", 0)) + ":" + t["shape"].dump();
      }
    }
    return sig;
  }

  // check: run `slot` once on the inputs in the blob (concatenated, in
  // order); reply with the call report, the outputs (concatenated) and
  // whether inputs changed and guards held. Buffers are kept per slot and
  // layout, so repeated checks reuse the same pointers (which exposes
  // caches keyed by pointer).
  void Check(const Message& m, json* reply, std::string* blob) {
    const std::string slot = m.header.value("slot", "");
    LaunchFn fn = Fn(slot);
    if (fn == nullptr) return Fail(reply, "internal", "slot not loaded: " + slot);
    const std::string sig = Signature(slot, m.header);
    auto& arena = check_arenas_[sig];
    if (!arena) {
      arena = std::make_unique<Arena>(d_);
      Status st = arena->Init(ParseSpecs(m.header["inputs"]),
                              ParseSpecs(m.header["outputs"]));
      if (!st.ok()) {
        check_arenas_.erase(sig);
        return Fail(reply, "internal", st.message());
      }
    }
    size_t offset = 0;
    for (size_t i = 0; i < arena->inputs.size(); ++i) {
      const size_t n = arena->in_specs()[i].bytes();
      if (offset + n > m.blob.size()) {
        return Fail(reply, "internal", "input blob too short");
      }
      Status st = d_->ToDevice(arena->inputs[i].data, m.blob.data() + offset, n);
      if (!st.ok()) return Fail(reply, "internal", st.message());
      offset += n;
    }
    if (Status st = arena->PoisonOutputs(); !st.ok()) {
      return Fail(reply, "internal", st.message());
    }
    const bool count = m.header.value("count_kernels", true);
    std::vector<Tensor> in = arena->inputs, out = arena->outputs;
    const CallReport r = d_->Call(fn, in.data(), static_cast<int>(in.size()),
                                  out.data(), static_cast<int>(out.size()),
                                  count);
    if (CallFailed(r, reply)) return;
    bool inputs_modified = false;
    offset = 0;
    std::string tmp;
    for (size_t i = 0; i < arena->inputs.size(); ++i) {
      const size_t n = arena->in_specs()[i].bytes();
      tmp.resize(n);
      if (!d_->ToHost(tmp.data(), arena->inputs[i].data, n).ok()) break;
      if (std::memcmp(tmp.data(), m.blob.data() + offset, n) != 0) {
        inputs_modified = true;
      }
      offset += n;
    }
    for (size_t i = 0; i < arena->outputs.size(); ++i) {
      const size_t n = arena->out_specs()[i].bytes();
      tmp.resize(n);
      if (Status st = d_->ToHost(tmp.data(), arena->outputs[i].data, n); !st.ok()) {
        return Fail(reply, "internal", st.message());
      }
      blob->append(tmp);
    }
    auto guards = arena->GuardsIntact();
    *reply = {{"ok", true},
              {"call", CallToJson(r)},
              {"inputs_modified", inputs_modified},
              {"guard_ok", guards.ok() && *guards},
              {"late_ops", d_->TakeLateOps()}};
  }

  // full: generate inputs at the timing shape from `seed`, run the
  // candidate, then (on restored inputs) the trusted reference, and compare
  // on the device. The reference runs after the candidate so that no
  // correct output for these inputs exists while the candidate runs.
  void Full(const json& h, json* reply) {
    LaunchFn cand = Fn("cand"), ref = Fn("ref");
    if (cand == nullptr || ref == nullptr) {
      return Fail(reply, "internal", "cand/ref not loaded");
    }
    const auto in = ParseSpecs(h["inputs"]), out = ParseSpecs(h["outputs"]);
    Arena a(d_), shadow(d_), r(d_);
    for (Arena* x : {&a, &shadow, &r}) {
      if (Status st = x->Init(in, out); !st.ok()) {
        return Fail(reply, "internal", st.message());
      }
    }
    const uint64_t seed = h.value("seed", uint64_t{1});
    Status st = a.FillInputs(seed);
    if (st.ok()) st = a.CopyInputs(&shadow);
    if (st.ok()) st = a.PoisonOutputs();
    if (!st.ok()) return Fail(reply, "internal", st.message());
    const CallReport rc = d_->Call(cand, a.inputs.data(),
                                   static_cast<int>(a.inputs.size()),
                                   a.outputs.data(),
                                   static_cast<int>(a.outputs.size()), true);
    if (CallFailed(rc, reply)) return;
    auto equal = a.InputsEqual(&shadow);
    auto guards = a.GuardsIntact();
    if (!equal.ok() || !guards.ok()) {
      return Fail(reply, "internal", "cannot read back buffers");
    }
    st = shadow.CopyInputs(&r);
    if (st.ok()) st = r.PoisonOutputs();
    if (!st.ok()) return Fail(reply, "internal", st.message());
    const CallReport rr = d_->Call(ref, r.inputs.data(),
                                   static_cast<int>(r.inputs.size()),
                                   r.outputs.data(),
                                   static_cast<int>(r.outputs.size()), false);
    if (rr.sticky || !rr.error.empty() || rr.rc != 0) {
      if (rr.sticky) sticky_ = true;
      *reply = {{"ok", false}, {"kind", "reference"},
                {"error", "the reference failed: " + rr.error +
                              " rc=" + std::to_string(rr.rc)}};
      return;
    }
    auto counts = a.CompareOutputs(&r);
    if (!counts.ok()) return Fail(reply, "internal", counts.status().message());
    json outs = json::array();
    for (const CompareCounts& c : *counts) outs.push_back(CountsToJson(c));
    *reply = {{"ok", true},
              {"call", CallToJson(rc)},
              {"inputs_modified", !*equal},
              {"guard_ok", *guards},
              {"outputs", outs},
              {"late_ops", d_->TakeLateOps()}};
  }

  // round: `warmup` + `timed` pairs of calls, baseline ("base") and
  // candidate ("cand") in the order given per pair, each on freshly
  // generated inputs in one of `rotate` buffer sets per side, outputs
  // poisoned and the cache flushed before each call. Timed candidate calls
  // listed in `spot` are re-checked against the reference afterwards.
  void Round(const json& h, json* reply) {
    LaunchFn fns[2] = {Fn("base"), Fn("cand")};
    LaunchFn ref = Fn("ref");
    if (fns[0] == nullptr || fns[1] == nullptr || ref == nullptr) {
      return Fail(reply, "internal", "base/cand/ref not loaded");
    }
    const auto in = ParseSpecs(h["inputs"]), out = ParseSpecs(h["outputs"]);
    const int warmup = h.value("warmup", 5), timed = h.value("timed", 30);
    const int rotate = std::max(1, h.value("rotate", 3));
    const uint64_t seed = h.value("seed", uint64_t{1});
    const bool flush = h.value("flush", true);
    const std::vector<int> order = h.value("order", std::vector<int>{});
    const std::vector<int> spot_list = h.value("spot", std::vector<int>{});
    const std::set<int> spot(spot_list.begin(), spot_list.end());
    std::vector<std::unique_ptr<Arena>> sets[2];
    Arena shadow(d_), check(d_);
    Status st = shadow.Init(in, out);
    if (st.ok()) st = check.Init(in, out);
    for (int side = 0; side < 2 && st.ok(); ++side) {
      for (int k = 0; k < rotate && st.ok(); ++k) {
        sets[side].push_back(std::make_unique<Arena>(d_));
        st = sets[side].back()->Init(in, out);
      }
    }
    if (!st.ok()) return Fail(reply, "internal", st.message());
    std::vector<double> ms[2], host_ms[2];
    int zero_kernel_calls = 0, foreign = 0, min_kernels = 1 << 30;
    bool alloc_denied = false;
    std::string foreign_detail;
    json spots = json::array();
    for (int j = 0; j < warmup + timed; ++j) {
      const int first = j < static_cast<int>(order.size()) ? order[static_cast<size_t>(j)] : (j & 1);
      for (int s = 0; s < 2; ++s) {
        const int side = s == 0 ? first : 1 - first;
        Arena* a = sets[side][static_cast<size_t>(j % rotate)].get();
        const bool is_spot = side == 1 && j >= warmup && spot.count(j - warmup);
        st = a->FillInputs(SplitMix64(seed ^ (static_cast<uint64_t>(j) << 1 | side)));
        if (st.ok() && is_spot) st = a->CopyInputs(&shadow);
        if (st.ok()) st = a->PoisonOutputs();
        if (st.ok() && flush) st = d_->FlushCache();
        if (!st.ok()) return Fail(reply, "internal", st.message());
        const CallReport r = d_->Call(fns[side], a->inputs.data(),
                                      static_cast<int>(a->inputs.size()),
                                      a->outputs.data(),
                                      static_cast<int>(a->outputs.size()), false);
        if (CallFailed(r, reply)) return;
        if (r.rc != 0) {
          return Fail(reply, "launch", "launch() returned " + std::to_string(r.rc));
        }
        if (side == 1) {
          if (r.kernels == 0) ++zero_kernel_calls;
          if (r.kernels >= 0) min_kernels = std::min(min_kernels, r.kernels);
          foreign += r.foreign_stream_ops;
          if (!r.foreign_detail.empty()) foreign_detail = r.foreign_detail;
          alloc_denied |= r.alloc_denied;
        }
        if (j >= warmup) {
          ms[side].push_back(r.device_ms);
          host_ms[side].push_back(r.host_ms);
        }
        if (is_spot) {
          json sj;
          if (!SpotCheck(a, &shadow, &check, ref, j - warmup, &sj)) {
            *reply = sj;
            return;
          }
          spots.push_back(sj);
        }
      }
      Status hb = Reply({{"op", "progress"}, {"done", j + 1}});
      if (!hb.ok()) return;
    }
    *reply = {{"ok", true},
              {"base_ms", ms[0]},
              {"cand_ms", ms[1]},
              {"base_host_ms", host_ms[0]},
              {"cand_host_ms", host_ms[1]},
              {"zero_kernel_calls", zero_kernel_calls},
              {"min_kernels", min_kernels == (1 << 30) ? -1 : min_kernels},
              {"foreign", foreign},
              {"foreign_detail", foreign_detail},
              {"alloc_denied", alloc_denied},
              {"spot", spots},
              {"late_ops", d_->TakeLateOps()}};
  }

  // Re-runs the reference on the spot-checked call's inputs (restored from
  // `shadow`) into `check` and compares. False (with *out the failure
  // reply) if the reference itself failed.
  bool SpotCheck(Arena* a, Arena* shadow, Arena* check, LaunchFn ref,
                 int index, json* out) {
    auto equal = a->InputsEqual(shadow);
    Status st = shadow->CopyInputs(check);
    if (st.ok()) st = check->PoisonOutputs();
    if (!st.ok() || !equal.ok()) {
      *out = {{"ok", false}, {"kind", "internal"}, {"error", "spot check setup"}};
      return false;
    }
    const CallReport rr = d_->Call(ref, check->inputs.data(),
                                   static_cast<int>(check->inputs.size()),
                                   check->outputs.data(),
                                   static_cast<int>(check->outputs.size()), false);
    if (rr.sticky || !rr.error.empty() || rr.rc != 0) {
      if (rr.sticky) sticky_ = true;
      *out = {{"ok", false}, {"kind", "reference"}, {"error", rr.error}};
      return false;
    }
    auto counts = a->CompareOutputs(check);
    if (!counts.ok()) {
      *out = {{"ok", false}, {"kind", "internal"}, {"error", counts.status().message()}};
      return false;
    }
    int64_t unwritten = 0, mismatches = 0;
    for (const CompareCounts& c : *counts) {
      unwritten += c.unwritten;
      mismatches += c.mismatches;
    }
    *out = {{"index", index},
            {"unwritten", unwritten},
            {"mismatches", mismatches},
            {"inputs_modified", !*equal}};
    return true;
  }

  int fd_;
  Device* d_;
  std::string notes_;
  bool sticky_ = false;
  std::map<std::string, Library> libs_;
  std::map<std::string, std::unique_ptr<Arena>> check_arenas_;
};

}  // namespace

int RunWorkerLoop(int fd, Device* device, const std::string& sandbox_notes) {
  return WorkerLoop(fd, device, sandbox_notes).Run();
}

}  // namespace skilldb::verify::internal

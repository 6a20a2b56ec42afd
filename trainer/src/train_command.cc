// `skilldb train` (run by skilldb-ml, the CLI's libtorch companion): `demo`,
// `--config FILE` and `report RUN_DIR` (see trainer/README.md), their words
// in any order. One JSON line per step on stdout; errors on stderr
// (escaped: they quote paths, keys and file contents) with the exit status
// of their Status (util::ExitCodeFor: 1 for bad input, 2 when skilldb
// failed).
#include "skilldb/trainer/train_command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "skilldb/trainer/config.h"
#include "skilldb/trainer/distributed.h"
#include "skilldb/trainer/report.h"
#include "skilldb/trainer/rl_loop.h"
#include "skilldb/util/exit_code.h"
#include "skilldb/util/json.h"
#include "skilldb/util/text.h"
#include "skilldb/verify/kernelbench.h"

namespace skilldb::trainer {
namespace {

const char* kUsage =
    "usage (the words in any order):\n"
    "  skilldb train demo [--backend host|cuda] [--device cpu|cuda] [--steps "
    "N]\n"
    "                     [--seed S] [--out RUN_DIR] [--groups G] [--turns T]\n"
    "                     [--baseline loo|batch_mean|none]\n"
    "                     [--normalization per_agent|global|none]\n"
    "                     [--no-selection] [--no-summary] [--no-skills]\n"
    "                     [--coevolve] [--sft-epochs N] [--resume CKPT]\n"
    "  skilldb train --config FILE [--out RUN_DIR] [--steps N] [--resume "
    "CKPT]\n"
    "  skilldb train report RUN_DIR [--json]\n"
    "KernelBench problems as the task source (demo and --config; each flag\n"
    "sets the key of the config's \"kernelbench\" object it names, over the\n"
    "file's value; trainer/README.md, \"KernelBench tasks\"):\n"
    "  --kb-store DIR        the task store (skilldb kernelbench import); "
    "turns it on\n"
    "  --kb-level N          the problems' level (default 1)\n"
    "  --kb-train IDS        problem ids trained on, e.g. 1-20,33 (the "
    "syntax of\n"
    "                        kernelbench run --problems)\n"
    "  --kb-heldout IDS      problem ids only evaluated; disjoint from "
    "--kb-train\n"
    "  --kb-format F         cpp (CPU tensors, --backend host), cuda or "
    "triton\n"
    "                        (--backend cuda); default cpp\n"
    "  --kb-families DIR     the answer templates, DIR/level<L>_<id>.json\n"
    "  --kb-answers A        template (the policy writes a template's "
    "parameters)\n"
    "                        or free (a whole ModelNew); default template\n"
    "  --kb-eval-every N     held-out fast_p every N steps (0: never)\n"
    "  --kb-python PATH      the torch runner's interpreter\n"
    "  --kb-cache-dir DIR    builds and baselines\n"
    "Data-parallel: one process per device with RANK, WORLD_SIZE, "
    "MASTER_ADDR,\n"
    "MASTER_PORT set (gloo on cpu, nccl on cuda); SKILLDB_DIST_TIMEOUT_S "
    "(default 1800)\n"
    "bounds how long a gloo collective waits for a rank that falls behind.\n";

// Messages quote config values, paths and file contents: escaped, so
// nothing in them acts on a terminal.
std::string Printable(std::string_view text) { return util::EscapeBlock(text); }

int Fail(const std::string& message, int code = util::kExitUserError) {
  std::fprintf(stderr, "skilldb train: %s\n", Printable(message).c_str());
  return code;
}

int Fail(const Status& status) {
  return Fail(status.message(), util::ExitCodeFor(status.code()));
}

bool ParseInt(const char* s, int lo, int hi, int* out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

int RunTraining(TrainConfig config) {
  std::shared_ptr<ProcessGroupHandle> group;
  const char* ws = std::getenv("WORLD_SIZE");
  if (ws && std::strcmp(ws, "1") != 0) {
    auto env =
        DistEnvFromEnvironment(config.device == "cuda" ? "nccl" : "gloo");
    if (!env.ok()) return Fail(env.status());
    auto g = InitProcessGroup(*env);
    if (!g.ok()) return Fail(g.status());
    group = *g;
  }
  auto trainer = Trainer::Create(config, DefaultTrainerPaths(), group);
  if (!trainer.ok()) return Fail(trainer.status());
  Status s = (*trainer)->Run([](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  });
  if (!s.ok()) return Fail(s);
  return 0;
}

int Demo(const std::vector<std::string>& args) {
  TrainConfig c;
  c.out_dir = "skilldb-train-demo";
  c.steps = 12;
  // The demo's cold start: every combination of the family once, kept
  // apart by a high similarity threshold (the lines are much alike).
  c.sft_demo_records = 36;
  c.sft_epochs = 30;
  c.sft_filter.max_similarity = 0.95;
  c.sft_lr = 5e-3;
  c.optim.lr = 1e-3;
  c.optim.warmup_steps = 2;
  std::vector<std::string> kb_flags;
  const size_t argc = args.size();
  for (size_t i = 0; i < argc; ++i) {
    const std::string& a = args[i];
    auto value = [&](const char** out) {
      if (i + 1 >= argc) return false;
      *out = args[++i].c_str();
      return true;
    };
    const char* v = nullptr;
    if (a == "--backend" && value(&v)) {
      c.backend = v;
    } else if (a == "--device" && value(&v)) {
      c.device = v;
    } else if (a == "--steps" && value(&v)) {
      if (!ParseInt(v, 0, 1000000, &c.steps))
        return Fail("--steps: bad number");
    } else if (a == "--seed" && value(&v)) {
      int s;
      if (!ParseInt(v, 0, 2147483647, &s)) return Fail("--seed: bad number");
      c.seed = static_cast<uint64_t>(s);
    } else if (a == "--out" && value(&v)) {
      c.out_dir = v;
    } else if (a == "--groups" && value(&v)) {
      if (!ParseInt(v, 1, 4096, &c.groups)) return Fail("--groups: bad number");
    } else if (a == "--turns" && value(&v)) {
      if (!ParseInt(v, 1, 64, &c.max_turns)) return Fail("--turns: bad number");
    } else if (a == "--sft-epochs" && value(&v)) {
      if (!ParseInt(v, 0, 1000, &c.sft_epochs))
        return Fail("--sft-epochs: bad number");
    } else if (a == "--baseline" && value(&v)) {
      auto b = ParseBaseline(v);
      if (!b.ok()) return Fail(b.status().message());
      c.advantages.baseline = *b;
    } else if (a == "--normalization" && value(&v)) {
      auto n = ParseNormalization(v);
      if (!n.ok()) return Fail(n.status().message());
      c.advantages.normalization = *n;
    } else if (a == "--no-selection") {
      c.selection = false;
    } else if (a == "--no-summary") {
      c.summary = false;
    } else if (a == "--no-skills") {
      c.skills = false;
    } else if (a == "--coevolve") {
      ApplyCoevolution(&c);
    } else if (a == "--resume" && value(&v)) {
      c.resume = v;
    } else if (IsKernelBenchFlag(a) && value(&v)) {
      kb_flags.insert(kb_flags.end(), {a, v});
    } else if (a == "--json") {
      // Accepted (`skilldb --json train demo`): the step lines are JSON.
    } else {
      return Fail("unknown or incomplete argument '" + a + "'\n" + kUsage);
    }
  }
  if (c.backend == "cuda" && c.device == "cpu" &&
      !std::getenv("SKILLDB_TRAIN_CPU_MODEL")) {
    c.device = "cuda";
  }
  Status v = ApplyKernelBenchFlags(kb_flags, &c);
  if (!v.ok()) return Fail(v);
  return RunTraining(c);
}

int Config(const std::vector<std::string>& args) {
  std::string file, out, resume;
  std::vector<std::string> kb_flags;
  int steps = -1;
  const size_t argc = args.size();
  for (size_t i = 0; i < argc; ++i) {
    const std::string& a = args[i];
    if (a == "--config" && i + 1 < argc) {
      file = args[++i];
    } else if (a == "--out" && i + 1 < argc) {
      out = args[++i];
    } else if (a == "--resume" && i + 1 < argc) {
      resume = args[++i];
    } else if (a == "--steps" && i + 1 < argc) {
      if (!ParseInt(args[++i].c_str(), 0, 1000000, &steps))
        return Fail("--steps: bad number");
    } else if (IsKernelBenchFlag(a) && i + 1 < argc) {
      kb_flags.insert(kb_flags.end(), {a, args[++i]});
    } else if (a == "--json") {
      // Accepted (`skilldb --json train --config F`): the step lines are
      // JSON.
    } else {
      return Fail("unknown or incomplete argument '" + a + "'\n" + kUsage);
    }
  }
  auto text = ReadFile(file, int64_t{1} << 20);
  if (!text.ok()) return Fail(text.status());
  auto c = TrainConfigFromJson(*text);
  if (!c.ok()) return Fail(c.status().WithContext(file));
  if (!out.empty()) c->out_dir = out;
  if (!resume.empty()) c->resume = resume;
  if (steps >= 0) c->steps = steps;
  if (!kb_flags.empty()) {
    Status st = ApplyKernelBenchFlags(kb_flags, &*c);
    if (!st.ok()) return Fail(st.WithContext(file + " with the --kb-* flags"));
  }
  if (c->out_dir.empty())
    return Fail(file + ": no out_dir (set it or pass --out)");
  return RunTraining(*c);
}

int Report(const std::vector<std::string>& args) {
  std::string dir;
  bool as_json = false;
  for (const std::string& a : args) {
    if (a == "--json") {
      as_json = true;
    } else if (!a.empty() && a[0] != '-' && dir.empty()) {
      dir = a;
    } else {
      return Fail("unknown argument '" + a + "'\n" + kUsage);
    }
  }
  if (dir.empty())
    return Fail("report: RUN_DIR is required\n" + std::string(kUsage));
  auto r = WriteReport(dir);
  if (!r.ok()) return Fail(r.status());
  for (const std::string& d : r->dropped) {
    std::fprintf(stderr, "skilldb train: report: dropped %s\n",
                 Printable(d).c_str());
  }
  if (as_json) {
    nlohmann::json j = {{"steps", r->steps},
                        {"dropped", r->dropped},
                        {"files", r->files},
                        {"html", r->html_path}};
    std::printf("%s\n", util::DumpLossy(j).c_str());
  } else {
    std::printf("%d steps; wrote %s\n", r->steps,
                Printable(r->html_path).c_str());
  }
  return 0;
}

// An id list in `kernelbench run --problems`' syntax (verify's parser),
// which must name at least one problem (its "" means every id, which a
// split cannot be).
Result<std::vector<int>> SplitIds(std::string_view flag,
                                  std::string_view text) {
  const std::string f(flag);
  if (text.empty()) {
    return Status::InvalidArgument(f + ": names no problem (e.g. 1-20,33)");
  }
  auto ids = verify::kb::ParseIdList(text);
  if (!ids.ok())
    return Status::InvalidArgument(f + ": " + ids.status().message());
  return ids;
}

Status KbInt(std::string_view flag, const std::string& text, int lo, int hi,
             int* out) {
  if (ParseInt(text.c_str(), lo, hi, out)) return Status::Ok();
  return Status::InvalidArgument(
      std::string(flag) + ": '" + text + "' is not a whole number in [" +
      std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

// Sets the key `flag` names to `value`.
Status SetKbFlag(std::string_view flag, const std::string& value,
                 KernelBenchConfig* k) {
  const std::string f(flag);
  if (flag == "--kb-store" || flag == "--kb-families" ||
      flag == "--kb-python" || flag == "--kb-cache-dir") {
    if (value.empty()) return Status::InvalidArgument(f + ": empty value");
    std::string* field = flag == "--kb-store"      ? &k->store
                         : flag == "--kb-families" ? &k->families
                         : flag == "--kb-python"   ? &k->python
                                                   : &k->cache_dir;
    *field = value;
    return Status::Ok();
  }
  if (flag == "--kb-level") return KbInt(flag, value, 1, 1000, &k->level);
  if (flag == "--kb-eval-every") {
    return KbInt(flag, value, 0, 1000000, &k->eval_every);
  }
  if (flag == "--kb-train" || flag == "--kb-heldout") {
    SKILLDB_ASSIGN_OR_RETURN(std::vector<int> ids, SplitIds(flag, value));
    (flag == "--kb-train" ? k->train : k->heldout) = std::move(ids);
    return Status::Ok();
  }
  if (flag == "--kb-format") {
    if (value != "cpp" && value != "cuda" && value != "triton") {
      return Status::InvalidArgument(f + ": '" + value +
                                     "' is not cpp, cuda or triton");
    }
    k->format = value;
    return Status::Ok();
  }
  if (flag == "--kb-answers") {
    if (value != "template" && value != "free") {
      return Status::InvalidArgument(f + ": '" + value +
                                     "' is not template or free");
    }
    k->answers = value;
    return Status::Ok();
  }
  return Status::InvalidArgument("unknown flag '" + f + "'");
}

// ValidateTrainConfig's message with each key named as its flag too
// ("--kb-heldout ('kernelbench.heldout')"): what to change, whether the
// value came from the flags or the config file.
std::string NameFlags(std::string message) {
  for (const KernelBenchFlag& f : KernelBenchFlags()) {
    const std::string key = "'kernelbench." + std::string(f.key) + "'";
    const std::string named = std::string(f.flag) + " (" + key + ")";
    for (size_t at = message.find(key); at != std::string::npos;
         at = message.find(key, at + named.size())) {
      message.replace(at, key.size(), named);
    }
  }
  return message;
}

}  // namespace

Status ApplyKernelBenchFlags(const std::vector<std::string>& flags,
                             TrainConfig* config) {
  for (size_t i = 0; i < flags.size(); i += 2) {
    if (!IsKernelBenchFlag(flags[i])) {
      return Status::InvalidArgument("unknown flag '" + flags[i] + "'");
    }
    if (i + 1 >= flags.size()) {
      return Status::InvalidArgument(flags[i] + ": a value is required");
    }
    SKILLDB_RETURN_IF_ERROR(
        SetKbFlag(flags[i], flags[i + 1], &config->kernelbench));
  }
  Status v = ValidateTrainConfig(*config);
  if (v.ok()) return v;
  return Status::InvalidArgument(NameFlags(v.message()));
}

void ApplyCoevolution(TrainConfig* c) {
  LoopConfig& l = c->loop;
  l.skill_code_bytes = 60;
  l.skill_demo_records = 36;
  l.summary_demo_records = 36;
  l.family_summary_prompt = true;
  l.summaries_per_step = 2;
  l.summary_temperature = 0;
  l.summary_max_tokens = 512;
  // A second answer after a refused one (shown its error).
  l.summary_attempts = 2;
  // The skill-reading demonstrations answer what a format demonstration
  // answers, under another prompt: kept (a pair is a demonstration).
  c->sft_filter.compare_prompts = true;
}

int TrainMain(int argc, char** argv) {
  const std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  auto line = SplitTrainCommand(args);
  if (!line.ok()) return Fail(line.status().message() + "\n" + kUsage);
  for (const std::string& a : line->rest) {
    if (a == "--help" || a == "-h") line->command = "help";
  }
  if (line->command == "help") {
    std::printf("%s", kUsage);
    return 0;
  }
  // Every exception is caught here: a run's errors are Status values, and
  // anything thrown (a torch or JSON error that escaped) is reported, not
  // an abort.
  try {
    if (line->command == "demo") return Demo(line->rest);
    if (line->command == "report") return Report(line->rest);
    return Config(line->rest);
  } catch (const std::exception& e) {
    return Fail(std::string("internal error: ") + e.what(),
                util::kExitInternalError);
  }
}

}  // namespace skilldb::trainer

#include "cli/ensemble.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "cli/ensemble_input.hpp"
#include "cli/ensemble_optimize.hpp"
#include "cli/ensemble_table.hpp"
#include "cli/run_files.hpp"
#include "cli/run_single.hpp"
#include "daedalus/output.hpp"
#include "model/dynamic_module.hpp"

namespace daedalus::internal {
namespace {

namespace fs = std::filesystem;

// Whether the build found MPI and built the module libdaedalus_mpi.so.
#ifdef DAEDALUS_BUILT_WITH_MPI
constexpr bool kBuiltWithMpi = true;
#else
constexpr bool kBuiltWithMpi = false;
#endif
using ojson = nlohmann::ordered_json;

// The MPI transport from its module (cli/ensemble_mpi.cpp), started; null
// with `error` set when it cannot be loaded or MPI cannot start.
std::unique_ptr<EnsembleTransport> LoadMpiTransport(std::string* error) {
  const ModuleSearch search{"libdaedalus_mpi.so", "DAEDALUS_MPI_MODULE",
                            "The MPI transport of ensembles",
                            "daedalus_mpi_transport"};
  void* entry = LoadModuleEntry(search, error);
  if (entry == nullptr) return nullptr;
  using Entry = EnsembleTransport* (*)(int abi, std::string* error);
  return std::unique_ptr<EnsembleTransport>(
      reinterpret_cast<Entry>(entry)(kEnsembleTransportAbi, error));
}

// One process runs every member in turn.
class SerialTransport : public EnsembleTransport {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int Broadcast(int value) override { return value; }
  void Run(const std::vector<std::string>& tasks,
           const std::function<std::string(const std::string&)>& work,
           const std::function<void(size_t, int)>& handed,
           const std::function<void(const std::string&)>& done,
           const std::function<bool()>& stop) override {
    for (size_t k = 0; k < tasks.size(); ++k) {
      if (stop()) break;
      handed(k, 0);
      done(work(tasks[k]));
    }
  }
};

// The number of processes an MPI launcher started this one among (0 when
// none did), and this one's rank, from the launcher's environment.
int LauncherSize(int* rank) {
  for (const auto& [size_var, rank_var] :
       {std::pair{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
        std::pair{"PMI_SIZE", "PMI_RANK"}}) {
    if (const char* s = std::getenv(size_var)) {
      const char* r = std::getenv(rank_var);
      *rank = r ? std::atoi(r) : 0;
      return std::atoi(s);
    }
  }
  *rank = 0;
  return 0;
}

constexpr int kHelpShown = -1;  // Prepare's verdict: --help printed
// Prepare's verdict for a signal during the set-up: 128 + the signal, as
// the process's exit status (nothing run; the message printed).

// FNV-1a, 64 bits: the journal's fingerprint of an ensemble.
uint64_t Fnv1a(const std::string& s, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::string Hex(uint64_t x) {
  std::ostringstream os;
  os << std::hex << std::setw(16) << std::setfill('0') << x;
  return os.str();
}

// The members' common arguments: the command line without --output-dir
// and --quiet (the ensemble gives each member its own).
std::vector<std::string> CommonArgs(const std::vector<std::string>& rest) {
  std::vector<std::string> out;
  for (size_t i = 0; i < rest.size(); ++i) {
    const std::string& a = rest[i];
    if (i > 0 && a == "--output-dir") {
      ++i;
      continue;
    }
    if (i > 0 && (a.rfind("--output-dir=", 0) == 0 || a == "--quiet")) continue;
    out.push_back(a);
    if (i > 0 && IsValueFlag(a) && i + 1 < rest.size())
      out.push_back(rest[++i]);
  }
  return out;
}

// What rank 0 knows before the members run.
struct Plan {
  std::string name, base, journal, mode;
  bool quiet = false;
  bool optimize = false, maximize = false;  // members are --optimize runs
  ojson meta;
  std::vector<std::string> tasks;  // every member, in order
  std::vector<ojson> rows;         // filled from the journal or by runs
  std::vector<bool> finished;      // in the journal already
  /// (member, rank) started by a previous job that ended without their
  /// results and without an interruption: a rank died or the job was
  /// killed. They run again.
  std::vector<std::pair<int, int>> lost;
};

// Reads the journal of a previous run of the same ensemble: rows of
// finished members, and {"started": m, "rank": r} and {"interrupted": m}
// lines (a member started but neither finished nor interrupted was lost
// with its rank). Rewrites it with the finished rows only (without a torn
// last line) and leaves it ready for appending. Returns "" or a usage
// error.
std::string LoadJournal(Plan* plan, const std::string& header) {
  std::ifstream in(plan->journal);
  std::vector<std::string> keep;
  if (in) {
    std::string first;
    std::getline(in, first);
    if (!first.empty() && first != header)
      return plan->journal +
             ":1: this journal belongs to a different ensemble (other "
             "members or options); remove it to start afresh, or give "
             "another --output-dir";
    const int n = static_cast<int>(plan->rows.size());
    std::map<int, int> started;  // member -> rank
    std::set<int> interrupted;
    for (std::string l; std::getline(in, l);) {
      try {
        const ojson row = ojson::parse(l);
        if (row.contains("started")) {
          started[row.at("started").get<int>()] = row.value("rank", -1);
          continue;
        }
        if (row.contains("interrupted")) {
          interrupted.insert(row.at("interrupted").get<int>());
          continue;
        }
        const int m = row.at("member").get<int>();
        if (m < 0 || m >= static_cast<int>(plan->rows.size())) continue;
        plan->rows[static_cast<size_t>(m)] = row;
        plan->finished[static_cast<size_t>(m)] = true;
        keep.push_back(l);
      } catch (const std::exception&) {
        // A line torn by a crash while it was written: that member runs
        // again.
      }
    }
    for (const auto& [m, r] : started)
      if (m >= 0 && m < n && !plan->finished[static_cast<size_t>(m)] &&
          !interrupted.count(m))
        plan->lost.emplace_back(m, r);
  }
  const std::string partial = plan->journal + ".partial";
  {
    std::ofstream out(partial);
    out << header << "\n";
    for (const auto& l : keep) out << l << "\n";
    if (!out) return "cannot write the journal '" + partial + "'";
  }
  std::error_code ec;
  fs::rename(partial, plan->journal, ec);
  if (ec)
    return "cannot write the journal '" + plan->journal + "': " + ec.message();
  return "";
}

// Rank 0: reads the command line and the members, prepares the output
// folder and the journal. Returns 0, kHelpShown, 2 (printed), or 128 + N
// when signal N came during the set-up (printed; nothing run).
int Prepare(const Problem& problem, int argc, char** argv, Plan* plan) {
  const std::string program = argc > 0 ? argv[0] : problem.model.name();
  const std::atomic<int>* stop = StopOnSignals::flag();
  auto interrupted = [&](const std::string& where) {
    std::cerr << program << ": interrupted by " << SignalName(stop->load())
              << " while " << where
              << "; no member was run (run the same command again)\n";
    return 128 + stop->load();
  };
  try {
    const EnsembleArgs ea = SplitEnsembleArgs(argc, argv);
    std::vector<const char*> rest;
    for (const auto& a : ea.rest) rest.push_back(a.c_str());
    const RunConfig cfg =
        ParseCommandLine(problem, static_cast<int>(rest.size()), rest.data());
    if (cfg.help) {
      std::cout << Usage(problem, program);
      return kHelpShown;
    }
    if (!cfg.emit_kernels.empty())
      throw std::invalid_argument(
          "--emit-kernels does not run members; "
          "leave out --ensemble/--monte-carlo");
    plan->optimize = !cfg.optimize.empty();
    if (ea.multi_start > 0 && !plan->optimize)
      throw std::invalid_argument(
          "--multi-start N draws the starting guesses of an optimization: "
          "give --optimize SPEC.json too");
    OptimizePlan optimization;
    if (plan->optimize) optimization = PlanOptimization(problem, cfg);
    plan->maximize = optimization.maximize;
    std::vector<MemberSpec> members;
    std::vector<Distribution> dists;
    const long drawn = ea.multi_start > 0 ? ea.multi_start : ea.monte_carlo;
    if (!ea.file.empty()) {
      members =
          ReadEnsembleFile(problem.model, ea.file,
                           plan->optimize ? &optimization.variables : nullptr);
      plan->mode = "file";
    } else if (ea.multi_start > 0) {
      members =
          DrawStarts(optimization.variables, ea.multi_start, ea.seed, stop);
      plan->mode = "multi-start";
    } else {
      for (const auto& d : ea.dists)
        dists.push_back(ParseDistribution(problem.model, d));
      members =
          DrawMembers(problem.model, ea.monte_carlo, ea.seed, dists, stop);
      plan->mode = "monte-carlo";
    }
    if (stop->load() != 0)
      return interrupted("drawing the members (" +
                         std::to_string(members.size()) + " of " +
                         std::to_string(drawn) + " drawn)");
    plan->name = problem.model.name();
    plan->quiet = cfg.quiet;
    plan->base = (fs::path(cfg.output_dir) / plan->name).string();
    plan->journal = plan->base + ".ensemble.journal";
    const std::vector<std::string> common = CommonArgs(ea.rest);
    uint64_t fp = Fnv1a(plan->name);
    for (const MemberSpec& m : members) {
      if (m.index % 4096 == 0 && stop->load() != 0)
        return interrupted("setting up the members (" +
                           std::to_string(m.index) + " of " +
                           std::to_string(members.size()) + ")");
      std::vector<std::string> args = common;
      args.insert(args.end(), m.args.begin(), m.args.end());
      for (size_t i = 1; i < args.size(); ++i) fp = Fnv1a(args[i] + "\x1f", fp);
      fp = Fnv1a("\x1e", fp);
      char dir[32];
      std::snprintf(dir, sizeof dir, "members/%06d", m.index);
      args.push_back("--output-dir");
      args.push_back((fs::path(cfg.output_dir) / dir).string());
      args.push_back("--quiet");
      ojson inputs = ojson::array();
      for (const auto& [c, t] : m.inputs) inputs.push_back({c, t});
      plan->tasks.push_back(ojson{
          {"member", m.index},
          {"name", m.name},
          {"inputs", inputs},
          {"dir", dir},
          {"argv", args}}.dump(-1, ' ', false,
                               nlohmann::json::error_handler_t::replace));
    }
    plan->rows.assign(members.size(), ojson());
    plan->finished.assign(members.size(), false);
    ojson meta;
    meta["problem"] = plan->name;
    meta["mode"] = plan->mode;
    if (!ea.file.empty()) meta["file"] = ea.file;
    if (plan->mode == "monte-carlo") {
      meta["seed"] = ea.seed;
      meta["distributions"] = ea.dists;
    }
    if (plan->mode == "multi-start") meta["seed"] = ea.seed;
    if (plan->optimize) meta["optimization"] = optimization.Meta();
    meta["members"] = members.size();
    meta["command_line"] = common;
    plan->meta = meta;
    try {
      fs::create_directories(fs::path(cfg.output_dir) / "members");
    } catch (const std::exception& e) {
      std::cerr << program << ": cannot create the output folder '"
                << cfg.output_dir << "/members': " << e.what()
                << "; give a writable --output-dir\n";
      return 2;
    }
    const std::string header = "daedalus-ensemble-journal 1 " + plan->name +
                               " " + std::to_string(members.size()) + " " +
                               Hex(fp);
    const std::string why = LoadJournal(plan, header);
    if (!why.empty()) {
      std::cerr << program << ": " << why << "\n";
      return 2;
    }
    ojson reissued = ojson::array();
    for (const auto& [m, r] : plan->lost)
      reissued.push_back({{"member", m}, {"rank", r}});
    plan->meta["reissued"] = reissued;
  } catch (const std::invalid_argument& e) {
    std::cerr << program << ": " << e.what() << "\n(see --help)\n";
    return 2;
  }
  return 0;
}

// Rank 0's bookkeeping while members finish: the journal, the progress
// line, a line per failed member.
class Gatherer {
 public:
  Gatherer(Plan* plan, std::string program, int ranks)
      : plan_(plan),
        program_(std::move(program)),
        ranks_(ranks),
        journal_(plan->journal, std::ios::app),
        terminal_(ProgressLine::StderrIsTerminal()),
        start_(std::chrono::steady_clock::now()) {
    for (bool f : plan->finished) done_ += f ? 1 : 0;
    resumed_ = done_;
  }

  // Member m went to rank r: journaled, so that a rerun after a dead rank
  // names it.
  void Started(int m, int r) {
    const auto t0 = std::chrono::steady_clock::now();
    journal_ << ojson{{"started", m}, {"rank", r}}.dump() << "\n" << std::flush;
    gather_time_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
  }

  void Done(const std::string& text) {
    const auto t0 = std::chrono::steady_clock::now();
    Bookkeep(text);
    gather_time_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
  }

  // Writes the tables; prints the summary; returns the exit status.
  int Finish(const Model& model, int stop_signal) {
    ClearProgress();
    std::map<std::string, int> counts;
    double member_time = 0.0;
    std::vector<ojson> rows;
    for (size_t i = 0; i < plan_->rows.size(); ++i) {
      ojson r = plan_->rows[i].is_null() ? PendingRow(plan_->tasks[i])
                                         : plan_->rows[i];
      ++counts[r.value("status", "")];
      if (r.contains("wall_time") && r["wall_time"].is_number())
        member_time += r["wall_time"].get<double>();
      rows.push_back(std::move(r));
    }
    const double wall = Elapsed();
    ojson meta = plan_->meta;
    meta["ranks"] = ranks_;
    meta["wall_time"] = wall;
    meta["member_wall_time_sum"] = member_time;
    meta["resumed_from_journal"] = resumed_;
    // Rank 0's own time per result: parse, journal (flushed), progress.
    meta["gather_time_sum"] = gather_time_;
    meta["counts"] = counts;
    ojson optima;
    if (plan_->optimize) {
      // The optima the members reached, grouped; the best named.
      optima = GroupMemberOptima(&rows, plan_->maximize);
      meta["optimization"]["optima"] = optima;
    }
    const std::string err = WriteEnsembleTables(model, meta, rows, plan_->base);
    if (!err.empty()) {
      std::cerr << program_ << ": " << err << " (the journal " << plan_->journal
                << " keeps every finished member)\n";
      return 2;
    }
    if (!plan_->quiet) {
      std::cout << "Daedalus ensemble: " << plan_->name << "  [" << plan_->mode
                << ", " << rows.size() << " members, " << ranks_ << " rank"
                << (ranks_ == 1 ? "" : "s") << "]\n"
                << "  members                " << counts["ok"] << " ok, "
                << counts["failed"] << " failed, " << counts["interrupted"]
                << " interrupted, " << counts["pending"] << " not run ("
                << resumed_ << " from the journal)\n"
                << "  wall time              " << wall << " s (members "
                << member_time << " s summed)\n"
                << (plan_->optimize ? OptimaReport(optima) : "")
                << "  wrote                  " << plan_->base
                << ".ensemble.csv, " << plan_->base << ".ensemble.json\n";
    }
    if (stop_signal != 0) {
      std::cerr << program_ << ": interrupted by " << SignalName(stop_signal)
                << "; " << plan_->journal
                << " lists the finished members: run the same command "
                   "again to run the others\n";
      return 128 + stop_signal;
    }
    return counts["failed"] > 0 ? 1 : 0;
  }

  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start_)
        .count();
  }

 private:
  void Bookkeep(const std::string& text) {
    ojson row;
    try {
      row = ojson::parse(text);
    } catch (const std::exception& e) {
      std::cerr << program_ << ": unreadable member result: " << e.what()
                << "\n";
      return;
    }
    const int m = row.value("member", -1);
    if (m < 0 || m >= static_cast<int>(plan_->rows.size())) return;
    plan_->rows[static_cast<size_t>(m)] = row;
    const std::string status = row.value("status", "");
    if (status != "interrupted") {
      // Finished: journaled at once, so that a rerun skips it.
      journal_ << row.dump(-1, ' ', false,
                           nlohmann::json::error_handler_t::replace)
               << "\n"
               << std::flush;
      ++done_;
    } else {
      journal_ << ojson{{"interrupted", m}}.dump() << "\n" << std::flush;
    }
    if (status == "failed") {
      ClearProgress();
      std::cerr << program_ << ": member " << m
                << (row.value("name", "").empty()
                        ? ""
                        : " (" + row.value("name", "") + ")")
                << " failed: " << row.value("error", "") << "\n";
    }
    Progress();
  }

  void Progress() {
    if (!terminal_) return;
    const double now = Elapsed();
    if (now - last_ < 0.2 && done_ < plan_->rows.size()) return;
    last_ = now;
    std::cerr << "\r" << plan_->name << " ensemble: " << done_ << "/"
              << plan_->rows.size() << " members, " << std::fixed
              << std::setprecision(1) << now << " s elapsed\033[K"
              << std::defaultfloat << std::flush;
    written_ = true;
  }
  void ClearProgress() {
    if (written_) std::cerr << "\r\033[K" << std::flush;
    written_ = false;
  }

  Plan* plan_;
  std::string program_;
  int ranks_;
  std::ofstream journal_;
  bool terminal_, written_ = false;
  std::chrono::steady_clock::time_point start_;
  double last_ = -1.0, gather_time_ = 0.0;
  size_t done_ = 0, resumed_ = 0;
};

}  // namespace

bool WantsEnsemble(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    for (const char* f :
         {"--ensemble", "--monte-carlo", "--seed", "--dist", "--multi-start"}) {
      const std::string flag = f;
      if (a == flag || a.rfind(flag + "=", 0) == 0) return true;
    }
  }
  return false;
}

int RunEnsemble(const Problem& problem, int argc, char** argv) {
  const std::string program = argc > 0 ? argv[0] : problem.model.name();
  int launcher_rank = 0;
  const int launcher_size = LauncherSize(&launcher_rank);
  std::unique_ptr<EnsembleTransport> transport;
  if (kBuiltWithMpi && launcher_size > 0) {
    std::string error;
    transport = LoadMpiTransport(&error);
    if (!transport) {
      if (launcher_rank == 0)
        std::cerr << program << ": cannot start MPI: " << error << "\n";
      return 2;
    }
    // A launcher of another MPI (MPICH's mpiexec for an OpenMPI build, say)
    // starts processes that each initialize as a job of one: each would run
    // the whole ensemble.
    if (transport->size() != launcher_size) {
      if (launcher_rank == 0)
        std::cerr << program << ": started by an MPI launcher as "
                  << launcher_size << " processes, but MPI reports "
                  << transport->size()
                  << " (is the launcher from another MPI than the one "
                     "Daedalus was built with?), so each would run the whole "
                     "ensemble; use the mpirun of the MPI Daedalus was built "
                     "with (Debian: openmpi-bin), or run without mpirun for "
                     "a serial ensemble\n";
      return 2;
    }
  } else if (launcher_size > 1) {
    if (launcher_rank == 0)
      std::cerr << program << ": started by an MPI launcher as "
                << launcher_size
                << " processes, but this executable was built without MPI "
                   "(no MPI found when the build was configured), so each "
                   "would run the whole ensemble; run it without mpirun for "
                   "a serial ensemble, or install libopenmpi-dev and "
                   "openmpi-bin and rebuild\n";
    return 2;
  }
  if (!transport) transport = std::make_unique<SerialTransport>();
  const int rank = transport->rank();
  // SIGINT, SIGTERM and SIGHUP: during the set-up (a Monte Carlo of a
  // million members takes tens of seconds) nothing runs; then the running
  // members end "interrupted", no other member starts, the table is
  // written (run_files.hpp).
  StopOnSignals signals;
  const std::atomic<int>* stop = StopOnSignals::flag();
  Plan plan;
  int verdict = rank == 0 ? Prepare(problem, argc, argv, &plan) : 0;
  verdict = transport->Broadcast(verdict);
  if (verdict != 0) return verdict == kHelpShown ? 0 : verdict;
  auto work = [&](const std::string& task) {
    return RunMemberTask(problem, program, task, rank);
  };
  int code = 0;
  if (rank == 0) {
    Gatherer gather(&plan, program, transport->size());
    std::vector<std::string> todo;
    std::vector<int> todo_member;  // todo[k] is member todo_member[k]
    std::string unfinished;        // the first 20 members still to run
    for (size_t i = 0; i < plan.tasks.size(); ++i) {
      if (plan.finished[i]) continue;
      todo.push_back(plan.tasks[i]);
      todo_member.push_back(static_cast<int>(i));
      if (todo.size() <= 20)
        unfinished += (todo.size() == 1 ? "" : ", ") + std::to_string(i);
    }
    if (!plan.quiet && todo.size() < plan.tasks.size()) {
      // A rerun after an interruption or a dead rank: what is re-issued.
      std::cout << plan.name << " ensemble: " << plan.tasks.size() - todo.size()
                << " of " << plan.tasks.size() << " members finished in "
                << plan.journal << "; running the other " << todo.size()
                << (todo.empty() ? ""
                                 : " (members " + unfinished +
                                       (todo.size() > 20 ? ", ..." : "") + ")")
                << "\n";
    }
    if (!plan.lost.empty()) {
      // Said even with --quiet: a fault of the previous job.
      std::string which;
      for (size_t k = 0; k < plan.lost.size() && k < 20; ++k)
        which += (k == 0 ? "" : ", ") + std::to_string(plan.lost[k].first) +
                 " (rank " + std::to_string(plan.lost[k].second) + ")";
      if (plan.lost.size() > 20) which += ", ...";
      std::cerr << program << ": the previous run of this ensemble ended "
                << "while member" << (plan.lost.size() == 1 ? " " : "s ")
                << which
                << " had started, before their results arrived (a rank "
                   "died or the job was killed); running them again\n";
    }
    transport->Run(
        todo, work, [&](size_t k, int r) { gather.Started(todo_member[k], r); },
        [&](const std::string& row) { gather.Done(row); },
        [&] { return stop->load() != 0; });
    code = gather.Finish(problem.model, stop->load());
  } else {
    transport->Run(
        {}, work, [](size_t, int) {}, [](const std::string&) {},
        [] { return false; });
  }
  return transport->Broadcast(code);
}

}  // namespace daedalus::internal

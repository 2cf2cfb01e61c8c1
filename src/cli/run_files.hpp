// The files of one command-line run, and the signals that end it.
//
// A run writes <base>.csv.partial and <base>.json.partial and puts both in
// place when it ends, succeeded, failed or interrupted (Commit): the
// previous run's JSON is removed first, then the CSV and the JSON are
// renamed, so a reader never finds a new CSV beside an old JSON that says
// "ok", and a run that fails before its first row leaves no stale CSV.
// SIGINT, SIGTERM and SIGHUP (a closed terminal or ssh session) set the
// run's stop flag (SimulationOptions::stop):
// the run ends at its next model evaluation with the rows so far and a
// JSON marked "interrupted"; a second signal kills the process as usual.
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace daedalus::internal {

class RunFiles {
 public:
  /// `base`: the output path without extension (DIR/<name>).
  explicit RunFiles(std::string base) : base_(std::move(base)) {}
  /// Removes the temporary files of a run that did not commit.
  ~RunFiles();
  RunFiles(const RunFiles&) = delete;
  RunFiles& operator=(const RunFiles&) = delete;

  std::string csv() const { return base_ + ".csv"; }
  std::string json() const { return base_ + ".json"; }
  std::string csv_partial() const { return base_ + ".csv.partial"; }
  std::string json_partial() const { return base_ + ".json.partial"; }
  /// A file beside the CSV (Problem::side_outputs): <base>.<suffix>,
  /// written as <base>.<suffix>.partial and put in place by Commit with
  /// the CSV (before the JSON). Returns its partial path.
  std::string AddSide(const std::string& suffix);
  const std::vector<std::string>& sides() const { return sides_; }

  /// Marks the results of an earlier run in the folder as superseded, the
  /// first thing a run does once its options are accepted: <base>.json is
  /// replaced (atomically) by the same summary with "status":
  /// "superseded" and the previous status under "superseded_status" (a
  /// JSON that does not parse, or a CSV without a JSON, gets a short one),
  /// so that a run killed outright (SIGKILL) never leaves the previous
  /// "ok" files looking current. Nothing to mark: nothing written.
  /// Returns "" or what failed (nothing is then changed).
  std::string MarkSuperseded() const;

  /// Puts the partial files in place (see the file comment); a missing
  /// partial CSV removes the previous CSV. Returns "" or what failed.
  std::string Commit();

 private:
  std::string base_;
  std::vector<std::string> sides_;  // final paths of the side files
  bool committed_ = false;
};

/// DIR/<name>: where a run of the model `name` writes (DIR/<name>.csv,
/// ...). @throws std::invalid_argument when `name` is not one plain file
/// name (empty, ".", "..", or holding a slash), which would put the files
/// outside DIR; ModelBuilder::Build() refuses such names already
/// (src/model/names.hpp), this guards every writer against another way in.
std::string OutputBase(const std::string& dir, const std::string& name);

/// While alive, SIGINT, SIGTERM and SIGHUP store their number in flag() (once:
/// the handler is reset, so a second signal has its default effect);
/// the previous handlers are restored on destruction. A signal the process
/// started with ignored stays ignored, as POSIX programs keep it: SIGHUP
/// under `nohup`, SIGINT in a background job of a non-interactive shell.
/// (Overriding it made `nohup mjcf ... &` stop when its terminal closed,
/// and a fuzzer started under nohup saw a SIGHUP 1 ms after the start
/// ignored: fuzz_edges.py, seed 47, signals run 294.)
class StopOnSignals {
 public:
  StopOnSignals();
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  static const std::atomic<int>* flag();
};

/// "SIGINT", "SIGTERM", "SIGHUP", or "signal N".
std::string SignalName(int signal_number);

}  // namespace daedalus::internal

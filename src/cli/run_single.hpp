// One run of a problem from a parsed command line: what run() does after
// parsing, shared with the members of an ensemble (cli/ensemble.hpp), and
// the command line's number parsers.
#pragma once

#include <string>

#include "daedalus/run.hpp"

namespace daedalus::internal {

/// A decimal number, the whole text, finite (docs/output.md).
/// @throws std::invalid_argument naming `flag` and the text.
double ParseNumber(const std::string& flag, const std::string& text);
/// A positive whole number (--max-steps, --max-samples).
/// @throws std::invalid_argument naming `flag` and the text.
long ParseCount(const std::string& flag, const std::string& text);
/// Whether `arg` is a flag of the common command line that takes a value.
bool IsValueFlag(const std::string& arg);

/// Compiles every program a run of `problem` with cfg's options may use
/// (the stages, and the IDAS programs of each DAE form), so that a
/// ProgramCollector alive meanwhile records them (--emit-kernels,
/// EmitNativeKernels).
void CollectPrograms(const Problem& problem, const RunConfig& cfg);

/// The problem's initial state at cfg.params with the --q0/--v0 overrides
/// applied. @throws std::invalid_argument for an override out of range.
InitialState StartingState(const Problem& problem, const RunConfig& cfg);

struct SingleRunResult {
  /// run()'s exit status: 0 ok, 1 failed, 2 unusable options or output,
  /// 128 + N interrupted by signal N.
  int exit_code = 0;
  /// The JSON summary written (empty when the run could not start).
  std::string json;
  /// What went wrong, one message (empty when exit_code is 0).
  std::string message;
  /// The files written: DIR/<name> without extension.
  std::string base;
};

/// Runs `problem` with `cfg` (from ParseCommandLine) and writes
/// DIR/<name>.csv and .json. With `report`, prints the human summary
/// (unless cfg.quiet), messages on stderr and a progress line as run()
/// does; without, prints nothing. The run stops at StopOnSignals::flag()
/// (the caller installs the handlers).
SingleRunResult RunSingle(const Problem& problem,
                          RunConfig cfg,
                          const std::string& program,
                          bool report);

}  // namespace daedalus::internal

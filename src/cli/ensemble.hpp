// Ensembles: many runs of one problem from one command line
// (docs/ensembles.md).
//
//   build/problems/<name> --ensemble FILE [options]
//   build/problems/<name> --monte-carlo N [--seed S] --dist P=KIND:A,B...
//       [options]
//   mpirun -np N build/problems/<name> --ensemble FILE [options]
//   build/problems/<name> --optimize SPEC.json --multi-start N [--seed S]
//
// With --optimize each member is one optimization (cli/run_optimize.hpp,
// cli/ensemble_optimize.hpp) instead of a run.
//
// Each member is one run with the command line's options overridden by its
// row (or its draws); it writes DIR/members/<6 digits>/<name>.csv and .json.
// Rank 0 (or the serial run) gathers one row per member into
// DIR/<name>.ensemble.csv and .json and appends every finished member to
// DIR/<name>.ensemble.journal, which a rerun of the same command reads to
// skip them. Exit status: 0 all members ok, 1 some failed, 2 bad usage or
// input (before any member runs), 128 + N interrupted by signal N.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "daedalus/run.hpp"

namespace daedalus::internal {

/// Whether the command line asks for an ensemble (--ensemble,
/// --monte-carlo, --seed, --dist or --multi-start).
bool WantsEnsemble(int argc, const char* const* argv);

/// Runs the ensemble the command line describes; returns the exit status.
int RunEnsemble(const Problem& problem, int argc, char** argv);

/// How the members reach the processes that run them: one process
/// (serial) or the ranks of an MPI job (cli/ensemble_mpi.cpp).
class EnsembleTransport {
 public:
  virtual ~EnsembleTransport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Rank 0's `value` on every rank (collective).
  virtual int Broadcast(int value) = 0;
  /// Runs the tasks (rank 0's list; the other ranks pass none): `work`
  /// turns a task into its result on whichever rank runs it; `handed`
  /// learns on rank 0's calling thread that task k went to rank r (before
  /// its result can arrive); `done` gets every result there as it
  /// arrives; once `stop` (rank 0) says so no further task is handed out.
  /// Returns on every rank when all tasks handed out have reported.
  virtual void Run(const std::vector<std::string>& tasks,
                   const std::function<std::string(const std::string&)>& work,
                   const std::function<void(size_t, int)>& handed,
                   const std::function<void(const std::string&)>& done,
                   const std::function<bool()>& stop) = 0;
};

/// Bumped with every change to EnsembleTransport: the MPI transport is a
/// shared module (libdaedalus_mpi.so, cli/ensemble_mpi.cpp) that refuses
/// another version.
inline constexpr int kEnsembleTransportAbi = 1;

}  // namespace daedalus::internal

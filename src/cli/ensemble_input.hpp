// The inputs of an ensemble (docs/ensembles.md): its flags, the members of
// an ensemble file, and the members a Monte Carlo draw makes.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/optimal_control.hpp"

namespace daedalus::internal {

/// The ensemble flags, taken out of a command line.
struct EnsembleArgs {
  std::string file;      ///< --ensemble FILE
  long monte_carlo = 0;  ///< --monte-carlo N (0: not given)
  long multi_start = 0;  ///< --multi-start N (0: not given)
  uint64_t seed = 0;     ///< --seed S
  bool seed_given = false;
  std::vector<std::string> dists;  ///< --dist P=KIND:A,B, in order
  /// Everything else, argv[0] first: the members' common command line.
  std::vector<std::string> rest;
};

/// @throws std::invalid_argument for a missing value, a malformed count or
/// seed, or flags that do not combine (the message says how to fix it).
EnsembleArgs SplitEnsembleArgs(int argc, const char* const* argv);

/// One member: what distinguishes its run from the common command line.
struct MemberSpec {
  int index = 0;     ///< 0-based: the data row, or the draw
  std::string name;  ///< the `name` column, if any
  /// (column, text) as given in the file or drawn, for the gathered table.
  std::vector<std::pair<std::string, std::string>> inputs;
  /// Command-line arguments appended to the common ones
  /// ("--param", "m=2", "--t-end", "1"): later flags win.
  std::vector<std::string> args;
};

/// The columns an ensemble file may have beside the parameters and `name`
/// (t_end, rtol, ...: the value flags of the command line with '_' for '-').
std::vector<std::string> EnsembleOptionColumns();

/// Reads an ensemble file: a header row naming the columns, then one data
/// row per member (docs/ensembles.md).
/// @throws std::invalid_argument "FILE:LINE:COLUMN: what; how to fix it"
/// for an unreadable file, an unknown or repeated column, a value that is
/// not a number (or not a valid option word), a row with the wrong number
/// of fields, an empty row, or a file without members.
/// With `guesses` (the free variables of an --optimize spec), a column
/// named as one of them is the member's initial guess of it (--guess
/// NAME=VALUE), before the parameters' meaning of the same name.
std::vector<MemberSpec> ReadEnsembleFile(
    const Model& model,
    const std::string& path,
    const std::vector<FreeVariable>* guesses = nullptr);

/// A distribution of one parameter for --monte-carlo.
struct Distribution {
  int parameter = 0;
  enum class Kind { kUniform, kNormal, kLogNormal } kind = Kind::kUniform;
  double a = 0.0, b = 0.0;  ///< lo, hi | mean, sd | mu, sigma of log
  std::string spec;         ///< as given
};

/// Parses "P=uniform:LO,HI", "P=normal:MEAN,SD" or
/// "P=lognormal:MU,SIGMA".
/// @throws std::invalid_argument naming the flag value and the rule broken.
Distribution ParseDistribution(const Model& model, const std::string& spec);

/// A uniform number in (0, 1) that depends only on (seed, member, stream):
/// a counter-based generator (SplitMix64 finalizer), so that member i draws
/// the same values whatever rank runs it and whatever ran before.
double CounterUniform(uint64_t seed, uint64_t member, uint64_t stream);

/// Members 0..n-1 of a Monte Carlo ensemble: each distributed parameter
/// drawn from streams 2p and 2p+1 of (seed, member) (p its index in the
/// model), written with 17 significant digits (read back exactly). Once
/// `stop` holds a signal the draws end there (fewer than n members).
std::vector<MemberSpec> DrawMembers(const Model& model,
                                    long n,
                                    uint64_t seed,
                                    const std::vector<Distribution>& dists,
                                    const std::atomic<int>* stop = nullptr);

/// Members 0..n-1 of a multi-start optimization (--multi-start N): member
/// 0 starts from the spec's own guesses (no --guess); member i > 0 from
/// variable k drawn uniformly in [lower_k, upper_k] from stream k of
/// (seed, i) (CounterUniform), written with 17 significant digits.
/// @throws std::invalid_argument naming a variable without finite bounds.
std::vector<MemberSpec> DrawStarts(const std::vector<FreeVariable>& vars,
                                   long n,
                                   uint64_t seed,
                                   const std::atomic<int>* stop = nullptr);

}  // namespace daedalus::internal

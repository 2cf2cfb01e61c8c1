// What run() does beside the main integration when the command line asks
// for it: the --counterfactual analyses (their CSV files and the
// "counterfactuals" entry of the JSON summary), --error-estimate (the
// "error_estimate" entry) and, for the structure-preserving integrators,
// the "energy_behaviour" entry.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/run.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus::internal {

/// Checks the requested times against the run's interval.
/// @throws std::invalid_argument naming the request and the interval.
void ValidateCounterfactuals(const std::vector<CounterfactualRequest>& reqs,
                             const SimulationOptions& options);

/// Observer for the main run: forwards samples to the CSV writer and keeps
/// them when an analysis needs them afterwards.
class RunExtras : public Observer {
 public:
  RunExtras(const Problem& problem, const RunConfig& cfg);

  void set_forward(Observer* o) { forward_ = o; }
  void OnSample(const Sample& s) override;

  /// Runs the analyses after the main run; writes base.counterfactual<i>.csv
  /// files. Returns false when one of them failed.
  bool Finish(const SimulationSummary& main, const std::string& base);

  /// The JSON summary with the analyses' entries added.
  std::string Decorate(const std::string& summary_json) const;
  /// Lines for the human summary (empty when there is nothing to say).
  const std::string& report() const { return report_; }
  /// The first failure, for stderr.
  const std::string& error() const { return error_; }
  /// The signal that interrupted the analyses (SimulationOptions::stop),
  /// or 0: the counterfactuals not finished are then "interrupted".
  int interrupted() const { return interrupted_; }

 private:
  // --error-estimate: EstimateGlobalError after the main run.
  void EstimateError(const SimulationSummary& main, std::ostringstream* rep);

  const Problem& problem_;
  const RunConfig& cfg_;
  Observer* forward_ = nullptr;
  bool keep_ = false;
  std::vector<Sample> samples_;
  nlohmann::json entries_ = nlohmann::json::object();
  std::string report_, error_;
  int interrupted_ = 0;
};

}  // namespace daedalus::internal

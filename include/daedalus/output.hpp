// Writers for run results: a CSV time series and a JSON summary
// (schema: docs/output.md).
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {

/// Column names of the CSV written for `model`: t, coordinates,
/// velocities (v_<name>), lambda_<row>, power_<row>, drift_position,
/// drift_velocity, energy, energy_residual, then the work terms.
std::vector<std::string> CsvColumns(const Model& model);

/// Streams samples to a CSV file, one flushed row per sample, so that a
/// failed run keeps every row it produced.
class CsvWriter : public Observer {
 public:
  /// @throws std::runtime_error when the file cannot be opened.
  CsvWriter(const Model& model, const std::string& path);
  void OnSample(const Sample& s) override;

 private:
  Model model_;
  std::ofstream out_;
};

/// The JSON summary as text.
std::string SummaryJson(const Model& model,
                        const SimulationSummary& summary,
                        const Eigen::VectorXd& params);

}  // namespace daedalus

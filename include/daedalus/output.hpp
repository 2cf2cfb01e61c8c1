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
/// drift_velocity, energy, energy_residual, then the work terms, the
/// quadratures, and for each forward-sensitivity parameter P the columns
/// d<col>/dP of the coordinates, velocities and multipliers.
std::vector<std::string> CsvColumns(
    const Model& model, const std::vector<std::string>& sens_parameters = {});

/// Streams samples to a CSV file, one flushed row per sample, so that a
/// failed run keeps every row it produced.
class CsvWriter : public Observer {
 public:
  /// @throws std::runtime_error when the file cannot be opened.
  CsvWriter(const Model& model,
            const std::string& path,
            const std::vector<std::string>& sens_parameters = {});
  void OnSample(const Sample& s) override;

 private:
  Model model_;
  std::ofstream out_;
  size_t n_sens_ = 0;
};

/// The JSON summary as text.
std::string SummaryJson(const Model& model,
                        const SimulationSummary& summary,
                        const Eigen::VectorXd& params);

}  // namespace daedalus

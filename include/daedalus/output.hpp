// Writers for run results: a CSV time series and a JSON summary
// (schema: docs/output.md).
#pragma once

#include <chrono>
#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {

/// Whether any of the model's events has a reset map (its CSV then has
/// the column work_reset).
bool HasResets(const Model& model);
/// The unilateral rows that declare a ContactLaw (contact.hpp), whose CSV
/// has the columns work_impact and impulse_<row> (docs/contact.md).
std::vector<int> ContactLawRows(const Model& model);

/// Column names of the CSV written for `model`: t, coordinates,
/// velocities (v_<name>), lambda_<row>, the accelerations vdot_<name>,
/// power_<row>, drift_position, drift_velocity, energy, energy_residual,
/// then the work terms (work_reset with reset maps; work_impact and
/// impulse_<row> with contact laws), the
/// quadratures, and for each forward-sensitivity parameter P the columns
/// d<col>/dP of the coordinates, velocities and multipliers.
std::vector<std::string> CsvColumns(
    const Model& model, const std::vector<std::string>& sens_parameters = {});

/// Streams samples to a CSV file, flushed at least every 0.2 s of wall time
/// and when the writer is destroyed, so that a failed run keeps every row
/// it produced and a killed one all but the last 0.2 s.
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
  bool has_resets_ = false;
  std::vector<int> contact_rows_;
  std::string row_;  // reused row buffer
  static constexpr std::chrono::milliseconds kFlushInterval{200};
  std::chrono::steady_clock::time_point last_flush_{};
};

/// Forwards every sample to `next` (may be null) and keeps a one-line
/// progress report on `err` for runs that take longer than a second of wall
/// time: "<name>: t = 3.2 / 10 s (32%), 1.4 s elapsed, ~3 s left",
/// rewritten in place at most five times a second and erased by Finish().
/// `enabled` is false unless `err` is a terminal (see StderrIsTerminal), so
/// that logs and pipes never receive carriage returns.
class ProgressLine : public Observer {
 public:
  /// `clock` returns wall time in seconds (a steady clock by default; tests
  /// pass their own).
  ProgressLine(std::string name,
               double t0,
               double t_end,
               Observer* next,
               std::ostream* err,
               bool enabled,
               std::function<double()> clock = nullptr);
  ~ProgressLine() override;
  void OnSample(const Sample& s) override;
  /// Erases the progress line if one was written (idempotent).
  void Finish();
  /// True when the process's stderr is a terminal (isatty).
  static bool StderrIsTerminal();

 private:
  std::string name_;
  double t0_, t_end_;
  Observer* next_;
  std::ostream* err_;
  bool enabled_;
  std::function<double()> clock_;
  double start_ = 0.0, last_ = -1.0;
  bool written_ = false;
};

/// The JSON summary as text.
std::string SummaryJson(const Model& model,
                        const SimulationSummary& summary,
                        const Eigen::VectorXd& params);

}  // namespace daedalus

// Files a run writes beside its CSV time series, sample by sample
// (docs/output.md, "Files beside the CSV"): a problem lists them in
// Problem::side_outputs, and the runner writes DIR/<name>.<suffix> with
// the same samples, under a temporary name put in place with the CSV.
#pragma once

#include <Eigen/Core>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {

/// One file beside the CSV.
struct SideOutput {
  /// The file name's ending after "<name>.", e.g. "poses.csv": the run
  /// writes DIR/<name>.poses.csv. Not empty, no '/'.
  std::string suffix;
  /// Makes the observer that writes the file at `path` for a run at the
  /// parameters `params` (np). It receives every sample the CSV does and
  /// is destroyed (closing the file) when the run ends.
  /// @throws std::runtime_error when the file cannot be opened.
  std::function<std::unique_ptr<Observer>(const std::string& path,
                                          const Eigen::VectorXd& params)>
      open;
  /// A JSON object (text) describing the file; the summary lists it under
  /// "side_files" with "file" (the file name) added. Empty: `{}`.
  std::string summary_json;
};

/// A CSV table with one row per sample: `t`, then the values that `row`
/// appends for the sample (one per column). Numbers are written as in the
/// main CSV (shortest form that reads back to the same double; `nan`,
/// `inf`), rows are flushed at least every 0.2 s of wall time and when the
/// writer is destroyed.
class TableWriter : public Observer {
 public:
  using RowFn = std::function<void(const Sample&, std::vector<double>*)>;
  /// `columns` excludes `t`. @throws std::runtime_error when the file
  /// cannot be opened.
  TableWriter(const std::string& path,
              const std::vector<std::string>& columns,
              RowFn row);
  ~TableWriter() override;
  void OnSample(const Sample& s) override;

 private:
  std::ofstream out_;
  size_t ncols_;
  RowFn row_fn_;
  std::vector<double> values_;
  std::string line_;
  std::chrono::steady_clock::time_point last_flush_{};
};

/// DIR/<name>.momenta.csv: `t` and `p_<coordinate>` for each velocity, the
/// generalized momenta p = dL/dv at the sample (for T + V models, M v);
/// a coordinate on which L does not depend (cyclic) has a conserved
/// momentum when no force, input or constraint acts on it.
SideOutput MomentaFile(const Model& model);

}  // namespace daedalus

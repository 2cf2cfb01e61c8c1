// Files beside the CSV (include/daedalus/side_outputs.hpp; docs/output.md):
// the table writer, the generalized momenta, and a multibody model's poses
// (include/daedalus/multibody_output.hpp).
#include "daedalus/side_outputs.hpp"

#include <charconv>
#include <memory>
#include <stdexcept>

#include "daedalus/dynamics.hpp"
#include "daedalus/multibody_output.hpp"

namespace daedalus {

TableWriter::TableWriter(const std::string& path,
                         const std::vector<std::string>& columns,
                         RowFn row)
    : out_(path), ncols_(columns.size()), row_fn_(std::move(row)) {
  if (!out_) throw std::runtime_error("cannot open '" + path + "'");
  out_ << "t";
  for (const auto& c : columns) out_ << "," << c;
  out_ << "\n";
  values_.reserve(ncols_);
  last_flush_ = std::chrono::steady_clock::now();
}

TableWriter::~TableWriter() { out_.flush(); }

void TableWriter::OnSample(const Sample& s) {
  values_.clear();
  row_fn_(s, &values_);
  if (values_.size() != ncols_)
    throw std::logic_error("side file row has " +
                           std::to_string(values_.size()) + " values for " +
                           std::to_string(ncols_) + " columns");
  line_.clear();
  char buf[32];
  auto num = [&](double x) {
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    line_.append(buf, r.ptr);
  };
  num(s.t);
  for (double x : values_) {
    line_.push_back(',');
    num(x);
  }
  line_.push_back('\n');
  out_ << line_;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_flush_ >= std::chrono::milliseconds(200)) {
    out_.flush();
    last_flush_ = now;
  }
}

SideOutput MomentaFile(const Model& model) {
  SideOutput so;
  so.suffix = "momenta.csv";
  const Model m = model;
  so.open = [m](const std::string& path, const Eigen::VectorXd& params) {
    std::vector<std::string> cols;
    for (const auto& c : m.velocity_names()) cols.push_back("p_" + c);
    auto ws = std::make_shared<Workspace>(m);
    ws->SetParameters(params);
    return std::make_unique<TableWriter>(
        path, cols, [ws](const Sample& s, std::vector<double>* row) {
          ws->SetState(s.t, s.q, s.v);
          EvaluateAll(ws.get());
          for (Eigen::Index i = 0; i < ws->momentum.size(); ++i)
            row->push_back(ws->momentum[i]);
        });
  };
  so.summary_json =
      R"({"kind": "momenta", "content": "generalized momenta p = dL/dv"})";
  return so;
}

namespace mb {

SideOutput PosesFile(const Kinematics& kin) {
  SideOutput so;
  so.suffix = "poses.csv";
  so.open = [kin](const std::string& path, const Eigen::VectorXd& params) {
    auto previous = std::make_shared<std::vector<double>>();
    return std::make_unique<TableWriter>(
        path, PoseColumns(kin),
        [kin, params, previous](const Sample& s, std::vector<double>* row) {
          AppendPoses(kin, s.q, params, *previous, row);
          *previous = *row;
        });
  };
  so.summary_json = MechanismJson(kin);
  return so;
}

}  // namespace mb
}  // namespace daedalus

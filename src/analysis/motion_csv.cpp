// ReadMotionCsv (include/daedalus/inverse_dynamics.hpp): a motion from the
// CSV a run writes, or any CSV with a `t` column and the coordinates.
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/text_lines.hpp"
#include "daedalus/inverse_dynamics.hpp"
#include "eval/eval_stop.hpp"

namespace daedalus {

namespace {

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '"')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r' ||
                   s[b - 1] == '"'))
    --b;
  return s.substr(a, b - a);
}

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    cells.push_back(Trim(line.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cells;
}

std::string List(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

MotionSamples ReadMotionCsv(const std::string& path, const Model& model) {
  // Any line end, a UTF-8 byte-order mark dropped (a spreadsheet's export
  // gave "missing column t"), UTF-16 and binary files refused.
  const std::vector<std::string> lines =
      internal::ReadTextLines(path, "the motion file");
  size_t next = 0;
  auto next_line = [&](std::string& l) {
    if (next >= lines.size()) return false;
    l = lines[next++];
    return true;
  };
  const std::string src = "'" + path + "'";
  std::string line;
  if (!next_line(line) || Trim(line).empty())
    throw std::invalid_argument(
        src +
        " is empty; a motion CSV starts with a header line naming the "
        "columns t and " +
        List(model.coordinate_names()));
  const std::vector<std::string> header = Split(line);
  std::unordered_map<std::string, size_t> column;
  for (size_t i = 0; i < header.size(); ++i) {
    if (column.count(header[i]))
      throw std::invalid_argument(src + ", line 1: column '" + header[i] +
                                  "' appears twice");
    column[header[i]] = i;
  }

  // Required columns: t and the coordinates; optional: every v_<name>.
  const auto& coords = model.coordinate_names();
  std::vector<std::string> missing;
  if (!column.count("t")) missing.push_back("t");
  for (const auto& c : coords)
    if (!column.count(c)) missing.push_back(c);
  if (!missing.empty())
    throw std::invalid_argument(
        src + ", line 1: missing column" + (missing.size() > 1 ? "s " : " ") +
        List(missing) + "; a motion for model '" + model.name() +
        "' needs t and its coordinates " + List(coords) +
        " (v_<velocity> columns optional; other columns are ignored)");
  // Velocity columns are named after the velocities: the coordinates',
  // except for a quaternion's three (v_<name>.wx|wy|wz), as a run writes.
  const auto& vels = model.velocity_names();
  std::vector<std::string> v_missing, v_present;
  for (const auto& c : vels)
    (column.count("v_" + c) ? v_present : v_missing).push_back("v_" + c);
  if (!v_present.empty() && !v_missing.empty())
    throw std::invalid_argument(
        src + ", line 1: velocity columns " + List(v_present) +
        " are present but " + List(v_missing) +
        " are missing; give every v_<velocity> column or none (then the "
        "velocities are differentiated from the coordinates)");
  const bool has_v = v_missing.empty();

  std::vector<size_t> q_col, v_col;
  for (const auto& c : coords) q_col.push_back(column[c]);
  if (has_v)
    for (const auto& c : vels) v_col.push_back(column["v_" + c]);
  const size_t t_col = column["t"];

  MotionSamples m;
  m.source = path;
  std::vector<std::vector<double>> q_rows, v_rows;
  int line_no = 1;
  while (next_line(line)) {
    ++line_no;
    if ((line_no & 0xfff) == 0) internal::ThrowIfEvalStopped();
    if (Trim(line).empty()) continue;
    const std::vector<std::string> cells = Split(line);
    if (cells.size() != header.size())
      throw std::invalid_argument(src + ", line " + std::to_string(line_no) +
                                  ": " + std::to_string(cells.size()) +
                                  " cells, the header has " +
                                  std::to_string(header.size()) + " columns");
    auto number = [&](size_t col) {
      const std::string& text = cells[col];
      double x = 0.0;
      const auto [end, ec] =
          std::from_chars(text.data(), text.data() + text.size(), x);
      if (text.empty() || ec != std::errc() ||
          end != text.data() + text.size() || !std::isfinite(x))
        throw std::invalid_argument(src + ", line " + std::to_string(line_no) +
                                    ", column '" + header[col] + "': '" + text +
                                    "' is not a finite number");
      return x;
    };
    m.t.push_back(number(t_col));
    m.lines.push_back(line_no);
    std::vector<double> q, v;
    for (size_t c : q_col) q.push_back(number(c));
    for (size_t c : v_col) v.push_back(number(c));
    q_rows.push_back(std::move(q));
    if (has_v) v_rows.push_back(std::move(v));
  }
  const Eigen::Index n = static_cast<Eigen::Index>(m.t.size());
  const Eigen::Index nq = static_cast<Eigen::Index>(coords.size());
  const Eigen::Index nv = static_cast<Eigen::Index>(vels.size());
  m.q.resize(n, nq);
  if (has_v) m.v.resize(n, nv);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < nq; ++j)
      m.q(i, j) = q_rows[static_cast<size_t>(i)][static_cast<size_t>(j)];
    for (Eigen::Index j = 0; has_v && j < nv; ++j)
      m.v(i, j) = v_rows[static_cast<size_t>(i)][static_cast<size_t>(j)];
  }
  return m;
}

}  // namespace daedalus

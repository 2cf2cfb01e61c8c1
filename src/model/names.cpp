// Names a model may declare (names.hpp).
#include "model/names.hpp"

#include <stdexcept>

namespace daedalus::internal {

std::string ShownName(const std::string& s) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

size_t FirstNonUtf8(const std::string& s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    int len = 0;
    unsigned cp = 0, min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      len = 2, cp = c & 0x1fu, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3, cp = c & 0x0fu, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4, cp = c & 0x07u, min = 0x10000;
    } else {
      return i;
    }
    if (i + static_cast<size_t>(len) > n) return i;
    for (int k = 1; k < len; ++k) {
      const auto d = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      if ((d & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (d & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += static_cast<size_t>(len);
  }
  return std::string::npos;
}

std::string NameFault(const std::string& name) {
  if (name.empty()) return "nothing (an empty name)";
  // A Latin-1 file's accented name: the JSON writer threw on it and the
  // process aborted (found by tests/robustness/fuzz_edges.py).
  if (FirstNonUtf8(name) != std::string::npos)
    return "bytes that are not UTF-8 text (a Latin-1 or other 8-bit "
           "encoding: save the file as UTF-8)";
  for (unsigned char c : name) {
    if (c == ',') return "a comma (it would split a CSV column)";
    if (c == '"') return "a double quote (it would break CSV and JSON files)";
    if (c == '=') return "an equals sign (--param and --q0 take NAME=VALUE)";
    if (c == '/' || c == '\\')
      return "a slash (names become parts of file names)";
    if (c < 0x20 || c == 0x7f)
      return "a control character (a newline or tab would split a line)";
  }
  return "";
}

void CheckName(const std::string& name,
               const std::string& what,
               const std::string& where) {
  const std::string fault = NameFault(name);
  if (fault.empty()) return;
  if (name.empty())
    throw std::invalid_argument(where + ": a " + what +
                                " has an empty name; give it a name");
  throw std::invalid_argument(where + ": the " + what + " name \"" +
                              ShownName(name) + "\" holds " + fault +
                              "; rename it with letters, digits, '_', '-', "
                              "'.', ':' or brackets");
}

void CheckModelNames(const ModelData& d) {
  const std::string where = "model '" + ShownName(d.name) + "'";
  CheckName(d.name, "model", "ModelBuilder");
  if (d.name == "." || d.name == "..")
    throw std::invalid_argument(
        "ModelBuilder: the model name \"" + d.name +
        "\" is a folder's name; the files of a run are named after the "
        "model (<output-dir>/<name>.csv): give it a name with a letter");
  for (const auto& n : d.coordinates) CheckName(n, "coordinate", where);
  for (const auto& n : d.velocities) CheckName(n, "velocity", where);
  for (const auto& n : d.parameter_names) CheckName(n, "parameter", where);
  for (const auto& in : d.inputs) CheckName(in.name, "input channel", where);
  for (const auto& c : d.constraints) CheckName(c.name, "constraint", where);
  for (const auto& q : d.quadratures) CheckName(q.first, "quadrature", where);
  for (const auto& e : d.events) CheckName(e.name, "event", where);
  for (const auto& f : d.functionals) CheckName(f.name, "functional", where);
  for (const auto& c : d.friction_cones)
    CheckName(c.name, "friction cone", where);
}

}  // namespace daedalus::internal

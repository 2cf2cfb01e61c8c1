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

std::string NameFault(const std::string& name) {
  if (name.empty()) return "nothing (an empty name)";
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

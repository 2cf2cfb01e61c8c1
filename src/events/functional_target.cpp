#include "events/functional_target.hpp"

#include <stdexcept>

#include "daedalus/sensitivity.hpp"

namespace daedalus::internal {

std::string FunctionalTarget::Where(const Model& m) const {
  if (!at_event()) return "end";
  return m.data().events[static_cast<size_t>(event)].name + "#" +
         std::to_string(occurrence);
}

FunctionalTarget ParseFunctionalTarget(const Model& m,
                                       const std::string& spec) {
  const ModelData& d = m.data();
  FunctionalTarget out;
  const size_t at = spec.find('@');
  const std::string name = spec.substr(0, at);
  for (size_t i = 0; i < d.functionals.size(); ++i)
    if (d.functionals[i].name == name) out.functional = static_cast<int>(i);
  if (out.functional < 0) {
    std::string valid;
    for (const auto& f : d.functionals)
      valid += (valid.empty() ? "" : ", ") + f.name;
    throw std::invalid_argument(
        "functional '" + spec + "': model '" + m.name() +
        "' declares no functional '" + name +
        "'; declared: " + (valid.empty() ? "(none)" : valid));
  }
  if (at == std::string::npos) return out;
  std::string event = spec.substr(at + 1);
  const size_t hash = event.find('#');
  out.occurrence = 1;
  if (hash != std::string::npos) {
    const std::string k = event.substr(hash + 1);
    event.resize(hash);
    if (k.empty() || k.size() > 9 ||
        k.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(k) < 1)
      throw std::invalid_argument(
          "functional '" + spec +
          "': the occurrence after '#' must be a "
          "whole number from 1 (NAME@EVENT#K: the K-th occurrence), got '" +
          k + "'");
    out.occurrence = std::stoi(k);
  }
  for (size_t i = 0; i < d.events.size(); ++i)
    if (d.events[i].name == event) out.event = static_cast<int>(i);
  if (out.event < 0) {
    std::string valid;
    for (const auto& e : d.events)
      valid += (valid.empty() ? "" : ", ") + e.name;
    throw std::invalid_argument(
        "functional '" + spec + "': model '" + m.name() +
        "' declares no event '" + event +
        "'; declared events: " + (valid.empty() ? "(none)" : valid) +
        " (write NAME@EVENT or NAME@EVENT#K)");
  }
  return out;
}

}  // namespace daedalus::internal

namespace daedalus {

void CheckFunctionalSpec(const Model& model, const std::string& spec) {
  internal::ParseFunctionalTarget(model, spec);
}

}  // namespace daedalus

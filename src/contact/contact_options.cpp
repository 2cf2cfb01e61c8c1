// ContactMode's and ImpactLaw's names (include/daedalus/contact.hpp).
#include <stdexcept>
#include <string>

#include "daedalus/contact.hpp"

namespace daedalus {

const char* ToString(ContactMode m) {
  switch (m) {
    case ContactMode::kAuto:
      return "auto";
    case ContactMode::kMonitor:
      return "monitor";
    case ContactMode::kEventDriven:
      return "event-driven";
  }
  return "?";
}

const char* ToString(ImpactLaw law) {
  switch (law) {
    case ImpactLaw::kNewton:
      return "newton";
    case ImpactLaw::kPoisson:
      return "poisson";
  }
  return "?";
}

ContactMode ContactModeFromString(const std::string& s) {
  for (ContactMode m :
       {ContactMode::kAuto, ContactMode::kMonitor, ContactMode::kEventDriven})
    if (s == ToString(m)) return m;
  throw std::invalid_argument("unknown contact mode '" + s +
                              "'; valid: auto, monitor, event-driven");
}

}  // namespace daedalus

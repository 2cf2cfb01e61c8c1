// The contact stage's switches into the run's report (contact_stage.hpp).
#include <algorithm>
#include <string>
#include <vector>

#include "contact/contact_stage.hpp"

namespace daedalus::internal {

void BookContactEvent(const ContactEvent& ev,
                      const std::vector<bool>& closed,
                      SimulationSummary* sum) {
  ContactReport& rep = sum->contact;
  if (ev.kind == "impact") ++rep.impacts;
  if (ev.kind == "release") ++rep.releases;
  if (ev.kind == "close") ++rep.closures;
  rep.impact_work += ev.energy_change;
  const bool all_closed =
      std::all_of(closed.begin(), closed.end(), [](bool b) { return b; });
  if (!all_closed) {
    rep.t_rest = -1.0;
  } else if (rep.t_rest < 0.0) {
    rep.t_rest = ev.t;
  }
  rep.events.push_back(ev);
  if (ev.kind == "start") return;
  EventRecord r;
  r.name = "contact_" + ev.kind;
  r.t = ev.t;
  r.direction = -1.0;
  r.reset = true;
  r.energy_change = ev.energy_change;
  r.reset_correction_position = ev.correction_position;
  r.reset_correction_velocity = ev.correction_velocity;
  sum->events.push_back(r);
}

}  // namespace daedalus::internal

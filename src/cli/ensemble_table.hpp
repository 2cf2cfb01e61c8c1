// One member of an ensemble run, and the gathered table of all members
// (docs/ensembles.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daedalus/run.hpp"

namespace daedalus::internal {

/// Runs one member. `task` (JSON) holds its index "member", "name",
/// "inputs" ([[column, text], ...]), "dir" (relative to the ensemble's
/// folder) and "argv" (its whole command line). Returns its result row as
/// one line of JSON: the task's fields, "status" (ok, failed,
/// interrupted), "error", "wall_time" [s], "rank", and the scalars of its
/// summary (t_reached, samples, final q and v, drift, energy residual,
/// quadratures, sensitivities). Never throws: a member that cannot run is
/// a failed row saying why.
std::string RunMemberTask(const Problem& problem,
                          const std::string& program,
                          const std::string& task,
                          int rank);

/// The row of a member that did not run (status "pending").
nlohmann::ordered_json PendingRow(const std::string& task);

/// Writes <base>.ensemble.csv (one row per member, in member order) and
/// <base>.ensemble.json (`meta` plus the rows), each under a temporary
/// name renamed into place. Returns "" or what failed.
std::string WriteEnsembleTables(const Model& model,
                                const nlohmann::ordered_json& meta,
                                const std::vector<nlohmann::ordered_json>& rows,
                                const std::string& base);

}  // namespace daedalus::internal

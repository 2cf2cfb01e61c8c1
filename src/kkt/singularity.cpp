#include "kkt/singularity.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "daedalus/kkt.hpp"

namespace daedalus::internal {

std::string SingularMassDetail(const Model& model,
                               const Eigen::MatrixXd& M,
                               double tol) {
  std::ostringstream os;
  os.precision(6);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(M);
  if (M.allFinite() && es.info() == Eigen::Success) {
    const Eigen::VectorXd& ev = es.eigenvalues();
    os << " (smallest eigenvalue " << ev[0] << ", largest "
       << ev[ev.size() - 1];
    if (tol > 0.0) os << ", threshold " << tol << " relative";
    os << "); the null direction involves coordinates:";
    const Eigen::VectorXd dir = es.eigenvectors().col(0);
    for (Eigen::Index i = 0; i < dir.size(); ++i)
      if (std::abs(dir[i]) > 0.1) os << " " << model.velocity_names()[i];
  } else {
    os << " (it has non-finite entries)";
  }
  os << ". Check the kinetic energy: every coordinate needs inertia "
        "(massless coordinates need a constraint or a reduced model), and "
        "masses and inertias must be positive";
  return os.str();
}

std::string RankDeficiencyDetail(const Model& model,
                                 const Eigen::MatrixXd& J,
                                 const std::vector<int>& rows,
                                 double tol) {
  auto name = [&](Eigen::Index i) {
    return model.RowName(rows.empty() ? static_cast<int>(i)
                                      : rows[static_cast<size_t>(i)]);
  };
  const Eigen::VectorXd norms = J.rowwise().norm();
  const double largest = norms.size() ? norms.maxCoeff() : 0.0;
  const double floor = tol * std::max(1.0, largest);
  std::vector<Eigen::Index> vanishing;
  std::vector<Eigen::Index> keep;
  for (Eigen::Index i = 0; i < J.rows(); ++i)
    (norms[i] <= floor || !std::isfinite(norms[i]) ? vanishing : keep)
        .push_back(i);
  std::ostringstream os;
  os.precision(6);
  if (!vanishing.empty()) {
    os << "; the gradient of constraint row";
    if (vanishing.size() > 1) os << "s";
    for (Eigen::Index i : vanishing)
      os << " '" << name(i) << "' (norm " << norms[i] << ")";
    os << " vanishes here: a singular configuration of "
       << (vanishing.size() > 1 ? "these constraints" : "that constraint")
       << " (a distance constraint at zero length, a start at the origin of "
          "a radius), not a dependence between constraints. Start the "
          "mechanism away "
          "from it, check the parameters that set its geometry, or write the "
          "constraint so that its gradient does not vanish on the motion";
  }
  // Among the rows with a gradient, those that depend on the others.
  Eigen::MatrixXd rest(static_cast<Eigen::Index>(keep.size()), J.cols());
  for (size_t k = 0; k < keep.size(); ++k)
    rest.row(static_cast<Eigen::Index>(k)) = J.row(keep[k]);
  const std::vector<int> dep = DependentRows(rest, tol);
  if (!dep.empty()) {
    os << (vanishing.empty() ? "; " : "; also, ")
       << "dependent constraint rows:";
    for (int k : dep) os << " '" << name(keep[static_cast<size_t>(k)]) << "'";
    os << " (each a combination of the other rows: redundant or "
          "contradictory constraints, or rows that become parallel at a "
          "singular configuration such as a four-bar at full extension). "
          "Remove redundant constraints, or move the mechanism away from "
          "the singular configuration";
  }
  if (vanishing.empty() && dep.empty()) {
    os << "; no row is a combination of the others, and the smallest "
          "gradient norm is "
       << (norms.size() ? norms.minCoeff() : 0.0)
       << ": the rows are nearly dependent in the mass metric (J M^-1 J' "
          "is ill-conditioned); check the scaling of the constraints";
  }
  return os.str();
}

}  // namespace daedalus::internal

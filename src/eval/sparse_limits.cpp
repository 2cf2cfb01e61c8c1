// What the sparse workspace refuses (sparse_limits.hpp).
#include "eval/sparse_limits.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace daedalus::internal {

namespace {

std::string SparseBytes(double b) {
  std::ostringstream os;
  os.precision(3);
  if (b >= 1e9)
    os << b / 1e9 << " GB";
  else
    os << b / 1e6 << " MB";
  return os.str();
}

}  // namespace

SparseMemoryEstimate EstimateSparseWorkspace(const Model& model) {
  const ModelData& d = model.data();
  const int nv = model.nv();
  SparseMemoryEstimate e;
  // Per entry of a term's k x k block: the triplet (16 bytes) in a vector
  // that may hold twice its size while it grows, the slot into M's values
  // (4) and, for a constant body mass, its copy (8).
  double bytes = 0.0;
  auto add = [&](double k, double per_entry) {
    e.entries += k * k;
    bytes += k * k * per_entry;
  };
  if (d.kinetic_terms.empty()) {
    add(nv, 36.0);
    e.terms = 1;
    e.widest = nv;
  } else {
    for (const auto& kt : d.kinetic_terms) {
      const int k = static_cast<int>(kt.coords.size());
      add(k, kt.constant_mass ? 44.0 : 36.0);
      ++e.terms;
      e.widest = std::max(e.widest, k);
    }
  }
  // M's own storage: a value and an index per distinct entry.
  bytes += 12.0 * std::min(e.entries, static_cast<double>(nv) * nv);
  // J: each constraint row over its coordinates (or all of them).
  for (const auto& c : d.constraints) {
    const double k = c.coords.empty() ? static_cast<double>(nv)
                                      : static_cast<double>(c.coords.size());
    e.entries += c.rows * k;
    bytes += c.rows * k * 48.0;
  }
  e.bytes = bytes;
  return e;
}

double AvailableMemoryBytes() {
  double avail = std::numeric_limits<double>::infinity();
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb = 0.0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") {
      avail = kb * 1024.0;
      break;
    }
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit rl {};
    if (getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
      avail = std::min(avail, static_cast<double>(rl.rlim_cur));
  }
  return avail;
}

std::string SparseMemoryRefusal(const Model& model,
                                const SparseMemoryEstimate& e,
                                double available) {
  if (!(e.bytes > 0.5 * available)) return "";
  std::ostringstream os;
  os.precision(3);
  os << "model '" << model.name()
     << "': the sparse evaluator (--kkt sparse-lu, sparse-cholesky or qr, "
        "or the KKT method auto choosing it) would need about "
     << SparseBytes(e.bytes) << " for the pattern of the mass matrix ("
     << e.terms << " kinetic-energy term" << (e.terms == 1 ? "" : "s")
     << " over up to " << e.widest << " of the " << model.nv()
     << " velocities: " << e.entries << " entries), more than half of the "
     << SparseBytes(available)
     << " this process can use; build the model with the recursive form "
        "of the dynamics (--dynamics recursive where the executable has "
        "it: urdf, mjcf, chain_reduced; mb::DynamicsForm::kRecursive in "
        "C++), which never stores the mass matrix entry by entry, and keep "
        "a dense --kkt (dense, schur)";
  return os.str();
}

void CheckSparseWorkspaceMemory(const Model& model) {
  const SparseMemoryEstimate e = EstimateSparseWorkspace(model);
  // Below 100 MB nothing is read.
  if (e.bytes < 1e8) return;
  const std::string why = SparseMemoryRefusal(model, e, AvailableMemoryBytes());
  if (!why.empty()) throw std::invalid_argument(why);
}

double DenseEnergySweepUnits(const Model& model) {
  const ModelData& d = model.data();
  if (d.inertial_dynamics || d.kinetic_terms.empty()) return 0.0;
  double width = 0.0;
  for (const auto& kt : d.kinetic_terms)
    if (!kt.constant_mass) width += static_cast<double>(kt.coords.size());
  return static_cast<double>(model.nv()) * width;
}

void CheckDenseEnergyCost(const Model& model) {
  const double units = DenseEnergySweepUnits(model);
  if (!(units > kDenseEnergyMaxUnits)) return;
  std::ostringstream os;
  os.precision(3);
  os << "model '" << model.name()
     << "': the dense evaluator (--kkt dense, full-lu or schur, or the KKT "
        "method auto, which takes it for a model with contacts or joint "
        "limits) would evaluate M and h of this energy-form model by about "
     << model.nv() << " second-order sweeps over its "
     << model.data().kinetic_terms.size() << " kinetic-energy terms: " << units
     << " term evaluations per evaluation of the dynamics, about "
     << units * kDenseEnergySecondsPerUnit
     << " s each (at 1 us per term evaluation, measured on a 50-link chain), "
        "and a run takes thousands "
        "of them; build the model with the recursive form of the dynamics "
        "(--dynamics recursive where the executable has it: urdf, mjcf, "
        "chain_reduced; mb::DynamicsForm::kRecursive in C++)";
  throw std::invalid_argument(os.str());
}

double DenseKktFlops(const Model& model) {
  const double nv = model.nv(), nc = model.nc();
  return nv * nv * nv / 3.0 + nv * nv * nc + nv * nc * nc + nc * nc * nc / 3.0;
}

void CheckDenseKktCost(const Model& model, bool joint_limits, bool contacts) {
  // Without constraints there is no KKT system (and a recursive model
  // takes the O(nv) forward route).
  if (model.nc() == 0) return;
  const double flops = DenseKktFlops(model);
  if (!(flops > kDenseKktMaxFlops)) return;
  std::ostringstream os;
  os.precision(3);
  os << "model '" << model.name() << "': the dense KKT solve ("
     << (contacts ? "which event-driven contacts and joint limits need, or "
                  : "")
     << "--kkt dense, full-lu or schur) factors the " << model.nv() << " x "
     << model.nv() << " mass matrix and the " << model.nc() << " x "
     << model.nc() << " constraint matrix at every evaluation of the "
     << "dynamics: about " << flops << " floating-point operations, "
     << flops / 5.7e9
     << " s each at the 5.7 GFlop/s measured with Eigen, and a run takes "
        "hundreds to thousands of evaluations; ";
  if (joint_limits)
    os << "run without the joint limits (--no-joint-limits; "
          "WithoutJointLimits in C++), which leaves the recursive or sparse "
          "evaluator, or ";
  if (contacts)
    os << "keep the unilateral rows as monitored equalities (--contact "
          "monitor), or ";
  os << "use --kkt auto on a model without contacts (the recursive O(n) "
        "route or the sparse solvers)";
  throw std::invalid_argument(os.str());
}

void CheckConstantMassBlock(const Model& model,
                            const Eigen::MatrixXd& m,
                            Eigen::Index k,
                            const Eigen::VectorXd& p) {
  if (m.rows() != k || m.cols() != k)
    throw std::invalid_argument(
        "model '" + model.name() + "': ConstantBodyMass block is " +
        std::to_string(m.rows()) + " x " + std::to_string(m.cols()) +
        ", expected " + std::to_string(k) + " x " + std::to_string(k) +
        " for its Touches coordinates");
  if (m.allFinite()) return;
  std::ostringstream os;
  os << "model '" << model.name() << "': a body's mass block (ConstantBodyMass"
     << " over " << k << " coordinates) is not finite at the parameters (";
  for (Eigen::Index i = 0; i < p.size(); ++i)
    os << (i ? ", " : "") << model.parameter_names()[static_cast<size_t>(i)]
       << "=" << p[i];
  os << "): a parameter so large that a mass or inertia overflows double "
        "precision; rescale the problem (other units)";
  throw std::invalid_argument(os.str());
}

}  // namespace daedalus::internal

// Names of the sensitivity, linear-solver and Jacobian options, and the
// resolution of sensitivity parameter names against a model.
#include "daedalus/sensitivity.hpp"

#include <stdexcept>
#include <string>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {

const char* ToString(SensMethod m) {
  switch (m) {
    case SensMethod::kNone:
      return "none";
    case SensMethod::kForward:
      return "forward";
    case SensMethod::kAdjoint:
      return "adjoint";
  }
  return "?";
}

SensMethod SensMethodFromString(const std::string& s) {
  if (s == "none") return SensMethod::kNone;
  if (s == "forward") return SensMethod::kForward;
  if (s == "adjoint") return SensMethod::kAdjoint;
  throw std::invalid_argument("unknown sensitivity method '" + s +
                              "'; valid: forward, adjoint, none");
}

const char* ToString(SensCorrector c) {
  switch (c) {
    case SensCorrector::kAuto:
      return "auto";
    case SensCorrector::kSimultaneous:
      return "simultaneous";
    case SensCorrector::kStaggered:
      return "staggered";
  }
  return "?";
}

SensCorrector SensCorrectorFromString(const std::string& s) {
  if (s == "auto") return SensCorrector::kAuto;
  if (s == "simultaneous") return SensCorrector::kSimultaneous;
  if (s == "staggered") return SensCorrector::kStaggered;
  throw std::invalid_argument("unknown sensitivity corrector '" + s +
                              "'; valid: auto, simultaneous, staggered");
}

const char* ToString(LinearSolver s) {
  return s == LinearSolver::kKlu ? "klu" : "dense";
}

LinearSolver LinearSolverFromString(const std::string& s) {
  if (s == "dense") return LinearSolver::kDense;
  if (s == "klu") return LinearSolver::kKlu;
  throw std::invalid_argument("unknown linear solver '" + s +
                              "'; valid: dense, klu");
}

const char* ToString(JacobianMethod j) {
  return j == JacobianMethod::kDq ? "dq" : "ad";
}

JacobianMethod JacobianMethodFromString(const std::string& s) {
  if (s == "ad") return JacobianMethod::kAd;
  if (s == "dq") return JacobianMethod::kDq;
  throw std::invalid_argument("unknown Jacobian method '" + s +
                              "'; valid: ad (exact, automatic "
                              "differentiation), dq (difference quotients)");
}

namespace {

// Index inside "q0[...]" (a coordinate) or "v0[...]" (a velocity): a
// number, or a name. The velocity names are the coordinate names except on
// quaternions (ModelBuilder::Quaternion: four coordinates name.w .. name.z,
// three velocities name.wx .. name.wz).
int CoordinateIndex(const Model& model,
                    const std::string& full,
                    const std::string& inner,
                    bool velocity) {
  const auto& names =
      velocity ? model.velocity_names() : model.coordinate_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == inner) return static_cast<int>(i);
  if (!inner.empty() && inner.size() < 9 &&
      inner.find_first_not_of("0123456789") == std::string::npos) {
    const int i = std::stoi(inner);
    if (i < static_cast<int>(names.size())) return i;
  }
  std::string valid;
  for (size_t i = 0; i < names.size(); ++i)
    valid += (i ? ", " : "") + std::to_string(i) + " or " + names[i];
  throw std::invalid_argument("sensitivity parameter '" + full + "': no " +
                              (velocity ? "velocity" : "coordinate") + " '" +
                              inner + "' in model '" + model.name() +
                              "'; valid indices: " + valid);
}

}  // namespace

std::vector<SensParameter> ResolveSensParameters(
    const Model& model, const std::vector<std::string>& names) {
  std::vector<SensParameter> out;
  std::vector<std::string> list = names;
  if (list.empty()) list = model.parameter_names();
  for (const std::string& n : list) {
    SensParameter p;
    p.name = n;
    const bool q0 = n.rfind("q0[", 0) == 0, v0 = n.rfind("v0[", 0) == 0;
    if ((q0 || v0) && n.back() == ']') {
      p.kind =
          q0 ? SensParameter::Kind::kInitialQ : SensParameter::Kind::kInitialV;
      p.index = CoordinateIndex(model, n, n.substr(3, n.size() - 4), v0);
    } else {
      const auto& pn = model.parameter_names();
      int found = -1;
      for (size_t i = 0; i < pn.size(); ++i)
        if (pn[i] == n) found = static_cast<int>(i);
      if (found < 0) {
        std::string valid;
        for (size_t i = 0; i < pn.size(); ++i) valid += (i ? ", " : "") + pn[i];
        throw std::invalid_argument(
            "unknown sensitivity parameter '" + n + "' for model '" +
            model.name() + "'; valid: " + (valid.empty() ? "(none)" : valid) +
            ", or an initial condition q0[i] / v0[i]");
      }
      p.index = found;
    }
    for (const auto& e : out)
      if (e.name == p.name)
        throw std::invalid_argument("sensitivity parameter '" + n +
                                    "' is listed twice");
    out.push_back(p);
  }
  if (out.empty())
    throw std::invalid_argument("model '" + model.name() +
                                "' has no parameters; name initial "
                                "conditions q0[i] / v0[i] for sensitivities");
  return out;
}

}  // namespace daedalus

namespace daedalus::internal {

Eigen::VectorXd ParameterDirection(const Model& model,
                                   const SensParameter& sp) {
  Eigen::VectorXd dp = Eigen::VectorXd::Zero(model.num_parameters());
  if (sp.kind == SensParameter::Kind::kModel) dp[sp.index] = 1.0;
  return dp;
}

void StartForwardResult(const Model& model,
                        const std::vector<SensParameter>& sens,
                        SensitivityResult* sr) {
  sr->method = SensMethod::kForward;
  for (const auto& p : sens) sr->parameters.push_back(p.name);
  for (const auto& n : model.coordinate_names()) sr->components.push_back(n);
  for (const auto& n : model.velocity_names())
    sr->components.push_back("v_" + n);
  for (int i = 0; i < model.nc(); ++i)
    sr->components.push_back("lambda_" + model.RowName(i));
}

std::string DqParameters(const std::vector<SensParameter>& sens,
                         const Eigen::VectorXd& p,
                         std::vector<int>* plist,
                         Eigen::VectorXd* pbar) {
  for (const auto& sp : sens) {
    if (sp.kind != SensParameter::Kind::kModel)
      return "sensitivity parameter '" + sp.name +
             "': difference quotients (--sens-dq) need model parameters; "
             "initial conditions use the exact (default) sensitivity "
             "equations";
    plist->push_back(sp.index);
  }
  *pbar = p.cwiseAbs();
  for (Eigen::Index i = 0; i < pbar->size(); ++i)
    if ((*pbar)[i] == 0.0) (*pbar)[i] = 1.0;
  return "";
}

}  // namespace daedalus::internal

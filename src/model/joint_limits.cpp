// WithoutJointLimits (model.hpp): the model a run with --no-joint-limits
// integrates. The joint limits of a multibody description are unilateral
// constraints with a ContactLaw that names their joint (mb::Multibody::
// AddTo, docs/contact.md "Joint limits"); removing them is a copy of the
// description without those constraints, every function shared.
#include <algorithm>
#include <memory>

#include "daedalus/model.hpp"

namespace daedalus {

namespace {

bool IsJointLimit(const internal::ConstraintDecl& c) {
  return c.unilateral && c.law && !c.law->joint.empty();
}

}  // namespace

int NumJointLimitRows(const Model& model) {
  int n = 0;
  for (const auto& c : model.constraints())
    if (IsJointLimit(c)) n += c.rows;
  return n;
}

Model WithoutJointLimits(const Model& model) {
  if (NumJointLimitRows(model) == 0) return model;
  // A copy of the description (its compiled evaluator starts empty:
  // CompiledCache) without the limits' constraints; the others keep their
  // order, and their first rows and the friction cones' rows are counted
  // again as Build() counts them.
  auto d = std::make_shared<internal::ModelData>(model.data());
  std::vector<int> new_row(static_cast<size_t>(model.nc()), -1);
  std::vector<internal::ConstraintDecl> kept;
  d->constraint_rows.clear();
  d->nc = 0;
  for (size_t ci = 0; ci < model.data().constraints.size(); ++ci) {
    const internal::ConstraintDecl& c = model.data().constraints[ci];
    if (IsJointLimit(c)) continue;
    for (int r = 0; r < c.rows; ++r)
      new_row[static_cast<size_t>(model.constraint_row(static_cast<int>(ci)) +
                                  r)] = d->nc + r;
    d->constraint_rows.push_back(d->nc);
    d->nc += c.rows;
    kept.push_back(c);
  }
  d->constraints = std::move(kept);
  d->unilaterals.erase(
      std::remove_if(
          d->unilaterals.begin(), d->unilaterals.end(),
          [](const auto& u) { return u.second && !u.second->joint.empty(); }),
      d->unilaterals.end());
  // A friction cone's normal is a one-row gap declared by the user; the
  // limits are never part of one, so its rows only move.
  for (auto& cone : d->friction_cones) {
    cone.normal_row = new_row[static_cast<size_t>(cone.normal_row)];
    for (int& r : cone.tangential_rows) r = new_row[static_cast<size_t>(r)];
  }
  Model out;
  out.data_ = std::move(d);
  return out;
}

}  // namespace daedalus

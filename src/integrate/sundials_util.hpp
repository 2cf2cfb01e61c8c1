// RAII owners for SUNDIALS handles, the one checking macro, and the only
// place where Eigen views over N_Vector data are made.
#pragma once

#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>

#include <Eigen/Core>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "integrate/serial_ops.hpp"

namespace daedalus::internal {

struct ContextDeleter {
  void operator()(SUNContext c) const { SUNContext_Free(&c); }
};
using ContextPtr =
    std::unique_ptr<std::remove_pointer_t<SUNContext>, ContextDeleter>;

struct VectorDeleter {
  void operator()(N_Vector v) const { N_VDestroy(v); }
};
using VectorPtr =
    std::unique_ptr<std::remove_pointer_t<N_Vector>, VectorDeleter>;

struct MatrixDeleter {
  void operator()(SUNMatrix m) const { SUNMatDestroy(m); }
};
using MatrixPtr =
    std::unique_ptr<std::remove_pointer_t<SUNMatrix>, MatrixDeleter>;

struct LinSolDeleter {
  void operator()(SUNLinearSolver s) const { SUNLinSolFree(s); }
};
using LinSolPtr =
    std::unique_ptr<std::remove_pointer_t<SUNLinearSolver>, LinSolDeleter>;

inline ContextPtr MakeContext() {
  SUNContext ctx = nullptr;
  if (SUNContext_Create(nullptr, &ctx) != 0 || ctx == nullptr)
    throw std::runtime_error("SUNContext_Create failed");
  return ContextPtr(ctx);
}

inline VectorPtr MakeVector(long n, SUNContext ctx) {
  N_Vector v = N_VNew_Serial(n, ctx);
  if (v == nullptr) throw std::runtime_error("N_VNew_Serial failed");
  UseFastVectorOps(v);  // Debian's SUNDIALS is unoptimized (serial_ops.hpp)
  N_VConst(0.0, v);
  return VectorPtr(v);
}

/// An array of N_Vectors (sensitivities), destroyed together.
class VectorArrayPtr {
 public:
  VectorArrayPtr() = default;
  VectorArrayPtr(N_Vector* v, int n) : v_(v), n_(n) {}
  VectorArrayPtr(VectorArrayPtr&& o) noexcept : v_(o.v_), n_(o.n_) {
    o.v_ = nullptr;
  }
  VectorArrayPtr& operator=(VectorArrayPtr&& o) noexcept {
    std::swap(v_, o.v_);
    std::swap(n_, o.n_);
    return *this;
  }
  VectorArrayPtr(const VectorArrayPtr&) = delete;
  VectorArrayPtr& operator=(const VectorArrayPtr&) = delete;
  ~VectorArrayPtr() {
    if (v_) N_VDestroyVectorArray(v_, n_);
  }
  N_Vector* get() const { return v_; }

 private:
  N_Vector* v_ = nullptr;
  int n_ = 0;
};

inline VectorArrayPtr MakeVectorArray(int n, N_Vector like) {
  N_Vector* v = N_VCloneVectorArray(n, like);
  if (v == nullptr) throw std::runtime_error("N_VCloneVectorArray failed");
  for (int i = 0; i < n; ++i) N_VConst(0.0, v[i]);
  return VectorArrayPtr(v, n);
}

using VecMap = Eigen::Map<Eigen::VectorXd>;
using ConstVecMap = Eigen::Map<const Eigen::VectorXd>;

inline VecMap View(N_Vector v) {
  return VecMap(N_VGetArrayPointer(v), N_VGetLength_Serial(v));
}
inline ConstVecMap ConstView(N_Vector v) {
  return ConstVecMap(N_VGetArrayPointer(v), N_VGetLength_Serial(v));
}

/// Throws std::runtime_error naming the SUNDIALS call and its flag.
#define DAEDALUS_SUNDIALS_CHECK(call)                                      \
  do {                                                                     \
    const int daedalus_flag_ = (call);                                     \
    if (daedalus_flag_ < 0) {                                              \
      throw std::runtime_error(std::string(#call) + " failed with flag " + \
                               std::to_string(daedalus_flag_));            \
    }                                                                      \
  } while (0)

}  // namespace daedalus::internal

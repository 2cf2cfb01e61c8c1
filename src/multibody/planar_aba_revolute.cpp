// The planar ABA specialized to revolute joints about +-z (chains and trees
// of pendulum links, chain_reduced's chain), as Pinocchio and RBDL
// specialize the ABA per joint type. Featherstone, Rigid Body Dynamics
// Algorithms (Springer 2008), Table 7.1, in planar spatial vectors
// (section 2.15: motions (w_z, v_x, v_y), forces (n_z, f_x, f_y)), with
// two choices that make every step a few scalar recurrences:
//
// - Each link's quantities are expressed at its joint point with the
//   world's axes (not the link's). The transform between a parent's and a
//   child's frame is then a pure translation, X = [1 0; p 1] with
//   p = e_z x r (r: the child's joint from the parent's, world axes):
//   no rotation of articulated inertias or forces from link to link; only
//   each link's own first moment h = m c is rotated, once.
// - S = sigma e_1 (sigma = +-1, the axis' sign) in every such frame, so
//   U = sigma IA e_1, D = IA_00, and IA - U U'/D keeps only its 2 x 2
//   block k = K - b b'/A of the articulated inertia IA = [A b'; b K].
//   The parent gets X' [0 0; 0 k] X = [p'k p, (k p)'; k p, k] and the
//   force X' f = (f_0 + p . f_xy, f_xy), whose moment f_0 = sigma tau is the
//   joint torque.
//
// p'k p and k p are written as p'K p - (p.b)^2 / A and K p - b (p.b) / A,
// so that on a chain the link-to-link dependency through A is one fused
// multiply-add after the division (the passes are latency-bound).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "multibody/planar_aba.hpp"

// x86-64 builds target the baseline ISA (SSE2, no FMA). The double
// instantiation is compiled a second time for AVX2 + FMA and chosen at run
// time (__builtin_cpu_supports), so that the build stays portable: the
// sine/cosine pass then takes four angles per instruction and the passes'
// multiply-adds fuse (GCC contracts a * b + c by default in C++, clang
// within an expression), which shortens the latency-bound recurrences.
// The results differ from the baseline's by round-off only (fused
// multiply-adds round once instead of twice). DAEDALUS_NO_MULTIVERSION
// turns it off.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(DAEDALUS_NO_MULTIVERSION)
#define DAEDALUS_REVOLUTE_AVX2 1
#define DAEDALUS_INLINE inline __attribute__((always_inline))
// GCC's SLP vectorizer paired independent scalars of pass 2 (z and w_1)
// into one vector and split them again: shuffles on the dependency
// chain. Off in the x86-64 versions (clang has no such attribute).
#if defined(__clang__)
#define DAEDALUS_NO_SLP
#else
#define DAEDALUS_NO_SLP , optimize("no-tree-slp-vectorize")
#endif
#else
#define DAEDALUS_REVOLUTE_AVX2 0
#define DAEDALUS_INLINE inline
#endif

namespace daedalus::mb::internal {

namespace {
std::atomic<bool> g_use_revolute{true};
std::atomic<int> g_isa_cap{2};  // RevoluteIsaCap (tests)

// sin and cos of x[0..n) into s and c, branch-free so that the loop
// vectorizes (the joint angles' sincos was a sixth of chain_reduced's run
// as libm calls). x = k pi/2 + r with k the nearest integer to 2x/pi and r
// by Cody and Waite's reduction (pi/2 in three parts, the first two with
// 33 significant bits, so k P1 and k P2 are exact for |k| < 2^20; these
// are fdlibm's pio2_1, pio2_2, pio2_2t), |r| <= pi/4 (a little more by
// rounding); sin r and cos r by their Taylor series to r^17 and r^18
// (truncation below 1e-19 relative at pi/4); then sin x = S cos(k pi/2) +
// C sin(k pi/2), both factors exact in {-1, 0, 1}. Round-off a few units
// in the last place, as libm's. Returns false (nothing usable written)
// when some |x| > 1e5 or is not finite: the caller takes std::sin and
// std::cos.
DAEDALUS_INLINE bool SinCosArray(const double* x, int n, double* s, double* c) {
  // |x| <= 1e5 and not NaN for every x: the magnitudes' bit patterns (as
  // integers, ordered as the magnitudes, NaN above infinity) at most
  // 1e5's. An integer maximum vectorizes; std::max of doubles did not.
  std::int64_t worst = 0;
  for (int i = 0; i < n; ++i) {
    std::int64_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    bits &= INT64_MAX;
    worst = bits > worst ? bits : worst;
  }
  constexpr std::int64_t kBits1e5 = 0x40f86a0000000000;  // 1e5
  if (worst > kBits1e5) return false;
  constexpr double kTwoOverPi = 0.6366197723675814;
  constexpr double kP1 = 1.5707963267341256, kP2 = 6.077100506303966e-11,
                   kP3 = 2.0222662487959506e-21;
  // Adding and subtracting 1.5 2^52 rounds to the nearest integer.
  constexpr double kRound = 6755399441055744.0;
  for (int i = 0; i < n; ++i) {
    const double k = (x[i] * kTwoOverPi + kRound) - kRound;
    const double r = ((x[i] - k * kP1) - k * kP2) - k * kP3;
    // m = k mod 4 in {-2, ..., 2}; cos(m pi/2) = (u - 1)(u - 6)/6 and
    // sin(m pi/2) = m (4 - u)/3 with u = m^2, exact for these m.
    const double m = k - 4.0 * ((0.25 * k + kRound) - kRound);
    const double u = m * m;
    // Multiplied by the reciprocals 1/6 and 1/3 (rounded): exact for these
    // integers (6 fl(1/6) and 3 fl(1/3) round to 1), and a multiplication
    // where the division took as long as the rest of the iteration.
    constexpr double kSixth = 1.0 / 6.0, kThird = 1.0 / 3.0;
    const double ck = (u - 1.0) * (u - 6.0) * kSixth,
                 sk = m * (4.0 - u) * kThird;
    const double r2 = r * r;
    const double sr =
        r +
        r * r2 *
            (-1.0 / 6.0 +
             r2 *
                 (1.0 / 120.0 +
                  r2 * (-1.0 / 5040.0 +
                        r2 * (1.0 / 362880.0 +
                              r2 * (-1.0 / 39916800.0 +
                                    r2 * (1.0 / 6227020800.0 +
                                          r2 * (-1.0 / 1307674368000.0 +
                                                r2 * (1.0 /
                                                      355687428096000.0))))))));
    const double cr =
        1.0 +
        r2 *
            (-0.5 +
             r2 *
                 (1.0 / 24.0 +
                  r2 *
                      (-1.0 / 720.0 +
                       r2 *
                           (1.0 / 40320.0 +
                            r2 *
                                (-1.0 / 3628800.0 +
                                 r2 *
                                     (1.0 / 479001600.0 +
                                      r2 *
                                          (-1.0 / 87178291200.0 +
                                           r2 *
                                               (1.0 / 20922789888000.0 -
                                                r2 *
                                                    (1.0 /
                                                     6402373705728000.0)))))))));
    s[i] = sr * ck + cr * sk;
    c[i] = cr * ck - sr * sk;
  }
  return true;
}

// An unbranched chain (link i's parent is link i - 1, link 0's the ground,
// all revolute, one angle per link), chain_reduced's: the same algorithm
// as Revolute below with the passes rearranged for it (round-off apart,
// the same arithmetic). Each link's values live in one record of kRec
// doubles (in TreeData::IA's storage, which the planar ABA does not
// otherwise use), so that a pass reads and writes through one pointer and
// a constant offset (arrays of one quantity each took fourteen pointers,
// which with the carried values did not fit the registers).
//
// - Pass 1 (outward) keeps to the rotation and velocity recurrences and
//   stores p, h in world axes, sigma, the velocity and qd.
// - Pass 2 (inward) computes each link's own inertia, bias force and c,
//   and carries the articulated inertia [a b'; b K] and bias force f in
//   registers. The link-to-link dependencies are short: the parent's a is
//   one multiply-add after this link's division (p'K p and p . b come
//   from K and b, which are one multiply-add after the child's), and its
//   f0 one multiply-add after z, as f0 += p . (f_xy + K c) + (p . b) z.
//   It stores z and w = b / a for pass 3.
// - Pass 3 (outward): see there.
//
// Returns -3, having written nothing, when the links are not such a chain
// (TreeData::chain, found once by TreeDynamics: checking the links at
// every call cost a tenth of pass 1).
constexpr int kRec = 12;  // doubles a record; fits IA's 36 a link
// Pass 1's fields: p = e_z x r (r: the joint from the parent's joint,
// world axes), the first moment h in world axes, sigma, the joint point's
// velocity (w, v_x, v_y) and the joint rate qd.
constexpr int kPx = 0, kPy = 1, kHx = 2, kHy = 3, kSg = 4, kW = 5, kVx = 6,
              kVy = 7, kQd = 8;
// Pass 2's, read by pass 3: z = sigma qdd at a zero parent acceleration,
// w = b / A.
constexpr int kZ = 9, kW0 = 10, kW1 = 11;

// kPlain: d->chain is 2 (sigma = 1, pre.R = 1: their products are left
// out); kKinetic: d->want_kinetic.
template <bool kPlain, bool kKinetic>
DAEDALUS_INLINE int RevoluteChainT(const std::vector<RbLink>& links,
                                   const VecX<double>& q,
                                   const VecX<double>& v,
                                   const VecX<double>& tau,
                                   TreeData<double>* d,
                                   VecX<double>* qdd) {
  const int n = static_cast<int>(links.size());
  // The joint angles' sines and cosines (in d->u and d->D, free until
  // pass 2).
  double* __restrict sn = d->u.data();
  double* __restrict cs = d->D.data();
  if (!SinCosArray(q.data(), n, sn, cs))
    for (int i = 0; i < n; ++i) {
      sn[i] = std::sin(q[i]);
      cs[i] = std::cos(q[i]);
    }
  double* __restrict const rec = d->IA.data()->data();
  const RbInertia<double>* __restrict const inertia = d->I.data();

  // Pass 1, outward: rotations and velocities.
  double cp = 1.0, sp = 0.0, wp = 0.0, vpx = 0.0, vpy = 0.0;
  for (int i = 0; i < n; ++i) {
    double sigma = 1.0, c = cs[i], s = sn[i];
    if constexpr (!kPlain) {
      const RbLink& l = links[i];
      sigma = l.axis[2];
      const Eigen::Matrix3d& rp = l.pre.R;
      const double cq = c, sq = sigma * s;
      c = rp(0, 0) * cq + rp(0, 1) * sq;
      s = rp(1, 0) * cq + rp(1, 1) * sq;
    }
    const double cw = cp * c - sp * s, sw = sp * c + cp * s;
    const Vec3<double>& pre = d->p_pre[i];
    const double rx = cp * pre[0] - sp * pre[1], ry = sp * pre[0] + cp * pre[1];
    const double qd = v[i];
    const double w = kPlain ? wp + qd : wp + sigma * qd;
    const double vx = vpx - wp * ry, vy = vpy + wp * rx;
    const Vec3<double>& h = inertia[i].h;
    double* __restrict r = rec + kRec * i;
    r[kPx] = -ry;
    r[kPy] = rx;
    r[kHx] = cw * h[0] - sw * h[1];
    r[kHy] = sw * h[0] + cw * h[1];
    r[kSg] = sigma;
    r[kW] = w;
    r[kVx] = vx;
    r[kVy] = vy;
    r[kQd] = qd;
    cp = cw;
    sp = sw;
    wp = w;
    vpx = vx;
    vpy = vy;
  }

  // Pass 2, inward. Carried into the iteration of link i: its articulated
  // inertia [a b'; b K] and bias force f, complete (its own and its
  // descendants'). With bc = b . c_xy, U = sigma (a, b), u = tau - sigma
  // f0 and the parent's acceleration zero, qdd = (u - U'c) / D = sigma z,
  // z = (sigma tau - f0 - bc) / a; the parent gets X' (IA - U U'/D) X
  // and X' (f + IA c + U u / D), where (IA - U U'/D) c's linear part is
  // K c - b bc / a, so that (f + IA c + U u / D)_xy = f_xy + K c + b z.
  //
  // Link j's own inertia about its joint, world axes, is [J, -h_y, h_x;
  // -h_y, m, 0; h_x, 0, m], its bias force v x* I v; the kinetic energy is
  // summed on the way (from the tip).
  double kinetic = 0.0;
  auto own_force = [&](const double* r, double m, double jz, double* of0,
                       double* of1, double* of2) {
    const double hx = r[kHx], hy = r[kHy];
    const double w = r[kW], vx = r[kVx], vy = r[kVy];
    const double ix = m * vx - hy * w, iy = m * vy + hx * w;
    if constexpr (kKinetic) {
      const double iw = jz * w - hy * vx + hx * vy;
      kinetic += w * iw + vx * ix + vy * iy;
    } else {
      (void)jz;
    }
    *of0 = vx * iy - vy * ix;
    *of1 = -w * iy;
    *of2 = w * ix;
  };
  double a, b0, b1, k00, k01, k11, f0, f1, f2;
  {
    const double* r = rec + kRec * (n - 1);
    const double m = inertia[n - 1].m, jz = inertia[n - 1].I(2, 2);
    a = jz;
    b0 = -r[kHy];
    b1 = r[kHx];
    k00 = k11 = m;
    k01 = 0.0;
    own_force(r, m, jz, &f0, &f1, &f2);
  }
  for (int i = n - 1; i >= 0; --i) {
    if (!(a > 0.0)) {
      d->D[i] = a;
      d->kinetic = 0.5 * kinetic;
      return i;
    }
    const double inv = 1.0 / a;
    double* __restrict r = rec + kRec * i;
    const double sigma = kPlain ? 1.0 : r[kSg];
    const double sqd = kPlain ? r[kQd] : sigma * r[kQd];
    const double c1 = sqd * r[kVy], c2 = -sqd * r[kVx];
    const double st = kPlain ? tau[i] : sigma * tau[i];
    // (st - bc before f0: f0 is on a dependency chain, b is not.)
    const double z = ((st - (b0 * c1 + b1 * c2)) - f0) * inv;
    const double w0 = b0 * inv, w1 = b1 * inv;
    r[kZ] = z;
    r[kW0] = w0;
    r[kW1] = w1;
    if (i == 0) break;
    const double px = r[kPx], py = r[kPy];
    const double* rq = r - kRec;  // link i - 1
    const double jz = inertia[i - 1].I(2, 2), m = inertia[i - 1].m;
    double of0, of1, of2;
    own_force(rq, m, jz, &of0, &of1, &of2);
    // The parent's A = J + p'k p with k = K - b b'/a: p'K p and p . b
    // before this link's division is done. (The pass is bound by the
    // multiplier ports, about 50 products a link on two ports, more than
    // by its dependencies: the forms with the fewest products.)
    const double kpx = k00 * px + k01 * py, kpy = k01 * px + k11 * py;
    const double pkp = jz + (px * kpx + py * kpy);
    const double pb = px * b0 + py * b1;
    const double f1c = f1 + (k00 * c1 + k01 * c2),
                 f2c = f2 + (k01 * c1 + k11 * c2);
    a = pkp - (pb * pb) * inv;
    k00 = (k00 + m) - b0 * w0;
    k01 = k01 - b0 * w1;
    k11 = (k11 + m) - b1 * w1;
    // f0 gets p . (f1c + b0 z, f2c + b1 z) = p . (f1c, f2c) + (p . b) z:
    // one multiply-add after z.
    f0 = ((of0 + st) + (px * f1c + py * f2c)) + pb * z;
    f1 = (of1 + f1c) + b0 * z;
    f2 = (of2 + f2c) + b1 * z;
    b0 = (kpx - rq[kHy]) - pb * w0;
    b1 = (kpy + rq[kHx]) - pb * w1;
  }
  d->kinetic =
      kKinetic ? 0.5 * kinetic : std::numeric_limits<double>::quiet_NaN();

  // Pass 3, outward: qdd_i = pb_i - pw_i . a_{i-1}, a_i = X a_{i-1} + c_i
  // + S qdd_i, with pb = sigma z, pw = sigma (1 + p . w, w). a_{i-1}'s
  // linear part is written as bx + alpha_{i-2} p_{i-1} (bx = a_{i-2}'s
  // linear part + c_{i-1}), so that qdd_i = e_i - pw0_i alpha_{i-1} with
  // e_i free of alpha_{i-1}, and alpha_i = alpha_{i-1} + sigma_i qdd_i =
  // g_i alpha_{i-1} + sigma_i e_i, g_i = 1 - sigma_i pw0_i = -p . w.
  double* __restrict out = qdd->data();
  double al1 = 0.0, al2 = 0.0;  // alpha_{i-1}, alpha_{i-2}
  double bx = d->a0[3], by = d->a0[4], pxm = 0.0, pym = 0.0;
  for (int i = 0; i < n; ++i) {
    const double* __restrict r = rec + kRec * i;
    const double sigma = kPlain ? 1.0 : r[kSg], w0 = r[kW0], w1 = r[kW1];
    const double pdw = r[kPx] * w0 + r[kPy] * w1;
    // sigma e = z - w . (bx + alpha_{i-2} p_{i-1}).
    const double se =
        (r[kZ] - (w0 * bx + w1 * by)) - (w0 * pxm + w1 * pym) * al2;
    const double acc = se - (1.0 + pdw) * al1;
    out[i] = kPlain ? acc : sigma * acc;
    const double sqd = kPlain ? r[kQd] : sigma * r[kQd];
    bx = bx + (al2 * pxm + sqd * r[kVy]);
    by = by + (al2 * pym - sqd * r[kVx]);
    pxm = r[kPx];
    pym = r[kPy];
    al2 = al1;
    al1 = se - pdw * al1;
  }
  return -1;
}

DAEDALUS_INLINE int RevoluteChain(const std::vector<RbLink>& links,
                                  const VecX<double>& q,
                                  const VecX<double>& v,
                                  const VecX<double>& tau,
                                  TreeData<double>* d,
                                  VecX<double>* qdd) {
  const int n = static_cast<int>(links.size());
  // (No links: the general code, which has nothing to do.)
  if (d->chain == 0 || n == 0 || q.size() != n || v.size() != n) return -3;
  if (d->chain == 2)
    return d->want_kinetic
               ? RevoluteChainT<true, true>(links, q, v, tau, d, qdd)
               : RevoluteChainT<true, false>(links, q, v, tau, d, qdd);
  return d->want_kinetic
             ? RevoluteChainT<false, true>(links, q, v, tau, d, qdd)
             : RevoluteChainT<false, false>(links, q, v, tau, d, qdd);
}

// The algorithm; inlined into each instruction-set version below.
template <class S>
DAEDALUS_INLINE int Revolute(const std::vector<RbLink>& links,
                             const VecX<S>& q,
                             const VecX<S>& v,
                             const VecX<S>& tau,
                             TreeData<S>* d,
                             VecX<S>* qdd) {
  using std::cos;
  using std::sin;
  const int n = static_cast<int>(links.size());
  if constexpr (std::is_same_v<S, double>) {
    const int r = RevoluteChain(links, q, v, tau, d, qdd);
    if (r != -3) return r;
  }
  // Scratch (TreeData's planar vectors): pcos, psin: the link's rotation in
  // the world; pr: (p_x, p_y, sigma), p = e_z x r; pv: the velocity (w,
  // v_x, v_y) of the joint point (pass 3: the acceleration); pc: (qd,
  // c_x, c_y), c = v x S qd (its angular part is 0); pa: the bias force;
  // pI: IA = [A b'; b K] in its lower triangle (with the part from the
  // children at branch points); pb, pw: pass 3's qdd = pb - pw . a_parent.
  // The joint angles' cosines and sines (double: in d->D and d->u, free
  // until pass 2).
  bool tabled = false;
  if constexpr (std::is_same_v<S, double>)
    tabled =
        q.size() == n && SinCosArray(q.data(), n, d->u.data(), d->D.data());
  S kinetic = S(0.0);
  S prev_c(1.0), prev_s(0.0), prev_w(0.0), prev_vx(0.0), prev_vy(0.0);
  for (int i = 0; i < n; ++i) {
    const RbLink& l = links[i];
    if (l.kind != LinkKind::kRevolute) return -2;
    const int par = l.parent;
    const double sigma = l.axis[2];
    const Eigen::Matrix3d& rp = l.pre.R;
    S cq, sq;
    if (tabled) {
      cq = d->D[l.qi];
      sq = sigma * d->u[l.qi];
    } else {
      cq = cos(q[l.qi]);
      sq = sigma * sin(q[l.qi]);
    }
    // The relative rotation R_PL = pre.R Rz(sigma q), then the world's.
    const S c = rp(0, 0) * cq + rp(0, 1) * sq;
    const S s = rp(1, 0) * cq + rp(1, 1) * sq;
    // The parent's rotation and velocity: link i - 1's from registers on a
    // chain (no store-to-load forwarding on the dependent chain).
    S cp, sp, wp, vpx, vpy;
    if (par == i - 1 && par >= 0) {
      cp = prev_c;
      sp = prev_s;
      wp = prev_w;
      vpx = prev_vx;
      vpy = prev_vy;
    } else if (par >= 0) {
      cp = d->pcos[par];
      sp = d->psin[par];
      wp = d->pv[par][0];
      vpx = d->pv[par][1];
      vpy = d->pv[par][2];
    } else {
      cp = S(1.0);
      sp = wp = vpx = vpy = S(0.0);
    }
    const S cw = cp * c - sp * s, sw = sp * c + cp * s;
    d->pcos[i] = prev_c = cw;
    d->psin[i] = prev_s = sw;
    const Vec3<S>& pre = d->p_pre[i];
    const S rx = cp * pre[0] - sp * pre[1], ry = sp * pre[0] + cp * pre[1];
    d->pr[i] = Vec3<S>(-ry, rx, S(sigma));
    const S qd = v[l.vi];
    const S w = wp + sigma * qd;
    const S vx = vpx - wp * ry, vy = vpy + wp * rx;
    d->pv[i] = Vec3<S>(w, vx, vy);
    prev_w = w;
    prev_vx = vx;
    prev_vy = vy;
    d->pc[i] = Vec3<S>(qd, sigma * qd * vy, -(sigma * qd) * vx);
    // The link inertia about the joint, world axes: [J, -h_y, h_x; -h_y,
    // m, 0; h_x, 0, m].
    const RbInertia<S>& in = d->I[i];
    const S hx = cw * in.h[0] - sw * in.h[1], hy = sw * in.h[0] + cw * in.h[1];
    const S m = in.m, jz = in.I(2, 2);
    const S iw = jz * w - hy * vx + hx * vy, ix = m * vx - hy * w,
            iy = m * vy + hx * w;
    kinetic += 0.5 * (w * iw + vx * ix + vy * iy);
    // v x* I v.
    d->pa[i] = Vec3<S>(vx * iy - vy * ix, -w * iy, w * ix);
    Mat3<S>& ia = d->pI[i];
    ia(0, 0) = jz;
    ia(1, 0) = -hy;
    ia(2, 0) = hx;
    ia(1, 1) = m;
    ia(2, 1) = S(0.0);
    ia(2, 2) = m;
  }
  d->kinetic = kinetic;
  // Pass 2, inward. On a chain (parent i - 1) the parent's completed
  // articulated inertia and bias force go to the next iteration in
  // registers; other parents (branch points) accumulate in pI and pa.
  bool carried = false;
  S a, b0, b1, k00, k01, k11, f0, f1, f2;
  for (int i = n - 1; i >= 0; --i) {
    const RbLink& l = links[i];
    if (!carried) {
      const Mat3<S>& ia = d->pI[i];
      a = ia(0, 0);
      b0 = ia(1, 0);
      b1 = ia(2, 0);
      k00 = ia(1, 1);
      k01 = ia(2, 1);
      k11 = ia(2, 2);
      f0 = d->pa[i][0];
      f1 = d->pa[i][1];
      f2 = d->pa[i][2];
    }
    if (!(Value(a) > 0.0)) {
      d->D[i] = a;
      return i;
    }
    const S inv = 1.0 / a;
    const Vec3<S>& pr = d->pr[i];
    const S px = pr[0], py = pr[1];
    const double sigma = Value(pr[2]);
    const Vec3<S>& cc = d->pc[i];
    const S t = tau[l.vi];
    const S u = t - sigma * f0;
    const S w0 = b0 * inv, w1 = b1 * inv;
    // qdd = (u - U'(X a_p + c)) / D = pb - pw . a_p, U = sigma (A, b).
    d->pb[i] = (u - sigma * (b0 * cc[1] + b1 * cc[2])) * inv;
    d->pw[i] =
        Vec3<S>(sigma * (1.0 + (px * w0 + py * w1)), sigma * w0, sigma * w1);
    const int par = l.parent;
    carried = false;
    if (par < 0) continue;
    // Before the division's result is needed: K p, p'K p, p . b.
    const S kpx = k00 * px + k01 * py, kpy = k01 * px + k11 * py;
    const S pkp = px * kpx + py * kpy;
    const S pb = px * b0 + py * b1;
    const S pbi = pb * inv;
    // k = K - b w'.
    const S n00 = k00 - b0 * w0, n01 = k01 - b0 * w1, n11 = k11 - b1 * w1;
    // f = pA + Ia c + U u / D: (sigma tau, pA_xy + k c_xy + sigma u w).
    const S su = sigma * u;
    const S fx = f1 + (n00 * cc[1] + n01 * cc[2]) + su * w0;
    const S fy = f2 + (n01 * cc[1] + n11 * cc[2]) + su * w1;
    const S fn = sigma * t + (px * fx + py * fy);
    Mat3<S>& ip = d->pI[par];
    Vec3<S>& fp = d->pa[par];
    if (par == i - 1) {
      a = (ip(0, 0) + pkp) - pb * pbi;
      b0 = (ip(1, 0) + kpx) - b0 * pbi;
      b1 = (ip(2, 0) + kpy) - b1 * pbi;
      k00 = ip(1, 1) + n00;
      k01 = ip(2, 1) + n01;
      k11 = ip(2, 2) + n11;
      f0 = fp[0] + fn;
      f1 = fp[1] + fx;
      f2 = fp[2] + fy;
      carried = true;
    } else {
      ip(0, 0) = (ip(0, 0) + pkp) - pb * pbi;
      ip(1, 0) = (ip(1, 0) + kpx) - b0 * pbi;
      ip(2, 0) = (ip(2, 0) + kpy) - b1 * pbi;
      ip(1, 1) += n00;
      ip(2, 1) += n01;
      ip(2, 2) += n11;
      fp[0] += fn;
      fp[1] += fx;
      fp[2] += fy;
    }
  }
  // Pass 3, outward: qdd = pb - pw . a_p, a = X a_p + c + S qdd; link
  // i - 1's acceleration from registers.
  const S gx = d->a0[3], gy = d->a0[4];
  S prev0(0.0), prevx(0.0), prevy(0.0);
  for (int i = 0; i < n; ++i) {
    const RbLink& l = links[i];
    const int par = l.parent;
    S a0, ax, ay;
    if (par == i - 1 && par >= 0) {
      a0 = prev0;
      ax = prevx;
      ay = prevy;
    } else if (par >= 0) {
      a0 = d->pv[par][0];
      ax = d->pv[par][1];
      ay = d->pv[par][2];
    } else {
      a0 = S(0.0);
      ax = gx;
      ay = gy;
    }
    const Vec3<S>& pw = d->pw[i];
    const Vec3<S>& pr = d->pr[i];
    const Vec3<S>& cc = d->pc[i];
    const S acc = (d->pb[i] - (pw[1] * ax + pw[2] * ay)) - pw[0] * a0;
    (*qdd)[l.vi] = acc;
    prev0 = a0 + pr[2] * acc;
    prevx = ax + a0 * pr[0] + cc[1];
    prevy = ay + a0 * pr[1] + cc[2];
    d->pv[i] = Vec3<S>(prev0, prevx, prevy);
  }
  return -1;
}

#if DAEDALUS_REVOLUTE_AVX2
__attribute__((target("avx2,fma") DAEDALUS_NO_SLP)) int RevoluteAvx2(
    const std::vector<RbLink>& links,
    const VecX<double>& q,
    const VecX<double>& v,
    const VecX<double>& tau,
    TreeData<double>* d,
    VecX<double>* qdd) {
  return Revolute<double>(links, q, v, tau, d, qdd);
}

// The same with AVX-512's 32 vector registers (scalar instructions, EVEX
// encoded): pass 2 carries nine values and needs about twenty more at
// once, which with 16 registers spilled to the stack on its dependency
// chain.
__attribute__((target("avx2,fma,avx512f,avx512vl") DAEDALUS_NO_SLP)) int
RevoluteAvx512(const std::vector<RbLink>& links,
               const VecX<double>& q,
               const VecX<double>& v,
               const VecX<double>& tau,
               TreeData<double>* d,
               VecX<double>* qdd) {
  return Revolute<double>(links, q, v, tau, d, qdd);
}

// 2: AVX-512 (F and VL) with FMA, 1: AVX2 with FMA, 0: the baseline.
int CpuLevel() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    return 0;
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
             ? 2
             : 1;
}
#endif

int Dispatch(const std::vector<RbLink>& links,
             const VecX<double>& q,
             const VecX<double>& v,
             const VecX<double>& tau,
             TreeData<double>* d,
             VecX<double>* qdd) {
#if DAEDALUS_REVOLUTE_AVX2
  static const int cpu = CpuLevel();
  const int level = std::min(cpu, g_isa_cap.load(std::memory_order_relaxed));
  if (level == 2) return RevoluteAvx512(links, q, v, tau, d, qdd);
  if (level == 1) return RevoluteAvx2(links, q, v, tau, d, qdd);
#endif
  return Revolute<double>(links, q, v, tau, d, qdd);
}

int Dispatch(const std::vector<RbLink>& links,
             const VecX<D1>& q,
             const VecX<D1>& v,
             const VecX<D1>& tau,
             TreeData<D1>* d,
             VecX<D1>* qdd) {
  return Revolute<D1>(links, q, v, tau, d, qdd);
}
}  // namespace

void UseRevolutePlanarAba(bool on) {
  g_use_revolute.store(on, std::memory_order_relaxed);
}
bool RevolutePlanarAbaInUse() {
  return g_use_revolute.load(std::memory_order_relaxed);
}

int RevoluteIsaLevels() {
#if DAEDALUS_REVOLUTE_AVX2
  static const int cpu = CpuLevel();
  return cpu + 1;
#else
  return 1;
#endif
}

void CapRevoluteIsa(int level) {
  g_isa_cap.store(level, std::memory_order_relaxed);
}

template <class S>
int ForwardPlanarRevolute(const std::vector<RbLink>& links,
                          const VecX<S>& q,
                          const VecX<S>& v,
                          const VecX<S>& tau,
                          TreeData<S>* d,
                          VecX<S>* qdd) {
  return Dispatch(links, q, v, tau, d, qdd);
}

template int ForwardPlanarRevolute<double>(const std::vector<RbLink>&,
                                           const VecX<double>&,
                                           const VecX<double>&,
                                           const VecX<double>&,
                                           TreeData<double>*,
                                           VecX<double>*);
template int ForwardPlanarRevolute<D1>(const std::vector<RbLink>&,
                                       const VecX<D1>&,
                                       const VecX<D1>&,
                                       const VecX<D1>&,
                                       TreeData<D1>*,
                                       VecX<D1>*);

}  // namespace daedalus::mb::internal

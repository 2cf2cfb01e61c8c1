// Body poses and marker trajectories (include/daedalus/multibody_output.hpp):
// the pose columns and the mechanism's description; the file writer,
// PosesFile, is in src/report/side_outputs.cpp.
#include <Eigen/Geometry>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/multibody_output.hpp"

namespace daedalus::mb {
namespace {

// A JSON string literal (names may hold any character).
std::string Quote(const std::string& s) {
  std::ostringstream out;
  out << '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out << '\\' << c;
    } else if (c < 0x20) {
      static const char* hex = "0123456789abcdef";
      out << "\\u00" << hex[c >> 4] << hex[c & 15];
    } else {
      out << c;
    }
  }
  out << '"';
  return out.str();
}

constexpr int kPerFrame = 7;  // x, y, z, qw, qx, qy, qz

// A JSON number with all its digits (null when not finite).
std::string Num(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return buf;
}

template <class V>
std::string Array(const V& v, int n) {
  std::string out = "[";
  for (int k = 0; k < n; ++k) out += (k ? ", " : "") + Num(v[k]);
  return out + "]";
}

// "geometry": the shapes on the bodies (multibody.hpp, Geometry), the
// schema of docs/output.md ("The mechanism").
void GeometryJson(const internal::MbTree& t, std::ostringstream& js) {
  js << ", \"geometry\": [";
  for (size_t i = 0; i < t.geometries.size(); ++i) {
    const Geometry& g = t.geometries[i].geometry;
    js << (i ? ", " : "")
       << "{\"body\": " << Quote(t.bodies[t.geometries[i].body].name)
       << ", \"name\": " << Quote(g.name)
       << ", \"type\": " << Quote(ToString(g.type))
       << ", \"size\": " << Array(g.size, GeometrySizeCount(g.type))
       << ", \"pos\": " << Array(g.position, 3)
       << ", \"quat\": " << Array(g.quaternion, 4)
       << ", \"rgba\": " << Array(g.rgba, 4)
       << ", \"collision\": " << (g.collision ? "true" : "false")
       << ", \"visual\": " << (g.visual ? "true" : "false") << "}";
  }
  js << "]";
}

// "limits": each limited joint's coordinates and bounds.
void LimitsJson(const internal::MbTree& t, std::ostringstream& js) {
  js << ", \"limits\": [";
  for (size_t i = 0; i < t.limits.size(); ++i) {
    const internal::MbJoint& j = t.joints[t.limits[i].joint];
    const JointLimits& l = t.limits[i].limits;
    const int n = static_cast<int>(l.lower.size());
    js << (i ? ", " : "") << "{\"joint\": " << Quote(j.name)
       << ", \"coordinates\": [";
    for (int k = 0; k < n; ++k)
      js << (k ? ", " : "") << Quote(t.coordinate_names[j.first + k]);
    js << "], \"lower\": " << Array(l.lower, n)
       << ", \"upper\": " << Array(l.upper, n)
       << ", \"restitution\": " << Num(l.restitution) << "}";
  }
  js << "]";
}

}  // namespace

std::vector<std::string> PoseColumns(const Kinematics& kin) {
  std::vector<std::string> cols;
  for (const auto& f : kin.tree().frames)
    for (const char* c : {"x", "y", "z", "qw", "qx", "qy", "qz"})
      cols.push_back(f.name + "." + c);
  return cols;
}

Eigen::Vector4d QuaternionOf(const Eigen::Matrix3d& rotation) {
  Eigen::Quaterniond quat(rotation);
  quat.normalize();
  Eigen::Vector4d w(quat.w(), quat.x(), quat.y(), quat.z());
  if (w[0] < 0.0) w = -w;
  return w;
}

void AppendPoses(const Kinematics& kin,
                 const Eigen::VectorXd& q,
                 const Eigen::VectorXd& p,
                 const std::vector<double>& previous,
                 std::vector<double>* row) {
  const int nf = static_cast<int>(kin.tree().frames.size());
  const bool have_previous =
      previous.size() == static_cast<size_t>(kPerFrame * nf);
  for (int f = 0; f < nf; ++f) {
    const FramePose<double> pose = kin.Pose<double>(FrameIndex{f}, q, p);
    Eigen::Vector4d quat = QuaternionOf(pose.R);
    if (have_previous) {
      const double* prev = &previous[static_cast<size_t>(kPerFrame * f + 3)];
      const double dot = quat[0] * prev[0] + quat[1] * prev[1] +
                         quat[2] * prev[2] + quat[3] * prev[3];
      if (dot < 0.0) quat = -quat;
    }
    for (int k = 0; k < 3; ++k) row->push_back(pose.p[k]);
    for (int k = 0; k < 4; ++k) row->push_back(quat[k]);
  }
}

std::string MechanismJson(const Kinematics& kin) {
  const internal::MbTree& t = kin.tree();
  std::ostringstream js;
  js << "{\"kind\": \"poses\", \"dimension\": "
     << (t.dim == Dimension::kPlanar ? "\"planar\"" : "\"spatial\"")
     << ", \"frames\": [";
  for (size_t f = 0; f < t.frames.size(); ++f)
    js << (f ? ", " : "") << "{\"name\": " << Quote(t.frames[f].name)
       << ", \"body\": " << Quote(t.bodies[t.frames[f].body].name) << "}";
  js << "], \"bodies\": [";
  for (size_t b = 0; b < t.bodies.size(); ++b) {
    js << (b ? ", " : "") << "{\"name\": " << Quote(t.bodies[b].name)
       << ", \"frames\": [";
    bool first = true;
    for (const auto& f : t.frames) {
      if (f.body != static_cast<int>(b)) continue;
      js << (first ? "" : ", ") << Quote(f.name);
      first = false;
    }
    js << "]}";
  }
  js << "], \"joints\": [";
  for (size_t j = 0; j < t.joints.size(); ++j) {
    const internal::MbJoint& jt = t.joints[j];
    js << (j ? ", " : "") << "{\"name\": " << Quote(jt.name)
       << ", \"type\": " << Quote(ToString(jt.spec.type))
       << ", \"parent\": " << Quote(t.frames[jt.parent_frame].name)
       << ", \"child\": " << Quote(t.frames[jt.child_frame].name) << "}";
  }
  js << "]";
  GeometryJson(t, js);
  LimitsJson(t, js);
  js << "}";
  return js.str();
}

}  // namespace daedalus::mb

// Body poses and marker trajectories of a multibody system as a file
// beside the run's CSV (docs/output.md, "Files beside the CSV";
// docs/multibody.md, "Poses"): DIR/<name>.poses.csv, which scripts/plot
// draws as the mechanism at a few instants.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "daedalus/multibody.hpp"
#include "daedalus/side_outputs.hpp"

namespace daedalus::mb {

/// The pose file's columns after `t`: for every frame in declaration order
/// (the world, then bodies' frames and markers as declared),
/// `<frame>.x`, `<frame>.y`, `<frame>.z` (p_WF [m]) and `<frame>.qw`,
/// `<frame>.qx`, `<frame>.qy`, `<frame>.qz` (R_WF as a unit quaternion).
std::vector<std::string> PoseColumns(const Kinematics& kin);

/// The unit quaternion (w, x, y, z) of a rotation matrix, with w >= 0.
Eigen::Vector4d QuaternionOf(const Eigen::Matrix3d& rotation);

/// Appends the pose columns (7 per frame) at positions q and parameters p.
/// Each frame's quaternion has w >= 0 unless `previous` (the last row's
/// values, or empty) says otherwise: then its sign is the one nearer the
/// previous quaternion, so that a column is continuous along a run.
void AppendPoses(const Kinematics& kin,
                 const Eigen::VectorXd& q,
                 const Eigen::VectorXd& p,
                 const std::vector<double>& previous,
                 std::vector<double>* row);

/// The mechanism as a JSON object (text): {"kind": "poses", "dimension":
/// "planar"|"spatial", "frames": [{"name", "body"}], "bodies": [{"name",
/// "frames": [...]}], "joints": [{"name", "type", "parent", "child"}],
/// "geometry": [{"body", "name", "type", "size": [...], "pos": [x, y, z],
/// "quat": [w, x, y, z], "rgba": [r, g, b, a], "collision": bool,
/// "visual": bool}], "limits": [{"joint", "coordinates": [...], "lower":
/// [...], "upper": [...], "restitution"}]}, frames and joints by name in
/// declaration order; the ground is the body "ground" whose frame is the
/// world. The geometry (multibody.hpp, Geometry) is in its body's frame,
/// sizes in MuJoCo's conventions; an unbounded limit is null
/// (docs/output.md, "The mechanism").
std::string MechanismJson(const Kinematics& kin);

/// DIR/<name>.poses.csv (PoseColumns, one row per sample), described in the
/// summary's "side_files" by MechanismJson.
SideOutput PosesFile(const Kinematics& kin);

}  // namespace daedalus::mb

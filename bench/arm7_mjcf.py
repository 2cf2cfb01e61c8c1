#!/usr/bin/python3
"""Writes problems/data/arm7.xml, the MJCF twin of problems/data/arm7.urdf,
for the MuJoCo side-by-side benchmark (bench/mujoco_side_by_side.cpp).

Usage: bench/arm7_mjcf.py [URDF] [OUT.xml]   (defaults: the arm's files)

The mapping (URDF -> MJCF):
  - the root link is the world (a fixed base: its own inertia never moves);
  - a joint's <origin> becomes the child <body>'s pos and quat (URDF's
    rpy is R = Rz(yaw) Ry(pitch) Rx(roll)); a revolute or continuous joint
    becomes a hinge at the body's origin with the same axis; a fixed joint
    becomes a body without a joint;
  - <inertial> becomes <inertial pos quat mass diaginertia>: the principal
    moments of the URDF tensor and the orientation R_rpy V of its principal
    axes V in the link frame, computed here in double precision and written
    as the shortest text that reads back to the same double. MuJoCo's own `fullinertia` is not used: its
    Jacobi iteration (mju_eig3) stops at an absolute off-diagonal of 1e-12
    or a rotation cosine within 1e-12 of 1, which leaves relative errors
    near 1e-7 in the mass matrix, far above the 1e-12 of the check.
  - joint limits are not written (Daedalus reports them but does not
    enforce them; an enforced limit would be a MuJoCo constraint); damping,
    armature and friction loss are 0 as in the URDF.
The benchmark's check mode (`--check`) compares the mass matrix, the bias
forces and the accelerations of both models at random states.
"""
import os
import sys
import xml.etree.ElementTree as ET

import numpy as np


def rpy_matrix(rpy):
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = (np.cos(r), np.sin(r), np.cos(p), np.sin(p),
                              np.cos(y), np.sin(y))
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def quat(rot):
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd)."""
    t = np.trace(rot)
    if t > 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = [0.25 * s, (rot[2, 1] - rot[1, 2]) / s,
             (rot[0, 2] - rot[2, 0]) / s, (rot[1, 0] - rot[0, 1]) / s]
    else:
        i = int(np.argmax(np.diag(rot)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(1.0 + rot[i, i] - rot[j, j] - rot[k, k])
        q = [0.0] * 4
        q[0] = (rot[k, j] - rot[j, k]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (rot[j, i] + rot[i, j]) / s
        q[1 + k] = (rot[k, i] + rot[i, k]) / s
    q = np.array(q)
    return q / np.linalg.norm(q)


def vec(text, n=3):
    vals = [float(x) for x in (text or "").split()] or [0.0] * n
    if len(vals) != n:
        raise ValueError(f"expected {n} numbers, got '{text}'")
    return np.array(vals)


def fmt(values):
    # Shortest text that reads back to the same double (0.15, not
    # 0.14999999999999999).
    return " ".join(repr(float(v)) for v in values)


def origin(elem):
    o = elem.find("origin")
    if o is None:
        return np.zeros(3), np.zeros(3)
    return vec(o.get("xyz")), vec(o.get("rpy"))


def inertial(link):
    inr = link.find("inertial")
    xyz, rpy = origin(inr)
    mass = float(inr.find("mass").get("value"))
    i = inr.find("inertia")
    g = {k: float(i.get(k, "0")) for k in
         ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
    tensor = np.array([[g["ixx"], g["ixy"], g["ixz"]],
                       [g["ixy"], g["iyy"], g["iyz"]],
                       [g["ixz"], g["iyz"], g["izz"]]])
    moments, axes = np.linalg.eigh(tensor)
    if np.linalg.det(axes) < 0:
        axes[:, 0] = -axes[:, 0]
    rot = rpy_matrix(rpy) @ axes
    return (f'<inertial pos="{fmt(xyz)}" quat="{fmt(quat(rot))}" '
            f'mass="{mass!r}" diaginertia="{fmt(moments)}"/>'), g, mass


def write_mjcf(out, header, name, lines):
    """Writes the MJCF file: the header comment, the compiler and option
    lines both generators use (radians, inertias as given, gravity along -z,
    RK4 at 1 ms), and the world body's lines."""
    text = "\n".join([
        header,
        f'<mujoco model="{name}">',
        '  <compiler angle="radian" inertiafromgeom="false"/>',
        '  <option gravity="0 0 -9.81" timestep="0.001" integrator="RK4"/>',
        "  <worldbody>",
        *lines,
        "  </worldbody>",
        "</mujoco>",
        "",
    ])
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {out}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "..", "problems", "data")
    urdf = sys.argv[1] if len(sys.argv) > 1 else os.path.join(data,
                                                              "arm7.urdf")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(data, "arm7.xml")
    robot = ET.parse(urdf).getroot()
    links = {l.get("name"): l for l in robot.findall("link")}
    children = {}
    for j in robot.findall("joint"):
        children.setdefault(j.find("parent").get("link"), []).append(j)
    child_links = {j.find("child").get("link") for j in robot.findall("joint")}
    roots = [n for n in links if n not in child_links]
    if len(roots) != 1:
        raise ValueError(f"{urdf}: expected one root link, found {roots}")

    lines = []

    def body(joint, depth):
        pad = "  " * depth
        name = joint.find("child").get("link")
        xyz, rpy = origin(joint)
        kind = joint.get("type")
        lines.append(f"{pad}<!-- joint {joint.get('name')} ({kind}): origin "
                     f"xyz {fmt(xyz)}, rpy {fmt(rpy)} -->")
        lines.append(f'{pad}<body name="{name}" pos="{fmt(xyz)}" '
                     f'quat="{fmt(quat(rpy_matrix(rpy)))}">')
        if kind in ("revolute", "continuous"):
            axis = vec(joint.find("axis").get("xyz"))
            lines.append(f'{pad}  <joint name="{joint.get("name")}" '
                         f'type="hinge" pos="0 0 0" axis="{fmt(axis)}"/>')
        elif kind != "fixed":
            raise ValueError(f"{urdf}: joint type '{kind}' not mapped")
        text, g, mass = inertial(links[name])
        lines.append(f"{pad}  <!-- URDF inertial: mass {mass:g}, inertia "
                     f"about the centre of mass ixx iyy izz ixy ixz iyz = "
                     f"{g['ixx']:g} {g['iyy']:g} {g['izz']:g} {g['ixy']:g} "
                     f"{g['ixz']:g} {g['iyz']:g} -->")
        lines.append(f"{pad}  {text}")
        for c in children.get(name, []):
            body(c, depth + 1)
        lines.append(f"{pad}</body>")

    for j in children.get(roots[0], []):
        body(j, 2)
    header = f"""<!--
  {robot.get('name')}: the MJCF twin of arm7.urdf for the MuJoCo side-by-side
  benchmark (bench/mujoco_side_by_side.cpp). GENERATED by bench/arm7_mjcf.py
  from arm7.urdf: edit the URDF and rerun the script, do not edit this file.
  Same masses, centres of mass, inertias, joint frames and axes; the
  inertias are written by their principal moments and axes (full double
  precision),
  the joint frames' rpy as quaternions. No joint limits (Daedalus does not
  enforce them), no damping, no geoms (nothing collides).
  `mujoco_side_by_side check` compares M, the bias forces and the
  accelerations of both models at random states (1e-12 relative).
-->"""
    write_mjcf(out, header, robot.get("name"), lines)


if __name__ == "__main__":
    main()

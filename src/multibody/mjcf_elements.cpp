// The MJCF elements the importer reads (mjcf_read.hpp): MuJoCo 2.2.2's
// attribute lists, and <compiler>, <option>, <joint>, <geom>, <inertial>,
// the actuators and the equalities, each value checked with its file and
// line. What has no effect on the motion here is noted; what would change
// it and cannot be honoured is refused.
#include <Eigen/Eigenvalues>
#include <cmath>
#include <set>
#include <stdexcept>

#include "mjcf_read.hpp"

namespace daedalus::mjcf::internal {

namespace {

constexpr double kPi = 3.14159265358979323846;

std::set<std::string> Set(std::initializer_list<const char*> names) {
  std::set<std::string> s;
  for (const char* n : names) s.insert(n);
  return s;
}

// The attributes every actuator kind shares (MJCF 2.2.2).
std::set<std::string> ActuatorAttributes(
    std::initializer_list<const char*> extra) {
  std::set<std::string> s =
      Set({"name",          "class",       "group",      "ctrllimited",
           "forcelimited",  "ctrlrange",   "forcerange", "lengthrange",
           "gear",          "cranklength", "user",       "joint",
           "jointinparent", "tendon",      "slidersite", "cranksite",
           "site",          "refsite",     "actlimited", "actrange",
           "body"});
  for (const char* e : extra) s.insert(e);
  return s;
}

}  // namespace

const std::set<std::string>* AttributesOf(const std::string& tag) {
  static const std::map<std::string, std::set<std::string>> schema = {
      {"mujoco", Set({"model"})},
      {"include", Set({"file"})},
      {"default", Set({"class"})},
      {"compiler",
       Set({"autolimits", "boundmass", "boundinertia", "settotalmass",
            "balanceinertia", "strippath", "coordinate", "angle", "fitaabb",
            "eulerseq", "meshdir", "texturedir", "discardvisual", "convexhull",
            "usethread", "fusestatic", "inertiafromgeom", "inertiagrouprange",
            "exactmeshinertia"})},
      {"option", Set({"timestep",
                      "apirate",
                      "impratio",
                      "tolerance",
                      "noslip_tolerance",
                      "mpr_tolerance",
                      "gravity",
                      "wind",
                      "magnetic",
                      "density",
                      "viscosity",
                      "o_margin",
                      "o_solref",
                      "o_solimp",
                      "integrator",
                      "collision",
                      "cone",
                      "jacobian",
                      "solver",
                      "iterations",
                      "noslip_iterations",
                      "mpr_iterations"})},
      {"flag",
       Set({"constraint", "equality", "frictionloss", "limit", "contact",
            "passive", "gravity", "clampctrl", "warmstart", "filterparent",
            "actuation", "refsafe", "sensor", "override", "energy", "fwdinv",
            "sensornoise", "multiccd"})},
      {"body", Set({"name", "childclass", "pos", "quat", "mocap", "axisangle",
                    "xyaxes", "zaxis", "euler", "user"})},
      {"inertial", Set({"pos", "quat", "mass", "diaginertia", "axisangle",
                        "xyaxes", "zaxis", "euler", "fullinertia"})},
      {"joint",
       Set({"name",        "class",       "type",           "group",
            "pos",         "axis",        "springdamper",   "limited",
            "solreflimit", "solimplimit", "solreffriction", "solimpfriction",
            "stiffness",   "range",       "margin",         "ref",
            "springref",   "armature",    "damping",        "frictionloss",
            "user"})},
      {"freejoint", Set({"name", "group"})},
      {"geom", Set({"name",        "class",        "type",       "contype",
                    "conaffinity", "condim",       "group",      "priority",
                    "size",        "material",     "friction",   "mass",
                    "density",     "shellinertia", "solmix",     "solref",
                    "solimp",      "margin",       "gap",        "fromto",
                    "pos",         "quat",         "axisangle",  "xyaxes",
                    "zaxis",       "euler",        "hfield",     "mesh",
                    "fitscale",    "rgba",         "fluidshape", "fluidcoef",
                    "user"})},
      {"site", Set({"name", "class", "type", "group", "pos", "quat", "material",
                    "size", "fromto", "axisangle", "xyaxes", "zaxis", "euler",
                    "rgba", "user"})},
      {"camera",
       Set({"name", "class", "fovy", "ipd", "pos", "quat", "axisangle",
            "xyaxes", "zaxis", "euler", "mode", "target", "user"})},
      {"light", Set({"name", "class", "directional", "castshadow", "active",
                     "pos", "dir", "attenuation", "cutoff", "exponent",
                     "ambient", "diffuse", "specular", "mode", "target"})},
      {"pair", Set({"name", "class", "geom1", "geom2", "condim", "friction",
                    "solref", "solimp", "gap", "margin"})},
      {"tendon",
       Set({"name", "class", "group", "limited", "range", "solreflimit",
            "solimplimit", "solreffriction", "solimpfriction", "frictionloss",
            "springlength", "width", "material", "margin", "stiffness",
            "damping", "rgba", "user"})},
      {"motor", ActuatorAttributes({})},
      {"general", ActuatorAttributes({"dyntype", "gaintype", "biastype",
                                      "dynprm", "gainprm", "biasprm"})},
      {"position", ActuatorAttributes({"kp"})},
      {"velocity", ActuatorAttributes({"kv"})},
      {"intvelocity", ActuatorAttributes({"kp"})},
      {"damper", ActuatorAttributes({"kv"})},
      {"cylinder",
       ActuatorAttributes({"timeconst", "area", "diameter", "bias"})},
      {"muscle",
       ActuatorAttributes({"timeconst", "range", "force", "scale", "lmin",
                           "lmax", "vmax", "fpmax", "fvmax"})},
      {"adhesion", ActuatorAttributes({"gain"})},
      {"equality", Set({"name", "class", "active", "solref", "solimp"})},
      {"connect", Set({"name", "class", "body1", "body2", "anchor", "active",
                       "solref", "solimp"})},
      {"weld", Set({"name", "class", "body1", "body2", "relpose", "anchor",
                    "active", "solref", "solimp", "torquescale"})},
      {"equality-joint", Set({"name", "class", "joint1", "joint2", "polycoef",
                              "active", "solref", "solimp"})},
  };
  const auto it = schema.find(tag);
  return it == schema.end() ? nullptr : &it->second;
}

Eigen::Quaterniond ReadOrientation(const Element& e, const Compiler& c) {
  int given = 0;
  for (const char* o : {"quat", "axisangle", "xyaxes", "zaxis", "euler"})
    given += e.Has(o) ? 1 : 0;
  if (given > 1)
    throw std::invalid_argument(
        e.at().At() +
        "more than one of quat, axisangle, xyaxes, zaxis, euler; give one");
  const double to_rad = c.degree ? kPi / 180.0 : 1.0;
  if (e.Has("quat")) {
    const std::vector<double> q = e.Numbers("quat", 4, 4);
    const Eigen::Vector4d v(q[0], q[1], q[2], q[3]);
    if (!(v.norm() > 1e-10))
      throw std::invalid_argument(e.Get("quat")->where.At("quat") +
                                  "a quaternion of zero norm is no rotation");
    return Eigen::Quaterniond(v[0], v[1], v[2], v[3]).normalized();
  }
  if (e.Has("axisangle")) {
    const std::vector<double> a = e.Numbers("axisangle", 4, 4);
    const Eigen::Vector3d axis(a[0], a[1], a[2]);
    if (!(axis.norm() > 1e-14))
      throw std::invalid_argument(e.Get("axisangle")->where.At("axisangle") +
                                  "the axis is zero");
    return Eigen::Quaterniond(
        Eigen::AngleAxisd(a[3] * to_rad, axis.normalized()));
  }
  if (e.Has("xyaxes")) {
    const std::vector<double> a = e.Numbers("xyaxes", 6, 6);
    Eigen::Vector3d x(a[0], a[1], a[2]), y(a[3], a[4], a[5]);
    const std::string at = e.Get("xyaxes")->where.At("xyaxes");
    if (!(x.norm() > 1e-14))
      throw std::invalid_argument(at + "the x axis is zero");
    x.normalize();
    y -= x * x.dot(y);
    if (!(y.norm() > 1e-14))
      throw std::invalid_argument(at + "the y axis is parallel to x");
    y.normalize();
    Eigen::Matrix3d r;
    r << x, y, x.cross(y).normalized();
    return Eigen::Quaterniond(r).normalized();
  }
  if (e.Has("zaxis")) {
    const std::vector<double> a = e.Numbers("zaxis", 3, 3);
    const Eigen::Vector3d z(a[0], a[1], a[2]);
    if (!(z.norm() > 1e-14))
      throw std::invalid_argument(e.Get("zaxis")->where.At("zaxis") +
                                  "the z axis is zero");
    return ZToVector(z.normalized());
  }
  if (e.Has("euler")) {
    const std::vector<double> a = e.Numbers("euler", 3, 3);
    return EulerRotation(Eigen::Vector3d(a[0], a[1], a[2]) * to_rad,
                         c.eulerseq);
  }
  return Eigen::Quaterniond::Identity();
}

void ReadCompiler(const Node& n, ElementContext* ctx) {
  const Element e = ctx->reader->Resolve(n, "compiler", 0);
  Compiler& c = ctx->doc->compiler;
  c.autolimits = e.Bool("autolimits", c.autolimits) == 1;
  c.boundmass = e.Number("boundmass", c.boundmass);
  c.boundinertia = e.Number("boundinertia", c.boundinertia);
  c.settotalmass = e.Number("settotalmass", c.settotalmass);
  c.balanceinertia = e.Bool("balanceinertia", c.balanceinertia) == 1;
  c.discardvisual = e.Bool("discardvisual", c.discardvisual) == 1;
  if (e.Choice("coordinate", {"local", "global"}, 0) == 1)
    throw std::invalid_argument(
        e.at().At("coordinate='global'") +
        "global coordinates are not supported (MuJoCo 3 dropped them too); "
        "convert the file to local coordinates (mujoco-compile writes it)");
  if (e.Has("angle"))
    c.degree = e.Choice("angle", {"radian", "degree"}, 1) == 1;
  if (e.Has("eulerseq")) {
    c.eulerseq = e.Text("eulerseq", "xyz");
    if (c.eulerseq.size() != 3 ||
        c.eulerseq.find_first_not_of("xyzXYZ") != std::string::npos)
      throw std::invalid_argument(e.at().At("eulerseq") +
                                  "three of x, y, z (moving axes) or X, Y, Z "
                                  "(fixed axes)");
  }
  c.inertiafromgeom = e.Bool(
      "inertiafromgeom", c.inertiafromgeom == 2 ? -1 : c.inertiafromgeom, true);
  if (c.inertiafromgeom == -1) c.inertiafromgeom = 2;
  if (e.Has("inertiagrouprange")) {
    const std::vector<double> g = e.Numbers("inertiagrouprange", 2, 2);
    c.group_lo = static_cast<int>(g[0]);
    c.group_hi = static_cast<int>(g[1]);
  }
  for (const char* a :
       {"fusestatic", "fitaabb", "convexhull", "usethread", "strippath",
        "meshdir", "texturedir", "exactmeshinertia"})
    if (e.Has(a))
      ctx->notes->Add(std::string("compiler.") + a, e.Get(a)->where,
                      std::string("<compiler ") + a +
                          ">: no effect on the motion here; ignored");
  for (const Node& child : ctx->reader->Children(n))
    ctx->notes->Add("compiler." + child.tag(), child.where(),
                    "tendon length ranges: not used (tendons are refused)");
}

void ReadOption(const Node& n, ElementContext* ctx) {
  const Element e = ctx->reader->Resolve(n, "option", 0);
  Document& d = *ctx->doc;
  if (e.Has("gravity")) {
    const std::vector<double> g = e.Numbers("gravity", 3, 3);
    d.gravity = Eigen::Vector3d(g[0], g[1], g[2]);
  }
  d.timestep = e.Number("timestep", d.timestep);
  if (e.Has("timestep"))
    ctx->notes->Add("option.timestep", e.Get("timestep")->where,
                    "timestep " + e.Text("timestep", "") +
                        " is reported, not used: the integrators choose "
                        "their steps from --rtol and --atol (--step for the "
                        "fixed-step schemes)");
  for (const char* a : {"density", "viscosity"})
    if (e.Number(a, 0.0) != 0.0)
      throw std::invalid_argument(
          e.Get(a)->where.At(std::string(a) + "='" + e.Text(a, "") + "'") +
          "fluid forces (density, viscosity) are not simulated; remove the "
          "attribute (or set it to 0) to import the model without them");
  if (e.Has("wind") && e.Numbers("wind", 3, 3) != std::vector<double>(3, 0.0))
    throw std::invalid_argument(e.Get("wind")->where.At("wind") +
                                "wind acts through fluid forces, which are "
                                "not simulated; remove it");
  for (const char* a :
       {"apirate", "impratio", "tolerance", "noslip_tolerance", "mpr_tolerance",
        "magnetic", "o_margin", "o_solref", "o_solimp", "integrator",
        "collision", "cone", "jacobian", "solver", "iterations",
        "noslip_iterations", "mpr_iterations"})
    if (e.Has(a))
      ctx->notes->Add(std::string("option.") + a, e.Get(a)->where,
                      "MuJoCo's solver, integrator and contact settings are "
                      "not used (Daedalus integrates the DAE with its own "
                      "--integrator, --rtol, --atol)");
  for (const Node& child : ctx->reader->Children(n)) {
    if (child.tag() != "flag")
      throw std::invalid_argument(child.where().At() +
                                  "not an element of <option>");
    const Element f = ctx->reader->Resolve(child, "flag", 0);
    const auto off = [&](const char* a) {
      return f.Choice(a, {"disable", "enable"}, 1) == 0;
    };
    if (off("gravity")) d.gravity.setZero();
    if (off("passive")) d.passive = false;
    if (off("equality") || off("constraint")) d.equality = false;
    if (off("actuation")) d.actuation = false;
    for (const char* a :
         {"frictionloss", "limit", "contact", "clampctrl", "warmstart",
          "filterparent", "refsafe", "sensor", "override", "energy", "fwdinv",
          "sensornoise", "multiccd"})
      if (f.Has(a))
        ctx->notes->Add(std::string("flag.") + a, f.Get(a)->where,
                        "a MuJoCo solver flag; not used");
  }
}

Joint ReadJoint(const Element& e, const Compiler& c, bool free_joint) {
  Joint j;
  j.at = e.at();
  j.name = e.Text("name", "");
  j.kind = free_joint ? JointKind::kFree
                      : static_cast<JointKind>(e.Choice(
                            "type", {"hinge", "slide", "ball", "free"}, 0));
  if (free_joint) return j;
  const std::vector<double> p = e.Numbers("pos", 3, 3, {0, 0, 0});
  j.pos = Eigen::Vector3d(p[0], p[1], p[2]);
  const std::vector<double> a = e.Numbers("axis", 3, 3, {0, 0, 1});
  j.axis = Eigen::Vector3d(a[0], a[1], a[2]);
  if (j.kind == JointKind::kFree || j.kind == JointKind::kBall) {
    j.axis = Eigen::Vector3d::UnitZ();
    if (j.kind == JointKind::kFree) j.pos.setZero();
  }
  if (!(j.axis.norm() > 1e-14))
    throw std::invalid_argument(e.Get("axis")->where.At("axis") +
                                "the axis is zero; give a direction");
  j.axis.normalize();
  j.stiffness = e.Number("stiffness", 0.0);
  j.springref = e.Number("springref", 0.0);
  j.damping = e.Number("damping", 0.0);
  j.armature = e.Number("armature", 0.0);
  j.ref = e.Number("ref", 0.0);
  for (const char* q : {"stiffness", "damping", "armature"})
    if (e.Number(q, 0.0) < 0.0)
      throw std::invalid_argument(e.Get(q)->where.At(q) + "must be >= 0");
  if (e.Number("frictionloss", 0.0) != 0.0)
    throw std::invalid_argument(
        e.Get("frictionloss")->where.At("frictionloss") +
        "dry friction (frictionloss) is not smooth and is not simulated; "
        "remove it or set it to 0");
  if (e.Has("springdamper") &&
      e.Numbers("springdamper", 2, 2) != std::vector<double>(2, 0.0))
    throw std::invalid_argument(
        e.Get("springdamper")->where.At("springdamper") +
        "springdamper (a stiffness and damping from the mass) is not "
        "supported; give stiffness and damping instead");
  // Limits: MuJoCo 2.2.2 refused a range without `limited` unless the
  // compiler's autolimits is on (MuJoCo 3's default, used here).
  const std::vector<double> r = e.Numbers("range", 2, 2, {0, 0});
  const int limited = e.Bool("limited", -1, true);
  const bool has_range = !(r[0] == 0.0 && r[1] == 0.0);
  if (limited == -1 && has_range && !c.autolimits)
    throw std::invalid_argument(
        e.Get("range")->where.At("range") +
        "a range without limited='true' while the compiler's autolimits is "
        "false (MuJoCo refuses it too); set limited or autolimits='true'");
  j.limited = j.kind != JointKind::kFree &&
              (limited == 1 || (limited == -1 && has_range));
  // limited='true' (often from a default class) without any range: the
  // checks below named the range attribute through a null pointer and
  // crashed (exit 139; found by tests/robustness/fuzz_edges.py).
  if (j.limited && e.Get("range") == nullptr)
    throw std::invalid_argument(
        e.at().At() +
        "limited='true' without a range; give range='lower upper' (or "
        "limited='false')");
  const bool angular =
      j.kind == JointKind::kHinge || j.kind == JointKind::kBall;
  if (j.limited) {
    if (j.kind != JointKind::kBall && !(r[0] < r[1]))
      throw std::invalid_argument(e.Get("range")->where.At("range") +
                                  "range[0] must be below range[1]");
    if (j.kind == JointKind::kBall && r[0] != 0.0)
      throw std::invalid_argument(
          e.Get("range")->where.At("range") +
          "a ball joint's range is '0 max-angle'; range[0] must be 0");
    if (angular && !c.degree &&
        (std::abs(r[0]) > 2 * kPi || std::abs(r[1]) > 2 * kPi))
      throw std::invalid_argument(
          e.Get("range")->where.At("range='" + e.Text("range", "") + "'") +
          "beyond +-2 pi while <compiler angle='radian'>: these look like "
          "degrees; write the range in radians, or use angle='degree' "
          "(MuJoCo's default)");
    j.lower = r[0] * (angular && c.degree ? kPi / 180.0 : 1.0);
    j.upper = r[1] * (angular && c.degree ? kPi / 180.0 : 1.0);
  }
  if (j.kind == JointKind::kHinge && c.degree) {
    j.ref *= kPi / 180.0;
    j.springref *= kPi / 180.0;
  }
  return j;
}

Geom ReadGeom(const Element& e, const Document& doc, Notes* notes) {
  Geom g;
  g.at = e.at();
  g.name = e.Text("name", "");
  const int type = e.Choice("type",
                            {"plane", "hfield", "sphere", "capsule",
                             "ellipsoid", "cylinder", "box", "mesh"},
                            2);
  static const mb::GeometryType kTypes[] = {
      mb::GeometryType::kPlane,     mb::GeometryType::kPlane,
      mb::GeometryType::kSphere,    mb::GeometryType::kCapsule,
      mb::GeometryType::kEllipsoid, mb::GeometryType::kCylinder,
      mb::GeometryType::kBox,       mb::GeometryType::kMesh};
  g.type = kTypes[type];
  g.hfield = type == 1;
  const std::vector<double> s = e.Numbers("size", 0, 3, {0, 0, 0});
  for (size_t k = 0; k < s.size(); ++k) g.size[static_cast<int>(k)] = s[k];
  g.mass = e.Has("mass") ? e.Number("mass", 0.0) : -1.0;
  g.density = e.Number("density", 1000.0);
  if (e.Has("mass") && g.mass < 0.0)
    throw std::invalid_argument(e.Get("mass")->where.At("mass") +
                                "a mass is >= 0");
  if (g.density < 0.0)
    throw std::invalid_argument(e.Get("density")->where.At("density") +
                                "a density is >= 0");
  g.group = e.Integer("group", 0);
  g.contype = e.Integer("contype", 1);
  g.conaffinity = e.Integer("conaffinity", 1);
  if (e.Has("rgba")) {
    const std::vector<double> c = e.Numbers("rgba", 4, 4);
    g.rgba = Eigen::Vector4d(c[0], c[1], c[2], c[3]);
  } else if (e.Has("material")) {
    const auto it = doc.materials.find(e.Text("material", ""));
    if (it != doc.materials.end()) g.rgba = it->second;
  }
  if (e.Text("shellinertia", "false") == "true")
    throw std::invalid_argument(
        e.Get("shellinertia")->where.At("shellinertia") +
        "shell inertia is for meshes; MuJoCo 2.2.2 refuses it on a " +
        mb::ToString(g.type) + " too");
  if (g.type == mb::GeometryType::kMesh) {
    g.mesh = e.Text("mesh", "");
    const auto it = doc.meshes.find(g.mesh);
    if (it == doc.meshes.end())
      throw std::invalid_argument(g.at.At("mesh") + "no <mesh name='" + g.mesh +
                                  "'> in <asset>");
    g.size = it->second.second;
  } else if (e.Has("mesh")) {
    throw std::invalid_argument(
        e.Get("mesh")->where.At("mesh") +
        "fitting a primitive to a mesh needs the mesh file's vertices, "
        "which are not read; give the geom's size instead");
  }
  for (const char* a : {"condim", "priority", "friction", "solmix", "solref",
                        "solimp", "margin", "gap"})
    if (e.Has(a)) {
      notes->Add("geom.contact", e.Get(a)->where,
                 "contact parameters (condim, friction, solref, solimp, "
                 "margin, ...): contacts between geoms are not simulated");
      break;
    }
  for (const char* a : {"fluidshape", "fluidcoef", "fitscale"})
    if (e.Has(a))
      notes->Add(std::string("geom.") + a, e.Get(a)->where,
                 "no effect here (fluid forces are refused, meshes not "
                 "fitted)");
  // Position and orientation: fromto or pos with an orientation.
  if (e.Has("fromto")) {
    if (g.type != mb::GeometryType::kCapsule &&
        g.type != mb::GeometryType::kCylinder &&
        g.type != mb::GeometryType::kBox &&
        g.type != mb::GeometryType::kEllipsoid)
      throw std::invalid_argument(g.at.At("fromto") +
                                  "fromto is for capsule, cylinder, box and "
                                  "ellipsoid geoms");
    if (e.Has("pos") && e.Numbers("pos", 3, 3) != std::vector<double>(3, 0.0))
      throw std::invalid_argument(g.at.At("fromto") +
                                  "both pos and fromto; give one");
    const std::vector<double> f = e.Numbers("fromto", 6, 6);
    const Eigen::Vector3d a(f[0], f[1], f[2]), b(f[3], f[4], f[5]);
    // MuJoCo: z along from - to, the half-length in size[1] (size[2] for a
    // box or ellipsoid, whose size[1] becomes size[0]).
    const Eigen::Vector3d vec = a - b;
    const double half = vec.norm() / 2.0;
    if (!(half >= 1e-14))
      throw std::invalid_argument(g.at.At("fromto") +
                                  "the two points coincide");
    if (g.type == mb::GeometryType::kBox ||
        g.type == mb::GeometryType::kEllipsoid) {
      g.size[2] = half;
      g.size[1] = g.size[0];
    } else {
      g.size[1] = half;
    }
    g.pos = (a + b) / 2.0;
    g.quat = ZToVector(vec.normalized());
  } else {
    const std::vector<double> p = e.Numbers("pos", 3, 3, {0, 0, 0});
    g.pos = Eigen::Vector3d(p[0], p[1], p[2]);
    g.quat = ReadOrientation(e, doc.compiler);
  }
  // MuJoCo's checksize: the sizes a shape uses are positive.
  const int used = mb::GeometrySizeCount(g.type);
  if (g.type == mb::GeometryType::kPlane) {
    if (!(g.size[2] > 0.0) && !g.hfield)
      throw std::invalid_argument(g.at.At("size") +
                                  "a plane's size[2] (grid spacing) must be "
                                  "positive");
  } else if (g.type != mb::GeometryType::kMesh) {
    for (int k = 0; k < used; ++k)
      if (!(g.size[k] > 0.0))
        throw std::invalid_argument(
            g.at.At("size") + "a " + mb::ToString(g.type) + " needs " +
            std::to_string(used) + " positive size" + (used > 1 ? "s" : "") +
            " (size[" + std::to_string(k) + "] is " +
            std::to_string(g.size[k]) + ")");
  }
  return g;
}

Inertial ReadInertial(const Element& e, const Compiler& c) {
  Inertial in;
  in.at = e.at();
  if (!e.Has("pos") || !e.Has("mass"))
    throw std::invalid_argument(e.at().At() +
                                "an <inertial> needs pos and mass (MuJoCo "
                                "requires both)");
  const std::vector<double> p = e.Numbers("pos", 3, 3);
  in.pos = Eigen::Vector3d(p[0], p[1], p[2]);
  in.mass = e.Number("mass", 0.0);
  if (in.mass < 0.0)
    throw std::invalid_argument(e.Get("mass")->where.At("mass") + "the mass " +
                                e.Text("mass", "") +
                                " is negative; give a mass >= 0");
  if (e.Has("fullinertia")) {
    if (e.Has("diaginertia") || e.Has("quat") || e.Has("axisangle") ||
        e.Has("xyaxes") || e.Has("zaxis") || e.Has("euler"))
      throw std::invalid_argument(
          e.at().At("fullinertia") +
          "fullinertia gives the whole tensor in the body frame: no "
          "diaginertia and no orientation beside it");
    const std::vector<double> f = e.Numbers("fullinertia", 6, 6);
    in.inertia << f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2];
  } else if (e.Has("diaginertia")) {
    const std::vector<double> d = e.Numbers("diaginertia", 3, 3);
    const Eigen::Matrix3d r = ReadOrientation(e, c).toRotationMatrix();
    in.inertia =
        r * Eigen::Vector3d(d[0], d[1], d[2]).asDiagonal() * r.transpose();
  } else {
    throw std::invalid_argument(e.at().At() +
                                "an <inertial> needs diaginertia or "
                                "fullinertia (the inertia about the centre "
                                "of mass)");
  }
  return in;
}

}  // namespace daedalus::mjcf::internal

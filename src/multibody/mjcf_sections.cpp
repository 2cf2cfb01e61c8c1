// The sections of an MJCF file in MuJoCo's order (compiler, option,
// default, asset, worldbody, equality, tendon, actuator, ...): the body
// tree, the actuators and the equalities into a Document (mjcf_read.hpp).
#include <set>
#include <stdexcept>

#include "import_guard.hpp"
#include "mjcf_read.hpp"

namespace daedalus::mjcf::internal {

namespace {

const char* const kNoMotion = "no effect on the motion here; ignored";

void CheckName(const Element& e, const std::string& what) {
  if (const Attr* a = e.Get("name"))
    mb::internal::CheckModelName(
        a->value, what, a->where.file + ":" + std::to_string(a->where.line));
}

// A <body> (or the <worldbody>, index 0) and everything in it, depth first:
// MuJoCo numbers bodies, joints and coordinates in this order.
void ReadBody(const Node& n, int index, int def, ElementContext* ctx) {
  Reader& reader = *ctx->reader;
  Document& doc = *ctx->doc;
  for (const Node& c : reader.Children(n)) {
    const std::string tag = c.tag();
    if (tag == "body") {
      reader.CheckAttributes(c, "body");
      int child_def = def;
      if (const char* cc = c.e->Attribute("childclass"))
        child_def = reader.Class(cc, c.where());
      // A body's own attributes take no class (MuJoCo).
      const Element e = Element(c, [&] {
        Attrs a;
        for (const tinyxml2::XMLAttribute* x = c.e->FirstAttribute(); x;
             x = x->Next())
          a[x->Name()] = {x->Value(), c.where(), x->Name()};
        return a;
      }());
      CheckName(e, "body");
      Body b;
      b.at = c.where();
      b.name = e.Text("name", "");
      b.parent = index;
      const std::vector<double> p = e.Numbers("pos", 3, 3, {0, 0, 0});
      b.pos = Eigen::Vector3d(p[0], p[1], p[2]);
      b.quat = ReadOrientation(e, doc.compiler);
      if (e.Text("mocap", "false") == "true")
        ctx->notes->Add("body.mocap", e.Get("mocap")->where,
                        "a mocap body is moved by the user in MuJoCo; here it "
                        "stays fixed where the file puts it");
      const int self = static_cast<int>(doc.bodies.size());
      doc.bodies.push_back(std::move(b));
      doc.bodies[static_cast<size_t>(index)].children.push_back(self);
      ReadBody(c, self, child_def, ctx);
      continue;
    }
    Body& body = doc.bodies[static_cast<size_t>(index)];
    if (tag == "joint" || tag == "freejoint") {
      if (index == 0)
        throw std::invalid_argument(c.where().At() +
                                    "the world body cannot have joints");
      // <freejoint> takes no class defaults (MuJoCo).
      const Element e =
          tag == "freejoint"
              ? Element(c,
                        [&] {
                          reader.CheckAttributes(c, "freejoint");
                          Attrs a;
                          if (const char* nm = c.e->Attribute("name"))
                            a["name"] = {nm, c.where(), "name"};
                          return a;
                        }())
              : reader.Resolve(c, "joint", def);
      CheckName(e, "joint");
      body.joints.push_back(ReadJoint(e, doc.compiler, tag == "freejoint"));
    } else if (tag == "geom") {
      const Element e = reader.Resolve(c, "geom", def);
      CheckName(e, "geom");
      Geom g = ReadGeom(e, doc, ctx->notes);
      if (doc.compiler.discardvisual && g.contype == 0 && g.conaffinity == 0)
        continue;  // MuJoCo drops it before computing inertias
      body.geoms.push_back(std::move(g));
    } else if (tag == "inertial") {
      if (index == 0)
        throw std::invalid_argument(c.where().At() +
                                    "the world body has no inertia");
      if (body.inertial)
        throw std::invalid_argument(c.where().At() +
                                    "a second <inertial> in the body");
      body.inertial =
          ReadInertial(reader.Resolve(c, "inertial", def), doc.compiler);
    } else if (tag == "site" || tag == "camera" || tag == "light") {
      reader.Resolve(c, tag, def);
      ctx->notes->Add("body." + tag, c.where(),
                      tag == "site" ? "sites serve tendons, sensors and site "
                                      "actuators; not used"
                                    : kNoMotion);
    } else if (tag == "composite") {
      throw std::invalid_argument(
          c.where().At() +
          "composite objects (ropes, cloth, soft bodies) are not supported");
    } else {
      throw std::invalid_argument(c.where().At() + "not an element of <" +
                                  (index == 0 ? "worldbody" : "body") +
                                  "> in MJCF 2.2.2");
    }
  }
}

void ReadAsset(const Node& n, ElementContext* ctx) {
  for (const Node& c : ctx->reader->Children(n)) {
    const std::string tag = c.tag();
    if (tag == "mesh") {
      const char* name = c.e->Attribute("name");
      const char* file = c.e->Attribute("file");
      std::string key = name ? name : "";
      if (key.empty() && file) {
        key = file;  // MuJoCo names a mesh after its file, less the folder
        const size_t slash = key.find_last_of('/');
        if (slash != std::string::npos) key = key.substr(slash + 1);
        const size_t dot = key.find_last_of('.');
        if (dot != std::string::npos) key = key.substr(0, dot);
      }
      Eigen::Vector3d scale(1.0, 1.0, 1.0);
      if (const char* s = c.e->Attribute("scale")) {
        const Element e(c, {{"scale", {s, c.where(), "scale"}}});
        const std::vector<double> v = e.Numbers("scale", 3, 3);
        scale = Eigen::Vector3d(v[0], v[1], v[2]);
      }
      ctx->doc->meshes[key] = {file ? file : "", scale};
    } else if (tag == "material") {
      const char* name = c.e->Attribute("name");
      if (const char* rgba = c.e->Attribute("rgba")) {
        const Element e(c, {{"rgba", {rgba, c.where(), "rgba"}}});
        const std::vector<double> v = e.Numbers("rgba", 4, 4);
        if (name)
          ctx->doc->materials[name] = Eigen::Vector4d(v[0], v[1], v[2], v[3]);
      }
    } else if (tag == "texture" || tag == "skin" || tag == "hfield") {
      ctx->notes->Add("asset." + tag, c.where(),
                      tag == "hfield" ? "height fields are not read"
                                      : "textures and skins are for drawing; "
                                        "not read");
    } else {
      throw std::invalid_argument(c.where().At() +
                                  "not an element of <asset> in MJCF 2.2.2");
    }
  }
}

}  // namespace

void ReadActuator(const Element& e, const ElementContext& ctx) {
  const std::string tag = e.node().tag();
  const std::string name = e.Text("name", "");
  // What it drives: exactly one transmission.
  std::string target_kind, target;
  for (const char* t :
       {"joint", "jointinparent", "tendon", "site", "body", "cranksite"})
    if (e.OwnHas(t) || e.Has(t)) {
      target_kind = t;
      target = e.Text(t, "");
    }
  std::string why;
  if (tag != "motor" && tag != "general") {
    why = "<" + tag +
          "> actuators are not supported: their force depends on the state "
          "(a " +
          (tag == "position" ? "position servo acts as a spring kp (ctrl - q)"
           : tag == "velocity" || tag == "damper"
               ? "velocity servo acts as a damper"
               : "muscle or cylinder has activation dynamics") +
          "); only <motor> (and <general> with a fixed gain) become input "
          "channels";
  } else if (tag == "general" && (e.Text("dyntype", "none") != "none" ||
                                  e.Text("gaintype", "fixed") != "fixed" ||
                                  e.Text("biastype", "none") != "none")) {
    why =
        "a <general> actuator with dynamics or a bias is not supported (only "
        "dyntype none, gaintype fixed, biastype none: force = gain ctrl)";
  } else if (target_kind != "joint" && target_kind != "jointinparent") {
    why = target_kind.empty()
              ? "it names no joint"
              : "the '" + target_kind +
                    "' transmission is not supported (only joint)";
  }
  if (!why.empty()) {
    if (ctx.skip_unsupported_actuators) {
      ctx.notes->Add("actuator.skipped." + name + e.at().element, e.at(),
                     "skipped (skip_unsupported_actuators): " + why);
      return;
    }
    throw std::invalid_argument(
        e.at().At() + why +
        "; remove it, or import without it (mjcf --skip-actuators)");
  }
  Actuator a;
  a.at = e.at();
  a.name = name;
  a.kind = tag;
  a.joint = target;
  a.in_parent = target_kind == "jointinparent";
  const std::vector<double> g = e.Numbers("gear", 1, 6, {1});
  for (size_t k = 0; k < g.size(); ++k) a.gear[static_cast<int>(k)] = g[k];
  if (tag == "general") a.gain = e.Numbers("gainprm", 1, 10, {1})[0];
  const auto limited = [&](const char* flag, const char* range, bool* on,
                           double* lo, double* hi) {
    const std::vector<double> r = e.Numbers(range, 2, 2, {0, 0});
    const int l = e.Bool(flag, -1, true);
    const bool has = !(r[0] == 0.0 && r[1] == 0.0);
    if (l == -1 && has && !ctx.doc->compiler.autolimits)
      throw std::invalid_argument(e.Get(range)->where.At(range) +
                                  "a range without its 'limited' while the "
                                  "compiler's autolimits is false");
    *on = l == 1 || (l == -1 && has);
    if (*on && !(r[0] < r[1]))
      throw std::invalid_argument(e.Get(range)->where.At(range) +
                                  "range[0] must be below range[1]");
    *lo = r[0];
    *hi = r[1];
  };
  limited("ctrllimited", "ctrlrange", &a.ctrllimited, &a.ctrl_lo, &a.ctrl_hi);
  limited("forcelimited", "forcerange", &a.forcelimited, &a.force_lo,
          &a.force_hi);
  ctx.doc->actuators.push_back(std::move(a));
}

void ReadEquality(const Element& e, const ElementContext& ctx) {
  Equality q;
  q.at = e.at();
  q.kind = e.node().tag();
  q.name = e.Text("name", "");
  if (e.Bool("active", 1) == 0) {
    ctx.notes->Add("equality.inactive", e.at(),
                   "an inactive equality (active='false') is left out");
    return;
  }
  for (const char* a : {"solref", "solimp", "torquescale"})
    if (e.Has(a))
      ctx.notes->Add(std::string("equality.") + a, e.Get(a)->where,
                     "soft-constraint parameters: Daedalus's constraints "
                     "hold exactly (the drift is reported)");
  if (q.kind == "connect" || q.kind == "weld") {
    q.obj1 = e.Text("body1", "");
    q.obj2 = e.Text("body2", "");
    if (q.obj1.empty())
      throw std::invalid_argument(e.at().At() + "needs body1");
    if (q.kind == "connect" && !e.Has("anchor"))
      throw std::invalid_argument(e.at().At() + "needs anchor");
    const std::vector<double> a = e.Numbers("anchor", 3, 3, {0, 0, 0});
    q.anchor = Eigen::Vector3d(a[0], a[1], a[2]);
    if (e.Has("relpose")) {
      const std::vector<double> r = e.Numbers("relpose", 7, 7);
      const Eigen::Vector4d quat(r[3], r[4], r[5], r[6]);
      // MuJoCo: a zero quaternion means "the pose in the file".
      if (quat.norm() > 0.0) {
        q.relpose_given = true;
        q.rel_pos = Eigen::Vector3d(r[0], r[1], r[2]);
        q.rel_quat = Eigen::Quaterniond(r[3], r[4], r[5], r[6]).normalized();
      }
    }
  } else if (q.kind == "joint") {
    q.obj1 = e.Text("joint1", "");
    q.obj2 = e.Text("joint2", "");
    if (q.obj1.empty())
      throw std::invalid_argument(e.at().At() + "needs joint1");
    const std::vector<double> c = e.Numbers("polycoef", 1, 5, {0, 1, 0, 0, 0});
    for (int k = 0; k < 5; ++k)
      q.polycoef[k] =
          k < static_cast<int>(c.size()) ? c[static_cast<size_t>(k)] : 0.0;
  } else {
    throw std::invalid_argument(
        e.at().At() + "<" + q.kind +
        "> equalities are not supported (connect, weld and joint are)");
  }
  ctx.doc->equalities.push_back(std::move(q));
}

Document Parse(const std::string& xml,
               const std::string& origin,
               bool skip_unsupported_actuators,
               Notes* notes) {
  Reader reader(xml, origin, notes);
  Document doc;
  doc.file = origin;
  if (const char* m = reader.root().e->Attribute("model")) doc.model_name = m;
  doc.bodies.push_back(Body());
  doc.bodies[0].name = "world";
  doc.bodies[0].at = reader.root().where();
  ElementContext ctx{&reader, &doc, notes, skip_unsupported_actuators};
  const std::vector<Node> sections = reader.Children(reader.root());
  static const std::set<std::string> known = {
      "compiler", "option", "size",     "visual",    "statistic",
      "default",  "custom", "asset",    "worldbody", "contact",
      "equality", "tendon", "actuator", "sensor",    "keyframe"};
  for (const Node& s : sections)
    if (!known.count(s.tag()))
      throw std::invalid_argument(s.where().At() +
                                  "not a section of MJCF 2.2.2 (<mujoco> "
                                  "holds compiler, option, size, visual, "
                                  "statistic, default, custom, asset, "
                                  "worldbody, contact, equality, tendon, "
                                  "actuator, sensor, keyframe)");
  // MuJoCo reads the sections by kind in this order, wherever they are.
  auto each = [&](const char* tag, auto f) {
    for (const Node& s : sections)
      if (s.tag() == tag) f(s);
  };
  each("compiler", [&](const Node& s) { ReadCompiler(s, &ctx); });
  each("option", [&](const Node& s) { ReadOption(s, &ctx); });
  for (const char* tag : {"size", "visual", "statistic", "custom"})
    each(tag, [&](const Node& s) {
      notes->Add(std::string("section.") + tag, s.where(), kNoMotion);
    });
  each("default", [&](const Node& s) { reader.ReadDefault(s, -1); });
  each("asset", [&](const Node& s) { ReadAsset(s, &ctx); });
  each("worldbody", [&](const Node& s) {
    if (s.e->FirstAttribute())
      throw std::invalid_argument(s.where().At() +
                                  "the world body takes no attributes");
    ReadBody(s, 0, 0, &ctx);
  });
  each("contact", [&](const Node& s) {
    notes->Add("section.contact", s.where(),
               "contact pairs and exclusions: contacts are not simulated");
  });
  each("equality", [&](const Node& s) {
    for (const Node& c : reader.Children(s)) {
      const std::string tag = c.tag();
      const Element e =
          reader.Resolve(c, "equality", 0,
                         tag == "joint" ? "equality-joint"
                         : (tag == "connect" || tag == "weld") ? tag
                                                               : "");
      CheckName(e, "equality");
      ReadEquality(e, ctx);
    }
  });
  each("tendon", [&](const Node& s) {
    const std::vector<Node> t = reader.Children(s);
    if (!t.empty())
      throw std::invalid_argument(
          t[0].where().At() +
          "tendons are not supported (their lengths, forces and the muscles "
          "and equalities on them); the model cannot be imported as it is: "
          "remove the <tendon> section and what uses it");
  });
  each("actuator", [&](const Node& s) {
    for (const Node& c : reader.Children(s)) {
      if (!AttributesOf(c.tag()) || c.tag() == "equality")
        throw std::invalid_argument(c.where().At() +
                                    "not an actuator of MJCF 2.2.2");
      const Element e = reader.Resolve(c, c.tag(), 0);
      CheckName(e, "actuator");
      ReadActuator(e, ctx);
    }
  });
  each("sensor", [&](const Node& s) {
    notes->Add("section.sensor", s.where(),
               "sensors are not computed (the CSV has the state; poses and "
               "momenta are side files)");
  });
  each("keyframe", [&](const Node& s) {
    notes->Add("section.keyframe", s.where(),
               "keyframes are not used: the start is qpos0 (change it with "
               "--q0 and --v0)");
  });
  return doc;
}

}  // namespace daedalus::mjcf::internal

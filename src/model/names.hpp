// The names a model declares become CSV column names, JSON keys, file names
// and the NAME of --param NAME=VALUE, --q0 NAME=VALUE and --sens A,B. A
// name that holds a comma, a quote, an equals sign, a slash or a control
// character would split a CSV header, break a command line or move a file
// out of its folder, so ModelBuilder::Build() refuses it, as the URDF and
// MJCF importers do (docs/output.md, "Names").
#pragma once

#include <string>

#include "daedalus/model.hpp"

namespace daedalus::internal {

/// `s` as it can be shown on one line between double quotes: control
/// characters, quotes and backslashes escaped as in C (also the importers'
/// messages quoting file text).
std::string ShownName(const std::string& s);

/// Why `name` cannot be used ("" when it can): empty, or holding a comma,
/// a double quote, an equals sign, a slash or backslash, or a control
/// character.
std::string NameFault(const std::string& name);

/// The offset of the first byte of `s` that is not well-formed UTF-8 (an
/// overlong form, a surrogate or a code point above U+10FFFF counts),
/// std::string::npos when there is none.
size_t FirstNonUtf8(const std::string& s);

/// @throws std::invalid_argument "<where>: the <what> name "..." holds
/// <fault>; rename it ..." when NameFault(name) is not empty.
void CheckName(const std::string& name,
               const std::string& what,
               const std::string& where);

/// Checks every name of a model being built: the model's own (also "." and
/// ".."), coordinates, velocities, parameters, input channels,
/// constraints, quadratures, events, functionals and friction cones.
/// @throws std::invalid_argument naming the first bad one.
void CheckModelNames(const ModelData& d);

}  // namespace daedalus::internal

// Checks the importers (URDF, MJCF) make on a model file before an XML
// parser sees it, and on the names they import (docs/models.md, "What the
// importers refuse"; docs/robustness.md). Internal: used by
// src/multibody/urdf*.cpp and mjcf*.cpp.
#pragma once

#include <cstddef>
#include <string>

namespace daedalus::mb::internal {

/// The largest model file read [bytes]: a robot or MJCF file is a few
/// hundred kilobytes (meshes are separate files).
inline constexpr std::size_t kMaxModelFileBytes = std::size_t{64} << 20;
/// The deepest element nesting accepted: tinyxml2 9's own limit
/// (TINYXML2_MAX_ELEMENT_DEPTH), which MuJoCo inherits; urdfdom's TinyXML
/// has none and recursed until the stack overflowed (a URDF nested 50 000
/// deep crashed it; 30 000 took 35 s).
inline constexpr int kMaxXmlDepth = 100;

/// The text of the model file `path`. `kind` ("URDF", "MJCF") and `flag`
/// (the command-line flag that named it, or "") word the messages.
/// @throws std::invalid_argument for a path that does not exist, a folder,
/// a file that cannot be read, one over kMaxModelFileBytes, a binary file
/// (a NUL byte), a UTF-16 or UTF-32 file (its byte-order mark). A UTF-8
/// byte-order mark is removed.
std::string ReadModelFile(const std::string& path,
                          const std::string& kind,
                          const std::string& flag);

/// Checks the text of an XML document named `origin` before it is parsed:
/// not empty, starting with '<', no NUL byte, no document type definition
/// (<!DOCTYPE>, <!ENTITY>: entity expansion is refused), elements nested at
/// most kMaxXmlDepth deep, size at most kMaxModelFileBytes.
/// @throws std::invalid_argument naming origin, the line and the fix.
void CheckXmlText(const std::string& text,
                  const std::string& origin,
                  const std::string& kind);

/// Refuses a name that would break the files a run writes or the command
/// line that addresses it: empty, or holding a comma, a double quote, an
/// equals sign, a slash or backslash, or a control character (newline,
/// tab, ...). `what` ("joint", "link") and `where` ("URDF file 'x', line
/// 3") word the message, which shows the name.
/// @throws std::invalid_argument.
void CheckModelName(const std::string& name,
                    const std::string& what,
                    const std::string& where);

}  // namespace daedalus::mb::internal

// Model-file and name checks of the importers (import_guard.hpp).
#include "import_guard.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "model/names.hpp"

namespace daedalus::mb::internal {

namespace {

// The 1-based line of byte `pos`.
int LineOf(const std::string& text, size_t pos) {
  int line = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i)
    if (text[i] == '\n') ++line;
  return line;
}

std::string Kb(std::size_t bytes) {
  std::ostringstream os;
  os << bytes / 1024 << " KiB";
  return os.str();
}

}  // namespace

std::string ReadModelFile(const std::string& path,
                          const std::string& kind,
                          const std::string& flag) {
  const std::string file = kind + " file '" + path + "'";
  const std::string fix =
      flag.empty() ? std::string() : "; check the path given to " + flag;
  struct stat st {};
  if (path.empty())
    throw std::invalid_argument(kind + " file: the path is empty" + fix);
  if (::stat(path.c_str(), &st) != 0)
    throw std::invalid_argument(
        file + " cannot be read: " + std::strerror(errno) + fix);
  if (S_ISDIR(st.st_mode))
    throw std::invalid_argument(file + " is a folder, not a file" + fix);
  if (!S_ISREG(st.st_mode))
    throw std::invalid_argument(file +
                                " is not a regular file (a device, pipe or "
                                "socket)" +
                                fix);
  if (static_cast<std::size_t>(st.st_size) > kMaxModelFileBytes)
    throw std::invalid_argument(
        file + " is " + Kb(static_cast<std::size_t>(st.st_size)) +
        ", over the limit of " + Kb(kMaxModelFileBytes) + " for a " + kind +
        " file (meshes belong in files of their own)" + fix);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::invalid_argument(file + " cannot be read (permission?)" + fix);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // Byte-order marks: UTF-8 is dropped, UTF-16 and UTF-32 refused.
  auto starts = [&](const char* bom, size_t n) {
    return text.size() >= n && std::memcmp(text.data(), bom, n) == 0;
  };
  if (starts("\xff\xfe\x00\x00", 4) || starts("\x00\x00\xfe\xff", 4))
    throw std::invalid_argument(file + " is UTF-32 text; save it as UTF-8");
  if (starts("\xff\xfe", 2) || starts("\xfe\xff", 2))
    throw std::invalid_argument(file + " is UTF-16 text; save it as UTF-8");
  if (starts("\xef\xbb\xbf", 3)) text.erase(0, 3);
  const size_t nul = text.find('\0');
  if (nul != std::string::npos)
    throw std::invalid_argument(file + " is a binary file, not " + kind +
                                " text (a NUL byte at offset " +
                                std::to_string(nul) + ")" + fix);
  return text;
}

void CheckXmlText(const std::string& text,
                  const std::string& origin,
                  const std::string& kind) {
  const std::string file = kind + " file '" + origin + "'";
  if (text.size() > kMaxModelFileBytes)
    throw std::invalid_argument(file + " is " + Kb(text.size()) +
                                ", over the limit of " +
                                Kb(kMaxModelFileBytes));
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    throw std::invalid_argument(file + " is empty");
  if (text.find('\0') != std::string::npos)
    throw std::invalid_argument(file + " holds a NUL byte: it is binary, not " +
                                kind + " text");
  // A Latin-1 (or other 8-bit) file: urdfdom said "Error reading
  // Attributes", and a name with such bytes aborted the JSON writer.
  const size_t bad = daedalus::internal::FirstNonUtf8(text);
  if (bad != std::string::npos)
    throw std::invalid_argument(
        file + ", line " + std::to_string(LineOf(text, bad)) +
        ": bytes that are not UTF-8 text (a Latin-1 or other 8-bit "
        "encoding); save the file as UTF-8 (e.g. iconv -f LATIN1 -t UTF-8)");
  if (text[first] != '<')
    throw std::invalid_argument(
        file + " is not XML: it starts with '" +
        daedalus::internal::ShownName(
            text.substr(first, std::min<size_t>(20, text.size() - first))) +
        "' (line " + std::to_string(LineOf(text, first)) + ") instead of '<'");
  // One pass over the markup: comments, CDATA, processing instructions and
  // declarations are skipped, quoted attribute values may hold '>', and
  // each start tag that is not self-closing opens a level.
  int depth = 0;
  const size_t n = text.size();
  size_t i = 0;
  auto skip_to = [&](const char* end, size_t from) {
    const size_t e = text.find(end, from);
    return e == std::string::npos ? n : e + std::strlen(end);
  };
  while (i < n) {
    const size_t lt = text.find('<', i);
    if (lt == std::string::npos) break;
    if (text.compare(lt, 4, "<!--") == 0) {
      i = skip_to("-->", lt + 4);
    } else if (text.compare(lt, 9, "<![CDATA[") == 0) {
      i = skip_to("]]>", lt + 9);
    } else if (text.compare(lt, 2, "<?") == 0) {
      i = skip_to("?>", lt + 2);
    } else if (text.compare(lt, 9, "<!DOCTYPE") == 0 ||
               text.compare(lt, 8, "<!ENTITY") == 0) {
      throw std::invalid_argument(
          file + ", line " + std::to_string(LineOf(text, lt)) + ": a " +
          (text.compare(lt, 9, "<!DOCTYPE") == 0 ? "<!DOCTYPE>" : "<!ENTITY>") +
          " declaration: document type definitions and entity expansion "
          "are refused (an entity can expand to gigabytes); a " +
          kind + " file needs neither: remove it");
    } else if (text.compare(lt, 2, "<!") == 0) {
      i = skip_to(">", lt + 2);
    } else if (text.compare(lt, 2, "</") == 0) {
      --depth;
      i = skip_to(">", lt + 2);
    } else {
      // A start tag: find its end outside quoted values.
      size_t j = lt + 1;
      char quote = 0;
      while (j < n) {
        const char c = text[j];
        if (quote) {
          if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
          quote = c;
        } else if (c == '>') {
          break;
        }
        ++j;
      }
      const bool self_closing = j < n && j > lt + 1 && text[j - 1] == '/';
      if (!self_closing && ++depth > kMaxXmlDepth) {
        size_t e = lt + 1;
        while (e < n && !std::isspace(static_cast<unsigned char>(text[e])) &&
               text[e] != '>' && text[e] != '/')
          ++e;
        throw std::invalid_argument(
            file + ", line " + std::to_string(LineOf(text, lt)) +
            ": elements nested more than " + std::to_string(kMaxXmlDepth) +
            " deep (at <" +
            daedalus::internal::ShownName(text.substr(lt + 1, e - lt - 1)) +
            ">); the XML parsers' limit is " + std::to_string(kMaxXmlDepth) +
            " levels (MuJoCo's too): a model this deep is malformed" +
            (kind == "MJCF" ? std::string(", or a body chain that must be "
                                          "split into <include> files")
                            : std::string()));
      }
      i = j + 1;
    }
  }
}

void CheckModelName(const std::string& name,
                    const std::string& what,
                    const std::string& where) {
  if (name.empty())
    throw std::invalid_argument(where + ": a " + what +
                                " has an empty name; give it a name");
  for (unsigned char c : name) {
    const char* why = nullptr;
    if (c == ',') why = "a comma (it would split a CSV column)";
    if (c == '"') why = "a double quote (it would break CSV and JSON files)";
    if (c == '=') why = "an equals sign (--param and --q0 take NAME=VALUE)";
    if (c == '/' || c == '\\')
      why = "a slash (names become parts of file names)";
    if (c < 0x20 || c == 0x7f)
      why = "a control character (a newline or tab would split a line)";
    if (why)
      throw std::invalid_argument(
          where + ": the " + what + " name \"" +
          daedalus::internal::ShownName(name) + "\" holds " + why +
          "; rename it with letters, digits, '_', '-' or '.'");
  }
}

}  // namespace daedalus::mb::internal

#include "selector/mpi_library.hpp"

#include <mpi.h>
#ifdef COLLSHIM_SMPI
#include <xbt/config.hpp>
#endif

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <regex>

#include "algorithms/engine/collective.hpp"

namespace collshim {
namespace {

constexpr std::array<std::string_view, 7> library_names{"ompi",          "mpich",     "smpi-ompi",   "smpi-mpich",
                                                        "smpi-mvapich2", "smpi-impi", "smpi-default"};
// collshim-model --native's first names: SimGrid 3.32's SMPI selectors.
constexpr std::array<std::string_view, 4> smpi_aliases{"ompi", "mpich", "mvapich2", "impi"};

// The numeric components at the start of `text` ("4.1.6rc1": 4, 1, 6). nullopt when it does not start
// with a number, or with `whole` when anything but components follows.
std::optional<std::vector<int>> version_components(std::string_view text, bool whole) {
  std::vector<int> components;
  std::size_t at = 0;
  while (true) {
    int value = 0;
    const auto [end, problem] = std::from_chars(text.data() + at, text.data() + text.size(), value);
    if (problem != std::errc{} || value < 0) return std::nullopt;  // only at the start: a digit follows each '.'
    components.push_back(value);
    at = static_cast<std::size_t>(end - text.data());
    if (at + 1 < text.size() && text[at] == '.' && text[at + 1] >= '0' && text[at + 1] <= '9') {
      ++at;
      continue;
    }
    if (whole && at != text.size()) return std::nullopt;
    return components;
  }
}

std::string version_string(const std::vector<int>& version) {
  std::string text;
  for (std::size_t i = 0; i < version.size(); ++i) text += (i ? "." : "") + std::to_string(version[i]);
  return text;
}

// a against b, each padded beyond its components with its filler (0 for a low end or a library's
// own version, INT_MAX for a high end: "5.0" as a high end is every 5.0.x).
int compare(const std::vector<int>& a, int a_fill, const std::vector<int>& b, int b_fill) {
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const int x = i < a.size() ? a[i] : a_fill;
    const int y = i < b.size() ? b[i] : b_fill;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

MpiLibrary named(std::string name, std::vector<int> version, std::string description) {
  MpiLibrary library{std::move(name), std::move(version), "", std::move(description)};
  library.version_text = version_string(library.version);
  return library;
}

}  // namespace

std::string MpiLibrary::text() const {
  if (name.empty())
    return "unidentified (" + (description.empty() ? std::string("no version text") : description) + ")";
  return version.empty() ? name : name + " " + version_string(version);
}

std::optional<std::string> version_text_field(std::string_view text, std::string_view key) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    if (line.starts_with(key)) {
      std::string value(line.substr(key.size()));
      const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
      while (!value.empty() && blank(value.front())) value.erase(value.begin());
      while (!value.empty() && blank(value.back())) value.pop_back();
      return value;
    }
    at = end + 1;
  }
  return std::nullopt;
}

MpiLibrary identify_mpi_library(std::string_view version_text, std::string_view smpi_selector) {
  // MPI_Get_library_version's length may count a terminating NUL (Open MPI's does).
  std::string text(version_text);
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::smatch match;
  static const std::regex open_mpi(R"(^Open MPI v(\d+\.\d+[^,\s]*))");
  static const std::regex mpich(R"(^MPICH Version:\s*(\d+\.\d+[^\s]*))");
  static const std::regex smpi(R"(^SMPI Version (\d+\.\d+))");
  MpiLibrary library;
  if (std::regex_search(text, match, open_mpi)) {
    library.name = "ompi";
    library.version_text = match[1].str();
    library.description = "Open MPI " + library.version_text;
  } else if (std::regex_search(text, match, mpich)) {
    library.name = "mpich";
    library.version_text = match[1].str();
    library.description = "MPICH " + library.version_text;
    if (const auto device = version_text_field(text, "MPICH Device:")) library.description += " (" + *device + ")";
  } else if (std::regex_search(text, match, smpi)) {
    // SMPI runs SimGrid's collectives as the selector chooses: the selector plays the library.
    library.name = smpi_selector.empty() ? "smpi" : "smpi-" + std::string(smpi_selector);
    library.version_text = match[1].str();
    library.description = "SimGrid " + library.version_text + " SMPI";
    if (!smpi_selector.empty()) library.description += ", smpi/coll-selector:" + std::string(smpi_selector);
  } else {
    library.description = text.substr(0, text.find('\n'));
    return library;
  }
  library.version = version_components(library.version_text, false).value_or(std::vector<int>{});
  return library;
}

std::optional<MpiLibrary> mpi_library_from_name(std::string_view text, std::string& error) {
  const std::string given(text);
  if (std::ranges::find(smpi_aliases, text) != smpi_aliases.end())
    return named("smpi-" + given, {3, 32}, given + " (SimGrid 3.32 SMPI's selector)");
  // The cost model's decisions tables are named LIBRARY-VERSION[-VARIANT], SMPI's smpi-VERSION-SELECTOR.
  std::smatch match;
  static const std::regex smpi_table(R"(^smpi-(\d+\.\d+)-([a-z0-9]+)$)");
  static const std::regex table(R"(^(ompi|mpich)-(\d+(\.\d+)*)(-[a-z0-9]+)?$)");
  if (std::regex_match(given, match, smpi_table))
    return named("smpi-" + match[2].str(), *version_components(match[1].str(), true), given);
  if (std::regex_match(given, match, table))
    return named(match[1].str(), *version_components(match[2].str(), true), given);
  std::string range_error;
  const auto range = parse_library_range(text, range_error);
  if (range && (!range->versioned() || (range->low && range->high && *range->low == *range->high)))
    return named(range->name, range->low.value_or(std::vector<int>{}), given);
  error = "expected a library as rules name it, " + library_names_text() +
          ", with an optional exact version (\"ompi 4.1.6\"), or a decisions table of the cost model (ompi-4.1, "
          "mpich-4, smpi-3.32-ompi; ompi, mpich, mvapich2 or impi alone: SimGrid 3.32 SMPI's selectors)";
  if (range && range->versioned()) error = "a version range names no one library; " + error;
  return std::nullopt;
}

bool LibraryRange::contains(const MpiLibrary& library) const {
  if (library.name != name) return false;
  if (!versioned()) return true;
  if (library.version.empty()) return false;
  return (!low || compare(library.version, 0, *low, 0) >= 0) &&
         (!high || compare(library.version, 0, *high, INT_MAX) <= 0);
}

bool LibraryRange::covers(const LibraryRange& inner) const {
  if (inner.name != name) return false;
  if (!versioned()) return true;
  if (!inner.versioned()) return false;  // inner also matches the versions this does not
  return (!low || (inner.low && compare(*inner.low, 0, *low, 0) >= 0)) &&
         (!high || (inner.high && compare(*inner.high, INT_MAX, *high, INT_MAX) <= 0));
}

std::string LibraryRange::text() const {
  if (!versioned()) return name;
  if (low && high && *low == *high) return name + " " + version_string(*low);
  return name + " " + (low ? version_string(*low) : "") + "-" + (high ? version_string(*high) : "");
}

LibraryRange LibraryRange::exactly(const MpiLibrary& library) {
  if (library.version.empty()) return {library.name, std::nullopt, std::nullopt};
  return {library.name, library.version, library.version};
}

LibraryRange LibraryRange::hull(const LibraryRange& a, const LibraryRange& b) {
  if (!a.versioned() || !b.versioned()) return {a.name, std::nullopt, std::nullopt};
  LibraryRange range{a.name, a.low, a.high};
  if (!b.low || (range.low && compare(*b.low, 0, *range.low, 0) < 0)) range.low = b.low;
  if (!b.high || (range.high && compare(*b.high, INT_MAX, *range.high, INT_MAX) > 0)) range.high = b.high;
  return range;
}

std::optional<LibraryRange> parse_library_range(std::string_view text, std::string& error) {
  std::vector<std::string> words;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t start = text.find_first_not_of(" \t", at);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(text.find_first_of(" \t", start), text.size());
    words.emplace_back(text.substr(start, end - start));
    at = end;
  }
  const std::string example = " (e.g. ompi, \"ompi 4.1.6\", \"ompi 4.1-5.0\", \"mpich 4.0-\", \"smpi-ompi 3.32\")";
  if (words.empty() || words.size() > 2) {
    error = "bad library '" + std::string(text) + "', expected NAME or \"NAME VERSIONS\"" + example;
    return std::nullopt;
  }
  if (std::ranges::find(library_names, words[0]) == library_names.end()) {
    error = "unknown library '" + words[0] + "', expected " + library_names_text() + example;
    return std::nullopt;
  }
  LibraryRange range{words[0], std::nullopt, std::nullopt};
  if (words.size() == 1) return range;
  const std::string& versions = words[1];
  const std::size_t dash = versions.find('-');
  const std::string low_text = dash == std::string::npos ? versions : versions.substr(0, dash);
  const std::string high_text = dash == std::string::npos ? versions : versions.substr(dash + 1);
  if (!low_text.empty()) range.low = version_components(low_text, true);
  if (!high_text.empty()) range.high = version_components(high_text, true);
  if ((!low_text.empty() && !range.low) || (!high_text.empty() && !range.high) ||
      (low_text.empty() && high_text.empty())) {
    error = "bad version range '" + versions + "' for library " + words[0] +
            ", expected VERSION, LOW-HIGH, LOW- or -HIGH with versions like 4.1 or 4.1.6";
    return std::nullopt;
  }
  if (range.low && range.high && compare(*range.low, 0, *range.high, INT_MAX) > 0) {
    error =
        "impossible version range '" + versions + "' for library " + words[0] + ": the low end is above the high end";
    return std::nullopt;
  }
  return range;
}

std::string library_names_text() { return alternatives_text(library_names); }

ProcessLibrary process_library(const std::optional<std::string>& setting) {
  ProcessLibrary process;
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  PMPI_Get_library_version(version, &length);
  // Open MPI counts the terminating NUL in `length`.
  process.version_text.assign(version, std::find(version, version + std::max(length, 0), '\0'));
#ifdef COLLSHIM_SMPI
  process.smpi_selector = simgrid::config::get_value<std::string>("smpi/coll-selector");
#endif
  std::string error;
  const std::optional<MpiLibrary> given = setting ? mpi_library_from_name(*setting, error) : std::nullopt;
  process.library = given ? *given : identify_mpi_library(process.version_text, process.smpi_selector);
  return process;
}

}  // namespace collshim

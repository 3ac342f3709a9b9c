#pragma once
// Which MPI library a job runs on, as rules name it (`library: "ompi 4.1-5.0"`, docs/rules-and-tuning.md "Rule
// tables"): read once per process from MPI_Get_library_version (under SimGrid SMPI with its
// smpi/coll-selector, the selector playing the library), or named by COLLSHIM_MPI_LIBRARY. The cost
// model's identify_library (src/model/library/library_decisions.hpp) builds on the same identification.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collshim {

struct MpiLibrary {
  // ompi, mpich, or smpi-SELECTOR under SimGrid SMPI (smpi alone: the selector is not known);
  // empty: not identified, and then no `library` condition matches.
  std::string name;
  std::vector<int> version;  // numeric components: {4, 1, 6} for "4.1.6rc1"; SMPI: SimGrid's, {3, 32}
  std::string version_text;  // as the library writes it: "4.1.6rc1"
  std::string description;   // "Open MPI 4.1.6rc1", "MPICH 4.0.2 (ch4:ucx)", the unknown library's first line
  std::string text() const;  // "ompi 4.1.6", "smpi-ompi 3.32"; "unidentified (DESCRIPTION)" without a name
  bool is_smpi() const { return name == "smpi" || name.starts_with("smpi-"); }
};

// The library MPI_Get_library_version's text (every line, or only the first) describes; under SMPI
// `smpi_selector` names which selector plays the library.
MpiLibrary identify_mpi_library(std::string_view version_text, std::string_view smpi_selector = {});

// The value of the line of `text` that starts with `key` ("MPICH Device:"), without surrounding
// blanks; nullopt when no line starts so.
std::optional<std::string> version_text_field(std::string_view text, std::string_view key);

// A library as COLLSHIM_MPI_LIBRARY (or a tool's --library) names it: as rules do, with an optional
// exact version ("ompi 4.1.6", "smpi-mpich 3.32", "smpi-default"), or as a decisions table of the cost
// model ("ompi-4.1", "mpich-4-ch3", "smpi-3.32-ompi": the library and version the name carries), or
// as one of the short names ompi, mpich, mvapich2, impi, which (as for collshim-model --native) are
// SimGrid 3.32's SMPI selectors. nullopt with `error` saying what was expected.
std::optional<MpiLibrary> mpi_library_from_name(std::string_view text, std::string& error);

// One alternative of a `library` condition: a name and an optional version range. A bound written
// with fewer components covers every version with that prefix at that end: "4.1" as the low end is
// 4.1.0, "5.0" as the high end is any 5.0.x, and "4.1" alone is 4.1.0 to any 4.1.x.
struct LibraryRange {
  std::string name;
  std::optional<std::vector<int>> low, high;  // nullopt: open at that end

  bool versioned() const { return low || high; }
  // Without a version the name alone decides (an unknown version too); with one, a library of
  // unknown version never matches.
  bool contains(const MpiLibrary& library) const;
  bool covers(const LibraryRange& inner) const;  // every library `inner` matches, this matches too
  std::string text() const;                      // "ompi", "ompi 4.1", "ompi 4.1-5.0", "ompi 4.1-"
  // The range that matches exactly `library`'s name and version (the name alone without a version).
  static LibraryRange exactly(const MpiLibrary& library);
  // The smallest range of `a`'s name that covers both (same name).
  static LibraryRange hull(const LibraryRange& a, const LibraryRange& b);
};

// Parses "NAME", "NAME VERSION", "NAME LOW-HIGH", "NAME LOW-" or "NAME -HIGH"; nullopt with `error`.
std::optional<LibraryRange> parse_library_range(std::string_view text, std::string& error);

// The names a `library` condition accepts, for messages: "ompi, mpich, smpi-ompi, ... or smpi-default".
std::string library_names_text();

// What the process's MPI library says of itself, read once (MPI allows it before MPI_Init), and the
// library rules see: COLLSHIM_MPI_LIBRARY's (`setting`, already checked) where given.
struct ProcessLibrary {
  std::string version_text;   // MPI_Get_library_version, every line
  std::string smpi_selector;  // SimGrid SMPI's smpi/coll-selector; empty elsewhere
  MpiLibrary library;
  std::string first_line() const { return version_text.substr(0, version_text.find('\n')); }
};
ProcessLibrary process_library(const std::optional<std::string>& setting);

}  // namespace collshim

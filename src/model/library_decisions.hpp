#pragma once
// The MPI libraries' own collective decisions as data (config/libraries/*.yaml, compiled in), read by
// one interpreter: per library and version, per collective, an ordered list of rules over the facts
// the library tests (first match wins), naming the library's algorithm and the collshim schedule
// that stands for it, or why none does. docs/cost-model.md, "The library's own choice", describes the format.
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/engine/collective.hpp"
#include "model/native_decision.hpp"
#include "selector/mpi_library.hpp"
#include "selector/yaml_document.hpp"

namespace collshim::model {

// Every problem of a file (or of a set of tables), each "file:line:column: message"; what() is their
// texts, one a line.
class LibraryTableError : public YamlFileError {
 public:
  using YamlFileError::YamlFileError;
};

// What a library's decision may test about one call. `bytes` is the size the model states: the block
// per rank (Allgather; Allgatherv, Gatherv, Scatterv: the sum over ranks / p, rounded down as Open
// MPI's per_rank_dsize is), per pair (Alltoall; Alltoallv: the average), the vector (Allreduce).
// Each table says which of the derived facts below its library computes (docs/cost-model.md).
struct LibraryFacts {
  int p = 1;
  long long bytes = 0;
  LibraryPlacement placement;
  bool commutative = true;  // Allreduce: the operation
  bool builtin_op = true;   // Allreduce: a predefined MPI_Op (MPICH tests it)
  bool in_place = false;    // MPI_IN_PLACE
  int element_bytes = 1;    // the datatype's size: `elements` = bytes / element_bytes (MPI counts)
  // Where blocks differ (Allgatherv, Alltoallv): the sum of all (default p × bytes) and the largest
  // block (default bytes).
  std::optional<long long> total_bytes;
  std::optional<long long> max_bytes;
};

// One data file, parsed and checked (its algorithms exist, their stand-ins are schedules the model
// has, no `run` cycle). Only library_decisions() and parse_library_decisions() make one.
class LibraryDecisions {
 public:
  struct Table;  // one collective's rules and algorithms (library_decisions.cpp)

  LibraryDecisions(LibraryDecisions&&) noexcept;
  LibraryDecisions& operator=(LibraryDecisions&&) noexcept;
  ~LibraryDecisions();

  const std::string& name() const { return name_; }                // "ompi-4.1", as its file is named
  const std::string& description() const { return description_; }  // "Open MPI 4.1.x, coll/tuned ..."
  const std::string& source() const { return source_; }            // repository, tag, paths
  bool covers(Collective collective) const;                        // the file has rules for it
  // Other tables this one decides as (`decide_as`), to check that every one exists.
  std::vector<std::string> decides_as() const;

 private:
  friend class LibraryTableReader;
  LibraryDecisions();
  std::string name_, description_, source_;
  std::vector<Table> tables_;  // indexed by Collective; empty rules: not covered
};

// Parses one file's text; `source_name` is what error messages call it. Throws LibraryTableError.
LibraryDecisions parse_library_decisions(const std::string& yaml_text, const std::string& source_name);
// Checks a set of tables as library_decisions() checks the compiled-in ones: every `decide_as` names a
// table of the set and none leads back to where it started. Throws LibraryTableError.
void check_library_decisions(const std::vector<const LibraryDecisions*>& tables);

// The compiled-in tables by name ("ompi-4.1", "smpi-3.32-ompi"); nullptr if none. The first call
// parses them all; a malformed compiled-in file throws LibraryTableError there (a unit test parses
// every shipped file, so a build that passes its tests has none).
const LibraryDecisions* library_decisions(std::string_view name);
std::vector<std::string_view> library_decisions_names();
// The short names collshim-model first took for SMPI 3.32's selectors (ompi, mpich, mvapich2, impi):
// the table they stand for, or the name itself.
std::string_view library_decisions_alias(std::string_view name);
std::vector<std::string_view> library_decisions_aliases();

// What the library decides for a call. `decide_as` rules follow other compiled-in tables.
NativeDecision native_decision(const LibraryDecisions& tables, Collective collective, const LibraryFacts& facts);

// Which tables stand for the library a program runs, from MPI_Get_library_version's text and, under
// SimGrid's SMPI, its smpi/coll-selector, as identify_mpi_library (src/selector) reads them. Empty
// `tables`: none, and `why_none` says why.
struct LibraryIdentity {
  std::string tables;       // a library_decisions() name
  std::string description;  // "Open MPI 4.1.4", "MPICH 4.0.2 (ch4:ucx)"
  std::string why_none;
};
LibraryIdentity identify_library(std::string_view version_text, std::string_view smpi_selector = {});
// The same for a library already identified (identify_mpi_library, or named by COLLSHIM_MPI_LIBRARY);
// `version_text` gives MPICH's device and configure lines (without it, MPICH has no tables).
LibraryIdentity library_tables(const MpiLibrary& library, std::string_view version_text);

}  // namespace collshim::model

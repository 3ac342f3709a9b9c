#pragma once
// Where ranks run, from the host file a job is launched with, for costing a placement that no
// mapping class names (collshim-model predict --hostfile). Ranks fill the slots in file order, as
// mpirun and smpirun place them by default.
#include <stdexcept>
#include <string>
#include <vector>

namespace collshim::model {

class HostFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The node of every slot, in order. A line is Open MPI's `host slots=N [max_slots=M]`, MPICH's
// `host:N`, or a bare host name for one slot (SMPI's, one line per rank); `#` starts a comment.
// A host named again is the same node. `node_pattern` (ECMAScript; empty: the host is the node)
// names the node by its first group where a platform lists a host per core, e.g. "(.*)-c[0-9]+".
// Throws HostFileError "FILE:LINE:COLUMN: what" for anything else, and for a host the pattern does
// not match.
std::vector<std::string> read_host_file_text(const std::string& text, const std::string& source_name,
                                             const std::string& node_pattern);
std::vector<std::string> read_host_file(const std::string& path, const std::string& node_pattern);

// Node indices 0.. for the first `procs` slots, numbered by first appearance. Throws HostFileError
// if the file has fewer slots.
std::vector<int> node_of_rank_from_slots(const std::vector<std::string>& slots, int procs,
                                         const std::string& source_name);

}  // namespace collshim::model

#pragma once
// The texts of config/libraries/*.yaml, compiled in (generated library_tables.cpp, from
// library_tables.cpp.in) so that nothing depends on finding a data file at run time;
// library_decisions.cpp reads them.
#include <cstddef>

namespace collshim::model {

struct CompiledLibraryTable {
  const char* file;  // "smpi-3.32-ompi.yaml"
  const char* text;
};
extern const CompiledLibraryTable compiled_library_tables[];
extern const std::size_t compiled_library_table_count;

}  // namespace collshim::model

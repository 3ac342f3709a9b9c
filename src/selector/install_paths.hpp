#pragma once
// Where `cmake --install` puts things, as CMake was configured (GNUInstallDirs; generated from
// install_paths.cpp.in): the directories as given (relative to the prefix, or absolute) and the
// configuration directory in full (GNUInstallDirs makes it /etc for the prefix /usr).
namespace collshim::install_paths {
extern const char* const prefix;           // CMAKE_INSTALL_PREFIX
extern const char* const bindir;           // CMAKE_INSTALL_BINDIR: the tools
extern const char* const libdir;           // CMAKE_INSTALL_LIBDIR: libcollshim.so
extern const char* const sysconfdir;       // CMAKE_INSTALL_SYSCONFDIR
extern const char* const full_sysconfdir;  // CMAKE_INSTALL_FULL_SYSCONFDIR
}  // namespace collshim::install_paths

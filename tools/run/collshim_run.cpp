// collshim-run: runs an MPI launch command with the shim preloaded and configured.
//   collshim-run [--config FILE]... [--report PATH] [--force allgather=sparbit]... [--log LEVEL]
//                [--topology SPEC] [--tune FILE] [--disable] -- mpirun -np 8 ./app args
// The library is found next to this program (build tree) or in the install prefix's library
// directory; COLLSHIM_LIBRARY overrides. The exit status is the command's.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "algorithms/engine/collective.hpp"

namespace fs = std::filesystem;
using collshim::collective_names;
using collshim::find_collective;
using collshim::forcing_variable;

namespace {

fs::path find_library() {
  if (const char* explicit_path = std::getenv("COLLSHIM_LIBRARY")) return explicit_path;
  const fs::path self = fs::canonical("/proc/self/exe").parent_path();
  for (const fs::path& candidate : {self / "libcollshim.so", self / ".." / COLLSHIM_INSTALL_LIBDIR / "libcollshim.so",
                                    self / ".." / "lib" / "libcollshim.so"}) {
    if (fs::exists(candidate)) return fs::canonical(candidate);
  }
  return {};
}

void set(const std::string& name, const std::string& value, std::vector<std::string>& exported) {
  setenv(name.c_str(), value.c_str(), 1);
  exported.push_back(name);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run an MPI launch command under collshim"};
  std::vector<std::string> configs, forces;
  std::string report, log_level, topology, tune, platform;
  bool disable = false;
  app.add_option("--config", configs, "rule file (repeatable; later files take precedence; 'default' = shipped)");
  app.add_option("--report", report, "write the end-of-run report: 'stderr' or a path (.json for JSON)");
  app.add_option("--force", forces, "force an algorithm, e.g. allgather=sparbit or alltoallv=grid:dims=2 (repeatable)");
  app.add_option("--log", log_level, "log level")->check(CLI::IsMember({"off", "warn", "info", "debug", "trace"}));
  app.add_option("--topology", topology, "fake mapping for tests, e.g. nodes=4,mapping=cyclic");
  app.add_option("--tune", tune,
                 "learn the algorithms online and keep them in FILE (read at the start if it exists, rewritten "
                 "at MPI_Finalize with what this job learned)");
  app.add_option("--platform", platform,
                 "the machine's description (collshim-tune calibrate): the cost model decides where no rule does, "
                 "its picks confirmed by a few timed calls (COLLSHIM_PLATFORM; default: the site default, if "
                 "installed); none: no cost model, whatever the site default")
      ->check(CLI::ExistingFile | CLI::IsMember({"none"}));
  app.add_flag("--disable", disable, "load the shim but pass every call through");
  app.prefix_command();  // everything after the options (and "--") is the command
  CLI11_PARSE(app, argc, argv);
  std::vector<std::string> command = app.remaining();
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) {
    std::cerr << "collshim-run: no command given; usage: collshim-run [options] -- mpirun -np N ./app\n";
    return 2;
  }

  const fs::path library = find_library();
  if (library.empty()) {
    std::cerr << "collshim-run: cannot find libcollshim.so next to " << fs::canonical("/proc/self/exe").string()
              << " or in ../" << COLLSHIM_INSTALL_LIBDIR << "; set COLLSHIM_LIBRARY\n";
    return 2;
  }
  std::vector<std::string> exported;
  // The shim goes first in LD_PRELOAD, so its MPI entry points win over any other preloaded tool's;
  // a sanitizer build's shim can only load behind the sanitizer runtimes, which go before it.
  const std::string sanitizer_runtimes = COLLSHIM_SANITIZER_RUNTIMES;
  const char* preload = std::getenv("LD_PRELOAD");
  set("LD_PRELOAD",
      (sanitizer_runtimes.empty() ? "" : sanitizer_runtimes + ":") + library.string() +
          (preload && *preload ? std::string(":") + preload : ""),
      exported);
  if (!tune.empty()) {
    // The rules learned by earlier jobs run from the first call and are not tuned again: the file
    // goes last in the list, so it takes precedence over the others (or the shipped table).
    if (fs::exists(tune)) configs.push_back(configs.empty() ? "default:" + tune : tune);
    set("COLLSHIM_TUNE", "online", exported);
    set("COLLSHIM_TUNE_OUT", tune, exported);
  }
  if (!configs.empty()) {
    std::string joined;
    for (const std::string& c : configs) joined += (joined.empty() ? "" : ":") + c;
    set("COLLSHIM_CONFIG", joined, exported);
  }
  if (!report.empty()) set("COLLSHIM_REPORT", report, exported);
  if (!log_level.empty()) set("COLLSHIM_LOG", log_level, exported);
  if (!topology.empty()) set("COLLSHIM_TOPOLOGY", topology, exported);
  // Absolute: the ranks may start in another directory than this one.
  if (!platform.empty())
    set("COLLSHIM_PLATFORM", platform == "none" ? platform : fs::absolute(platform).string(), exported);
  if (disable) set("COLLSHIM_DISABLE", "1", exported);
  for (const std::string& force : forces) {
    const auto equals = force.find('=');
    const auto collective = find_collective(std::string_view(force).substr(0, equals));
    if (equals == std::string::npos || !collective) {
      std::cerr << "collshim-run: --force " << force << ": expected COLLECTIVE=ALGORITHM with COLLECTIVE "
                << collective_names() << "\n";
      return 2;
    }
    set(forcing_variable(*collective), force.substr(equals + 1), exported);
  }
  // Open MPI forwards only the variables it is told about to remote nodes; this list is what
  // `mpirun -x NAME` would add. MPICH's Hydra forwards the whole environment by default.
  std::string forward = std::getenv("OMPI_MCA_mca_base_env_list") ? std::getenv("OMPI_MCA_mca_base_env_list") : "";
  for (const std::string& name : exported) forward += (forward.empty() ? "" : ";") + name;
  setenv("OMPI_MCA_mca_base_env_list", forward.c_str(), 1);

  std::vector<char*> args;
  for (std::string& word : command) args.push_back(word.data());
  args.push_back(nullptr);
  execvp(args[0], args.data());
  std::cerr << "collshim-run: cannot run " << command.front() << ": " << std::strerror(errno) << "\n";
  return 127;
}

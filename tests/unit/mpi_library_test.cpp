// The MPI library as rules name it: identified from MPI_Get_library_version's text (and SMPI's
// selector), named by COLLSHIM_MPI_LIBRARY, and the version ranges of `library` conditions.
#include <gtest/gtest.h>

#include "selector/mpi_library.hpp"

namespace collshim {
namespace {

constexpr std::string_view open_mpi_414{
    "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022\0", 88};
constexpr std::string_view mpich_402 =
    "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\n"
    "MPICH Device:\tch4:ucx\n";

TEST(MpiLibrary, IdentifiesOpenMpiMpichAndSmpiSelectors) {
  const MpiLibrary ompi = identify_mpi_library(open_mpi_414);
  EXPECT_EQ(ompi.name, "ompi");
  EXPECT_EQ(ompi.version, (std::vector<int>{4, 1, 4}));
  EXPECT_EQ(ompi.text(), "ompi 4.1.4");
  EXPECT_EQ(ompi.description, "Open MPI 4.1.4");
  const MpiLibrary rc = identify_mpi_library("Open MPI v4.1.6rc1, package: Open MPI, ident: 4.1.6rc1");
  EXPECT_EQ(rc.version, (std::vector<int>{4, 1, 6}));  // a release candidate counts as its release
  EXPECT_EQ(rc.version_text, "4.1.6rc1");
  const MpiLibrary mpich = identify_mpi_library(mpich_402);
  EXPECT_EQ(mpich.text(), "mpich 4.0.2");
  EXPECT_EQ(mpich.description, "MPICH 4.0.2 (ch4:ucx)");
  // A CSV's mpi_library column holds the first line only: the same library.
  EXPECT_EQ(identify_mpi_library("MPICH Version:\t4.0.2").text(), "mpich 4.0.2");
  // Under SMPI the selector plays the library; SimGrid's version is the version.
  const MpiLibrary smpi = identify_mpi_library("SMPI Version 3.32. Copyright The SimGrid Team 2007-2022", "mvapich2");
  EXPECT_EQ(smpi.text(), "smpi-mvapich2 3.32");
  EXPECT_TRUE(smpi.is_smpi());
  EXPECT_EQ(identify_mpi_library("SMPI Version 3.36. Copyright", "").name, "smpi");  // selector unknown
  const MpiLibrary intel = identify_mpi_library("Intel(R) MPI Library 2021.6 for Linux* OS\n");
  EXPECT_TRUE(intel.name.empty());
  EXPECT_EQ(intel.text(), "unidentified (Intel(R) MPI Library 2021.6 for Linux* OS)");
}

TEST(MpiLibrary, NamedAsRulesNameItOrAsADecisionsTable) {
  std::string error;
  auto named = [&](std::string_view text) {
    error.clear();
    const auto library = mpi_library_from_name(text, error);
    return library ? library->text() : "error: " + error;
  };
  EXPECT_EQ(named("ompi 4.1.6"), "ompi 4.1.6");
  EXPECT_EQ(named("smpi-default"), "smpi-default");
  EXPECT_EQ(named("smpi-mpich 3.32"), "smpi-mpich 3.32");
  EXPECT_EQ(named("ompi-4.1"), "ompi 4.1");
  EXPECT_EQ(named("mpich-4-ch3"), "mpich 4");
  EXPECT_EQ(named("smpi-3.32-impi"), "smpi-impi 3.32");
  // collshim-model's first names stay SimGrid 3.32's selectors.
  EXPECT_EQ(named("ompi"), "smpi-ompi 3.32");
  EXPECT_EQ(named("mvapich2"), "smpi-mvapich2 3.32");
  EXPECT_EQ(named("openmpi").rfind("error: expected a library as rules name it, ompi, mpich, smpi-ompi", 0), 0u)
      << named("openmpi");
  EXPECT_EQ(named("ompi 4.1-5.0").rfind("error: a version range names no one library", 0), 0u);
}

MpiLibrary library(const std::string& name, std::vector<int> version) { return {name, std::move(version), "", ""}; }

LibraryRange range(std::string_view text) {
  std::string error;
  const auto parsed = parse_library_range(text, error);
  EXPECT_TRUE(parsed) << text << ": " << error;
  return parsed.value_or(LibraryRange{});
}

TEST(MpiLibrary, AVersionWithFewerComponentsCoversItsPrefixAtThatEnd) {
  const LibraryRange both = range("ompi 4.1-5.0");
  EXPECT_FALSE(both.contains(library("ompi", {4, 0, 9})));
  EXPECT_TRUE(both.contains(library("ompi", {4, 1})));
  EXPECT_TRUE(both.contains(library("ompi", {4, 1, 0})));
  EXPECT_TRUE(both.contains(library("ompi", {5, 0, 10})));
  EXPECT_FALSE(both.contains(library("ompi", {5, 1, 0})));
  EXPECT_FALSE(both.contains(library("mpich", {4, 1, 0})));
  EXPECT_FALSE(both.contains(library("ompi", {})));  // a version range needs a known version
  const LibraryRange one = range("ompi 4.1");
  EXPECT_TRUE(one.contains(library("ompi", {4, 1, 7})));
  EXPECT_FALSE(one.contains(library("ompi", {4, 2})));
  EXPECT_TRUE(range("mpich 4.0-").contains(library("mpich", {12})));
  EXPECT_FALSE(range("mpich 4.0-").contains(library("mpich", {3, 4, 3})));
  EXPECT_TRUE(range("mpich -4.0").contains(library("mpich", {3, 4, 3})));
  EXPECT_FALSE(range("mpich -4.0").contains(library("mpich", {4, 1})));
  EXPECT_TRUE(range("smpi-ompi").contains(library("smpi-ompi", {})));  // a name alone: any version
  EXPECT_EQ(range("ompi 4.1-5.0").text(), "ompi 4.1-5.0");
  EXPECT_EQ(range(" ompi   4.1 ").text(), "ompi 4.1");
  EXPECT_EQ(range("ompi 4.1-").text(), "ompi 4.1-");
  EXPECT_EQ(range("ompi -5.0").text(), "ompi -5.0");
}

TEST(MpiLibrary, CoversAndHullFollowThePrefixes) {
  EXPECT_TRUE(range("ompi 4.1").covers(range("ompi 4.1.4")));
  EXPECT_TRUE(range("ompi 4.1-5.0").covers(range("ompi 5.0.3-5.0")));
  EXPECT_FALSE(range("ompi 4.1.4").covers(range("ompi 4.1")));
  EXPECT_FALSE(range("ompi 4.1-5.0").covers(range("ompi 4.1-")));
  EXPECT_TRUE(range("ompi").covers(range("ompi 4.1")));
  EXPECT_FALSE(range("ompi 4.1-").covers(range("ompi")));  // the name alone matches unknown versions too
  EXPECT_FALSE(range("ompi").covers(range("mpich")));
  EXPECT_EQ(LibraryRange::hull(range("ompi 4.1.4"), range("ompi 5.0.3")).text(), "ompi 4.1.4-5.0.3");
  EXPECT_EQ(LibraryRange::hull(range("ompi 4.1"), range("ompi 4.1.4")).text(), "ompi 4.1");
  EXPECT_EQ(LibraryRange::hull(range("ompi 4.1.4"), range("ompi")).text(), "ompi");
  EXPECT_EQ(LibraryRange::exactly(library("mpich", {4, 0, 2})).text(), "mpich 4.0.2");
  EXPECT_TRUE(LibraryRange::exactly(library("mpich", {4, 0, 2})).contains(library("mpich", {4, 0, 2})));
  EXPECT_FALSE(LibraryRange::exactly(library("mpich", {4, 0, 2})).contains(library("mpich", {4, 0, 3})));
}

TEST(MpiLibrary, BadRangesSayWhatWasExpected) {
  auto error_of = [](std::string_view text) {
    std::string error;
    EXPECT_FALSE(parse_library_range(text, error)) << text;
    return error;
  };
  EXPECT_EQ(error_of("openmpi 4.1")
                .rfind("unknown library 'openmpi', expected ompi, mpich, smpi-ompi, smpi-mpich, "
                       "smpi-mvapich2, smpi-impi or smpi-default",
                       0),
            0u);
  EXPECT_EQ(error_of("ompi 4.x"),
            "bad version range '4.x' for library ompi, expected VERSION, LOW-HIGH, LOW- or "
            "-HIGH with versions like 4.1 or 4.1.6");
  EXPECT_EQ(error_of("ompi -"),
            "bad version range '-' for library ompi, expected VERSION, LOW-HIGH, LOW- or -HIGH "
            "with versions like 4.1 or 4.1.6");
  EXPECT_EQ(error_of("ompi 5.0-4.1"),
            "impossible version range '5.0-4.1' for library ompi: the low end is above the "
            "high end");
  EXPECT_EQ(error_of("ompi 4.1 5.0").rfind("bad library 'ompi 4.1 5.0', expected NAME or \"NAME VERSIONS\"", 0), 0u);
  EXPECT_EQ(error_of("").rfind("bad library ''", 0), 0u);
  // 4.1.5 to any 4.1.x is a range, not an impossible one.
  std::string error;
  EXPECT_TRUE(parse_library_range("ompi 4.1.5-4.1", error)) << error;
}

}  // namespace
}  // namespace collshim

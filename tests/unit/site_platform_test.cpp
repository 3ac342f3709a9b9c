// Which platform description a job's cost model reads (resolve_platform): COLLSHIM_PLATFORM names a
// file or `none`; unset, the site default is read where it exists; a broken site default stops the
// job with its file, line and column, named as the site default.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "model/platform/model_settings.hpp"
#include "selector/environment.hpp"
#include "test_platforms.hpp"

namespace collshim {
namespace {

EnvironmentSettings settings_of(const std::map<std::string, std::string>& variables, const std::string& site) {
  return read_environment(
      [&](const char* name) -> const char* {
        const auto found = variables.find(name);
        return found == variables.end() ? nullptr : found->second.c_str();
      },
      site);
}

// A site default in a file of its own, removed at the end of the test.
class SiteFile {
 public:
  SiteFile(const std::string& name, const std::string& text) : path_(::testing::TempDir() + name) {
    std::ofstream(path_) << text;
  }
  SiteFile(const SiteFile&) = delete;
  SiteFile& operator=(const SiteFile&) = delete;
  ~SiteFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(SitePlatform, TheVariableNamesTheFileWhateverTheSiteDefault) {
  const SiteFile site("site_platform_set.yaml", model::platform_yaml(test::two_level_platform()));
  const EnvironmentSettings settings = settings_of({{"COLLSHIM_PLATFORM", "job.yaml"}}, site.path());
  EXPECT_EQ(settings.platform, "job.yaml");
  EXPECT_EQ(settings.platform_source, PlatformSource::variable);
  EXPECT_TRUE(settings.model_decides());
  EXPECT_EQ(platform_origin(settings), "job.yaml (COLLSHIM_PLATFORM)");
  EXPECT_TRUE(settings.errors.empty());
}

TEST(SitePlatform, NoneSwitchesTheModelOffEvenWithASiteDefault) {
  const SiteFile site("site_platform_none.yaml", model::platform_yaml(test::two_level_platform()));
  const EnvironmentSettings settings = settings_of({{"COLLSHIM_PLATFORM", "none"}}, site.path());
  EXPECT_FALSE(settings.platform.has_value());
  EXPECT_EQ(settings.platform_source, PlatformSource::switched_off);
  EXPECT_FALSE(settings.model_decides());
  EXPECT_FALSE(settings.confirms());
  EXPECT_TRUE(settings.errors.empty());
  EXPECT_EQ(platform_origin(settings),
            "none (COLLSHIM_PLATFORM=none: the cost model is off for this job; the site "
            "default " +
                site.path() + " is not read)");
  // Nor does anything need a platform that is off: COLLSHIM_TUNE_OUT without online tuning is refused.
  EXPECT_FALSE(
      settings_of({{"COLLSHIM_PLATFORM", "none"}, {"COLLSHIM_TUNE_OUT", "out.yaml"}}, site.path()).errors.empty());
}

TEST(SitePlatform, UnsetReadsTheSiteDefaultWhereItExists) {
  const SiteFile site("site_platform_default.yaml", model::platform_yaml(test::two_level_platform()));
  const EnvironmentSettings settings = settings_of({}, site.path());
  EXPECT_EQ(settings.platform, site.path());
  EXPECT_EQ(settings.platform_source, PlatformSource::site_default);
  EXPECT_TRUE(settings.model_decides());
  EXPECT_TRUE(settings.confirms());  // as with COLLSHIM_PLATFORM: confirmed unless COLLSHIM_TUNE says
  EXPECT_EQ(platform_origin(settings), site.path() + " (the site default: COLLSHIM_PLATFORM is unset)");
  // What needs a platform takes the site default's: no warning for COLLSHIM_TUNE=confirm, no error
  // for COLLSHIM_TUNE_OUT.
  const EnvironmentSettings confirming =
      settings_of({{"COLLSHIM_TUNE", "confirm"}, {"COLLSHIM_TUNE_OUT", "o.yaml"}}, site.path());
  EXPECT_TRUE(confirming.warnings.empty());
  EXPECT_TRUE(confirming.errors.empty());

  std::vector<std::string> errors;
  const auto model = model::load_model_settings(settings, ProcessLibrary{}, errors);
  ASSERT_TRUE(model.has_value());
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(model->platform_file, site.path());
  EXPECT_EQ(model->platform.name, "test");
}

TEST(SitePlatform, UnsetWithoutASiteDefaultIsNoPlatformSilently) {
  const std::string missing = ::testing::TempDir() + "no_such_dir/platform.yaml";
  const EnvironmentSettings settings = settings_of({}, missing);
  EXPECT_FALSE(settings.platform.has_value());
  EXPECT_EQ(settings.platform_source, PlatformSource::none);
  EXPECT_TRUE(settings.errors.empty());
  EXPECT_TRUE(settings.warnings.empty());
  EXPECT_EQ(platform_origin(settings),
            "none (COLLSHIM_PLATFORM is unset and there is no site default at " + missing + ")");
  // No site default looked for at all (as the unit tests' environments and the tools' --platform).
  EXPECT_FALSE(settings_of({}, "").platform.has_value());
  EXPECT_EQ(platform_origin(settings_of({}, "")), "none (COLLSHIM_PLATFORM is unset)");
}

TEST(SitePlatform, ABrokenSiteDefaultStopsTheJobNamingItsFileLineAndColumn) {
  const SiteFile site("site_platform_broken.yaml", "name: site\nshm: {overhead_us: [unclosed\n");
  const EnvironmentSettings settings = settings_of({}, site.path());
  ASSERT_EQ(settings.platform_source, PlatformSource::site_default);
  std::vector<std::string> errors;
  EXPECT_FALSE(model::load_model_settings(settings, ProcessLibrary{}, errors).has_value());
  ASSERT_FALSE(errors.empty());
  const std::string prefix =
      "the site default platform description (COLLSHIM_PLATFORM is unset; "
      "COLLSHIM_PLATFORM=none runs without it): " +
      site.path() + ":";
  EXPECT_EQ(errors[0].rfind(prefix, 0), 0u) << errors[0];
  // file:LINE:COLUMN: message
  const std::string rest = errors[0].substr(prefix.size());
  EXPECT_TRUE(rest.size() > 4 && std::isdigit(static_cast<unsigned char>(rest[0]))) << errors[0];
  EXPECT_NE(rest.find(':'), std::string::npos) << errors[0];

  // The same file named by COLLSHIM_PLATFORM: the message it always had.
  errors.clear();
  model::load_model_settings(settings_of({{"COLLSHIM_PLATFORM", site.path()}}, ""), ProcessLibrary{}, errors);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].rfind("COLLSHIM_PLATFORM: " + site.path() + ":", 0), 0u) << errors[0];
}

TEST(SitePlatform, AnEmptyVariableIsAnError) {
  const EnvironmentSettings settings = settings_of({{"COLLSHIM_PLATFORM", ""}}, "");
  ASSERT_EQ(settings.errors.size(), 1u);
  EXPECT_NE(settings.errors[0].find("COLLSHIM_PLATFORM is empty"), std::string::npos);
}

// A build tree's code (these tests) is not installed: the configured prefix's file.
TEST(SitePlatform, TheSiteDefaultIsUnderTheInstallPrefix) {
  const std::string file = site_platform_file();
  EXPECT_TRUE(file.ends_with("/collshim/platform.yaml")) << file;
  EXPECT_EQ(file.front(), '/') << file;
}

}  // namespace
}  // namespace collshim

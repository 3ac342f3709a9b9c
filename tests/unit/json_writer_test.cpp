// The shared JSON writer (profile/json_writer.hpp): layouts, escapes and numbers as the stable formats
// (the report, verify --json, predict --json) write them.
#include <gtest/gtest.h>

#include <limits>

#include "profile/json_writer.hpp"

namespace collshim {
namespace {

TEST(JsonWriter, LinesAndOneLineLayouts) {
  using Layout = JsonWriter::Layout;
  JsonWriter json;
  json.begin_object().member("name", "a").key("list").begin_array(Layout::one_line).value(1).value(2).end_array();
  json.key("rows").begin_array();
  json.begin_object(Layout::one_line).member("x", true).key("y").null().end_object();
  json.end_array().key("empty").begin_array().end_array();
  EXPECT_EQ(json.end_object().text(),
            "{\n  \"name\": \"a\",\n  \"list\": [1, 2],\n  \"rows\": [\n    {\"x\": true, \"y\": null}\n  ],\n"
            "  \"empty\": []\n}\n");
}

TEST(JsonWriter, EscapesAndNumbers) {
  EXPECT_EQ(json_string("a\"b\\c\nd\te\x01"), "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
  JsonWriter json(0);
  json.begin_array().value(0.1).value(2.0).fixed(1.5, 3).significant(2.0 / 3.0, 6);
  json.value(std::numeric_limits<double>::infinity()).value(-7LL);
  EXPECT_EQ(json.end_array().text(), "[\n0.1,\n2,\n1.500,\n0.666667,\nnull,\n-7\n]\n");
}

}  // namespace
}  // namespace collshim

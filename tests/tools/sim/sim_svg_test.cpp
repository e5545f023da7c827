// write_fleet_svg() on hand-made runs: text is escaped for XML, and many seconds are
// downsampled so the file stays small.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/tools/captured_file.hpp"
#include "tools/sim.hpp"

namespace stepback::tools {
namespace {

// A run of `seconds` seconds with `attempts` attempts in each.
FleetRun run_of(const char* label, std::size_t seconds, std::uint32_t attempts) {
  FleetRun run{label, false, FleetReport{}};
  run.report.peak_attempts = attempts;
  run.report.per_second.assign(seconds, FleetSecond{attempts, 1, 0, 0});
  return run;
}

std::string draw(const char* title, const std::vector<FleetRun>& runs) {
  FleetScenario s;
  s.capacity = 10;
  s.clients = 100;
  CapturedFile out;
  write_fleet_svg(out.get(), title, s, runs);
  return out.text();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(FleetSvg, EscapesTitleAndLabels) {
  const std::string svg = draw("a <b> & \"c\"", {run_of("x<y>&'z'", 120, 5)});
  EXPECT_NE(svg.find("a &lt;b&gt; &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_NE(svg.find("x&lt;y&gt;&amp;&apos;z&apos;"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_EQ(svg.find("x<y"), std::string::npos);
}

TEST(FleetSvg, OnePanelPerRun) {
  const std::string svg = draw("t", {run_of("a", 120, 5), run_of("b", 120, 15)});
  EXPECT_EQ(count(svg, "class=\"attempts\""), 2u);
  EXPECT_EQ(count(svg, "class=\"capacity\""), 2u);
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

TEST(FleetSvg, ManySecondsAreDownsampled) {
  // A day of seconds in five panels would be megabytes at one point each.
  std::vector<FleetRun> runs;
  for (const char* label : {"a", "b", "c", "d", "e"}) runs.push_back(run_of(label, 86400, 20));
  const std::string svg = draw("t", runs);
  EXPECT_LT(svg.size(), 300u * 1000u);
  EXPECT_EQ(count(svg, "class=\"attempts\""), 5u);
}

}  // namespace
}  // namespace stepback::tools

// The web page's helpers and pages: everything from the library escaped,
// hits highlighted, diffs and charts drawn.
#include "html.h"

#include "server_test_util.h"

namespace skilldb::server {
namespace {

using testing::TestServer;

TEST_CASE("HtmlEscape leaves no markup and no control character") {
  CHECK(internal::HtmlEscape("<script>alert('x')</script>&\"") ==
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;");
  CHECK(internal::HtmlEscape("a\x1b[2Jb") == "a\xEF\xBF\xBD[2Jb");
}

TEST_CASE("search hits mark the query's words, stems included, and stay escaped") {
  const auto words = internal::QueryWords("Tiling <b>");
  CHECK(internal::HighlightWords("Tile the K loop <b>", words) ==
        "<mark>Tile</mark> the K loop &lt;b&gt;");
}

TEST_CASE("code is highlighted without letting its text out") {
  const std::string html =
      internal::HighlightCode("__global__ void k() { // </pre><script>\n}");
  CHECK(html.find("<span class=\"k\">__global__</span>") != std::string::npos);
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(html.find("&lt;/pre&gt;&lt;script&gt;") != std::string::npos);
}

TEST_CASE("a line diff marks added and removed lines") {
  const std::string d = internal::LineDiff("a\nb\nc", "a\nB\nc");
  CHECK(d.find("<span class=\"del\">- b</span>") != std::string::npos);
  CHECK(d.find("<span class=\"add\">+ B</span>") != std::string::npos);
  CHECK(d.find("  a\n") != std::string::npos);
}

TEST_CASE("the speedup chart draws one interval per report around 1.0x") {
  const std::string svg = internal::IntervalChart(
      {{"t1 @ host", 1.2, 1.5, 1.8, {1.4, 1.5, 1.6}}, {"<t2>", 0.9, 1.0, 1.1, {}}});
  CHECK(svg.starts_with("<svg"));
  CHECK(svg.find("1.0x") != std::string::npos);
  CHECK(svg.find("&lt;t2&gt;") != std::string::npos);
  CHECK(svg.find("<t2>") == std::string::npos);
}

TEST_CASE("pages show a hostile skill's text escaped") {
  TestServer server;
  Skill evil = testing::ServedSkill(
      "evil", "<script>alert(1)</script> tiling",
      "<img src=x onerror=alert(2)> body");
  evil.code = "</pre><script>alert(3)</script>";
  REQUIRE(server.lib().Put(evil).ok());
  for (const char* path : {"/ui?q=tiling", "/ui/skills/evil", "/ui/log"}) {
    auto res = server.Client().Get(path);
    REQUIRE(res);
    CHECK_MESSAGE(res->status == 200, path);
    CHECK_MESSAGE(res->body.find("<script>") == std::string::npos, path);
    CHECK_MESSAGE(res->body.find("<img") == std::string::npos, path);
    CHECK(res->get_header_value("Content-Security-Policy").find("default-src 'none'") !=
          std::string::npos);
  }
  auto page = server.Client().Get("/ui/skills/evil");
  CHECK(page->body.find("&lt;script&gt;alert(1)&lt;/script&gt;") !=
        std::string::npos);
  auto missing = server.Client().Get("/ui/skills/nope");
  CHECK(missing->status == 404);
}

}  // namespace
}  // namespace skilldb::server

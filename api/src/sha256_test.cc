#include "skilldb/util/sha256.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace skilldb::util {
namespace {

TEST_CASE("SHA-256 matches the FIPS 180-4 test vectors") {
  CHECK(Sha256Hex("") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(Sha256Hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 gives the same digest however the input is split") {
  const std::string text(200, 'x');
  Sha256 h;
  h.Update(text.substr(0, 63));
  h.Update(text.substr(63, 1));
  h.Update(text.data() + 64, text.size() - 64);
  const auto digest = h.Finish();
  Sha256 whole;
  whole.Update(text);
  CHECK(digest == whole.Finish());
}

TEST_CASE("the SHA-256 of a file is the SHA-256 of its bytes") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("skilldb-sha256-" + std::to_string(::getpid()));
  const std::string bytes(3 << 20, 'q');  // more than one read chunk
  { std::ofstream(path, std::ios::binary) << bytes; }
  auto digest = Sha256File(path.string());
  REQUIRE(digest.ok());
  CHECK(*digest == Sha256Hex(bytes));
  std::filesystem::remove(path);
  CHECK(Sha256File(path.string()).status().code() == StatusCode::kNotFound);
}

}  // namespace
}  // namespace skilldb::util

// Output files all or nothing (io/atomic_write.h): a full device is an error naming the path, a
// failed or abandoned write leaves neither a partial file nor a temporary behind.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/atomic_write.h"

using namespace bigstep;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path p = fs::temp_directory_path() / ("bigstep_atomic_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(p); }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(p, ec);
  }
};

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("atomic_write: a full device is an error naming the path", "[io]") {
  // BUG: results were written into /dev/full and the run said "wrote"
  if (!fs::exists("/dev/full")) return;  // not a Linux device tree
  CHECK_THROWS_WITH(write_file_atomically("/dev/full", std::string(100000, 'x')),
                    Catch::StartsWith("cannot write /dev/full: ") && Catch::Contains("No space left on device"));
  // a small write sits in the stream's buffer until it is flushed: still an error
  CHECK_THROWS_AS(write_file_atomically("/dev/full", "{}\n"), WriteError);
  // through a symbolic link (a results folder whose summary.json is /dev/full), streamed
  TempDir d;
  fs::create_symlink("/dev/full", d.p / "summary.json");
  AtomicFile f(d.p / "summary.json");
  f.out() << "t,x\n0,1\n";
  CHECK_THROWS_WITH(f.commit(), Catch::Contains((d.p / "summary.json").string()));
  CHECK(fs::is_symlink(d.p / "summary.json"));  // the device was written in place, not replaced
}

TEST_CASE("atomic_write: the file appears whole or not at all", "[io]") {
  TempDir d;
  const fs::path p = d.p / "out.csv";
  write_file_atomically(p, "old\n");
  {
    AtomicFile f(p);
    f.out() << "new, half written";
    CHECK(read(p) == "old\n");  // the target is untouched while the new text is written
    // destroyed without commit (an exception, an early return): the old file stays, no temporary
  }
  CHECK(read(p) == "old\n");
  CHECK(entries(d.p) == 1);
  AtomicFile f(p);
  f.out() << "new\n";
  f.commit();
  CHECK(read(p) == "new\n");
  CHECK(entries(d.p) == 1);
  // a symbolic link to a regular file: the file is replaced, the link stays
  fs::create_symlink(p, d.p / "link.csv");
  write_file_atomically(d.p / "link.csv", "via link\n");
  CHECK(fs::is_symlink(d.p / "link.csv"));
  CHECK(read(p) == "via link\n");
  // a folder as the target: named, nothing written beside it
  CHECK_THROWS_WITH(write_file_atomically(d.p, "{}"), Catch::EndsWith(": is a folder"));
  // a folder that does not exist: named
  CHECK_THROWS_WITH(write_file_atomically(d.p / "no" / "x.json", "{}"),
                    Catch::StartsWith("cannot write " + (d.p / "no" / "x.json").string() + ": cannot create the file"));
}

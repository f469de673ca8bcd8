// Output files that are either complete or absent: written to a temporary name in the target's
// directory, every write and the close checked, then renamed into place. A target that exists and
// is not a regular file (a device such as /dev/stdout or /dev/full, a FIFO) cannot be replaced and
// is written in place, with the same checks.
#pragma once
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <vector>

namespace bigstep {

/// A failed output write: what() is "cannot write <path>: <reason>".
class WriteError : public std::runtime_error {
 public:
  WriteError(const std::filesystem::path& path, const std::string& reason);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// A file written by streaming (CSV rows as a run goes): out() is the stream, commit() puts the
/// file in place. Destroyed uncommitted (an exception, an early return), it leaves nothing behind.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& out() { return os_; }
  /// Flushes, closes and renames; throws WriteError naming the path and the system's reason.
  void commit();
  const std::filesystem::path& path() const { return path_; }

 private:
  // a buffer over the file descriptor that keeps the first write error (errno) it met
  class Buf : public std::streambuf {
   public:
    int fd = -1;
    int error = 0;
    Buf();
    int sync() override;

   protected:
    int_type overflow(int_type c) override;

   private:
    std::vector<char> data_;
  };

  std::filesystem::path path_;    // as given (named in errors)
  std::filesystem::path target_;  // what is replaced: path_, or the file a symbolic link path_ names
  std::filesystem::path tmp_;     // what is written (target_ itself when it is not a regular file)
  Buf buf_;
  std::ostream os_;
  bool done_ = false;
};

/// bytes into path, all or nothing (AtomicFile); throws WriteError naming the path.
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);

}  // namespace bigstep

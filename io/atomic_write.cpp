// Checked, all-or-nothing output files (io/atomic_write.h).
#include "io/atomic_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace bigstep {

namespace {

constexpr size_t kBufferBytes = 1 << 16;

std::string reason(const char* what, int err) { return err ? std::string(what) + " (" + std::strerror(err) + ")" : what; }

// An existing path that rename() must not replace: a device, a FIFO, a socket (followed through links).
bool write_in_place(const std::filesystem::path& p) {
  std::error_code ec;
  const auto st = std::filesystem::status(p, ec);
  return !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
         !std::filesystem::is_directory(st);
}

// A name of its own per process and file: ".<name>.tmp-<pid>-<n>" beside the target.
std::filesystem::path temporary_name(const std::filesystem::path& target) {
  static std::atomic<unsigned> counter{0};
  std::string name(1, '.');
  name += target.filename().string();
  name += ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  std::filesystem::path tmp = target;
  tmp.replace_filename(name);
  return tmp;
}

// every byte of [p, p + n) to fd; 0 or the errno of the failure
int write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += w;
    n -= size_t(w);
  }
  return 0;
}

}  // namespace

WriteError::WriteError(const std::filesystem::path& path, const std::string& why)
    : std::runtime_error("cannot write " + path.string() + ": " + why), path_(path) {}

AtomicFile::Buf::Buf() : data_(kBufferBytes) { setp(data_.data(), data_.data() + data_.size()); }

int AtomicFile::Buf::sync() {
  if (!error && pptr() > pbase()) error = write_all(fd, pbase(), size_t(pptr() - pbase()));
  setp(data_.data(), data_.data() + data_.size());
  return error ? -1 : 0;
}

AtomicFile::Buf::int_type AtomicFile::Buf::overflow(int_type c) {
  if (sync() != 0) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

AtomicFile::AtomicFile(std::filesystem::path path) : path_(std::move(path)), os_(&buf_) {
  if (path_.filename().empty()) throw WriteError(path_, "not a file name");
  // a symbolic link to a regular file: the file it names is replaced, not the link
  std::error_code ec;
  target_ = path_;
  if (std::filesystem::is_symlink(path_, ec)) {
    const std::filesystem::path resolved = std::filesystem::canonical(path_, ec);
    if (!ec) target_ = resolved;
  }
  if (std::filesystem::is_directory(target_, ec)) throw WriteError(path_, "is a folder");
  const bool in_place = write_in_place(target_);
  tmp_ = in_place ? target_ : temporary_name(target_);
  buf_.fd = ::open(tmp_.c_str(), in_place ? O_WRONLY | O_CLOEXEC : O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (buf_.fd < 0) throw WriteError(path_, reason("cannot create the file", errno));
}

AtomicFile::~AtomicFile() {
  if (done_) return;
  ::close(buf_.fd);
  std::error_code ec;
  if (tmp_ != target_) std::filesystem::remove(tmp_, ec);
}

void AtomicFile::commit() {
  if (done_) return;
  os_.flush();
  if (buf_.error || !os_) throw WriteError(path_, reason("write failed", buf_.error));
  done_ = true;
  const int fd = buf_.fd;
  buf_.fd = -1;
  if (::close(fd) != 0) {
    const std::string why = reason("close failed", errno);
    std::error_code ec;
    if (tmp_ != target_) std::filesystem::remove(tmp_, ec);
    throw WriteError(path_, why);
  }
  if (tmp_ == target_) return;
  if (std::rename(tmp_.c_str(), target_.c_str()) != 0) {
    const std::string why = reason("rename failed", errno);
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
    throw WriteError(path_, why);
  }
}

void write_file_atomically(const std::filesystem::path& path, const std::string& bytes) {
  AtomicFile f(path);
  f.out().write(bytes.data(), std::streamsize(bytes.size()));
  f.commit();
}

}  // namespace bigstep

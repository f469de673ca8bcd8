// Counted<T>: a floating-point scalar that counts its operations, for the GPU work model
// (solvers/pbd/pbd_work_model.h). The team code is templated on the scalar S, so instantiating
// it with S = Counted<double> or Counted<float> counts every operation of the very code the GPU
// runs. Each operation adds one to the counter the team has made current (CountingTeam in
// solvers/team/team.h points it at the running lane's counter); no counter, no counting.
//
// What counts one (a GPU instruction each: FADD/FMUL/DFMA..., FSETP for a comparison, MUFU or a
// short sequence for the special functions):
//   + - * / (binary and compound), comparisons, sqrt, pow, sin, cos, exp, log;
// pow/sin/cos/exp/log also count in the special counter (a CUDA libm call is 10-40 instructions:
// the time model weighs them with its own constant). Free: unary minus and abs (operand modifiers
// on the GPU), isfinite (an integer test), conversions.
//
// sizeof(Counted<T>) == sizeof(T) (the team code tests sizeof(S) to tell FP32 from FP64), and the
// layout is T's, so team scratch carved as S* works unchanged.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace bigstep {

namespace counted_detail {
/// Where this thread's operations count (set by CountingTeam); nullptr = not counting.
inline thread_local uint64_t* ops = nullptr;
inline thread_local uint64_t* special = nullptr;
inline void op() {
  if (ops) ++*ops;
}
inline void special_op() {
  op();
  if (special) ++*special;
}
}  // namespace counted_detail

template <class T>
struct Counted {
  T v{};

  Counted() = default;
  template <class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
  constexpr Counted(U x) : v(T(x)) {}  // implicit: S(0), 2 * s, s > 1 as in the team code
  template <class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
  explicit constexpr operator U() const { return U(v); }

  // arithmetic (one each)
  friend Counted operator+(Counted a, Counted b) { return counted_detail::op(), Counted(a.v + b.v); }
  friend Counted operator-(Counted a, Counted b) { return counted_detail::op(), Counted(a.v - b.v); }
  friend Counted operator*(Counted a, Counted b) { return counted_detail::op(), Counted(a.v * b.v); }
  friend Counted operator/(Counted a, Counted b) { return counted_detail::op(), Counted(a.v / b.v); }
  Counted& operator+=(Counted b) { return *this = *this + b; }
  Counted& operator-=(Counted b) { return *this = *this - b; }
  Counted& operator*=(Counted b) { return *this = *this * b; }
  Counted& operator/=(Counted b) { return *this = *this / b; }
  friend Counted operator-(Counted a) { return Counted(-a.v); }  // sign flip: an operand modifier
  friend Counted operator+(Counted a) { return a; }

  // comparisons (one each: FSETP / DSETP)
  friend bool operator<(Counted a, Counted b) { return counted_detail::op(), a.v < b.v; }
  friend bool operator>(Counted a, Counted b) { return counted_detail::op(), a.v > b.v; }
  friend bool operator<=(Counted a, Counted b) { return counted_detail::op(), a.v <= b.v; }
  friend bool operator>=(Counted a, Counted b) { return counted_detail::op(), a.v >= b.v; }
  friend bool operator==(Counted a, Counted b) { return counted_detail::op(), a.v == b.v; }
  friend bool operator!=(Counted a, Counted b) { return counted_detail::op(), a.v != b.v; }

  // functions, found by argument-dependent lookup after `using std::sqrt;` etc.
  friend Counted sqrt(Counted a) { return counted_detail::op(), Counted(std::sqrt(a.v)); }
  friend Counted pow(Counted a, Counted b) { return counted_detail::special_op(), Counted(std::pow(a.v, b.v)); }
  friend Counted sin(Counted a) { return counted_detail::special_op(), Counted(std::sin(a.v)); }
  friend Counted cos(Counted a) { return counted_detail::special_op(), Counted(std::cos(a.v)); }
  friend Counted exp(Counted a) { return counted_detail::special_op(), Counted(std::exp(a.v)); }
  friend Counted log(Counted a) { return counted_detail::special_op(), Counted(std::log(a.v)); }
  friend Counted abs(Counted a) { return Counted(std::abs(a.v)); }
  friend Counted fabs(Counted a) { return Counted(std::abs(a.v)); }
  friend bool isfinite(Counted a) { return std::isfinite(a.v); }
  friend bool isnan(Counted a) { return std::isnan(a.v); }
};

static_assert(sizeof(Counted<double>) == sizeof(double) && sizeof(Counted<float>) == sizeof(float));
static_assert(std::is_trivially_copyable_v<Counted<double>>);

}  // namespace bigstep

template <class T>
class std::numeric_limits<bigstep::Counted<T>> : public std::numeric_limits<T> {
 public:
  static constexpr bigstep::Counted<T> quiet_NaN() { return std::numeric_limits<T>::quiet_NaN(); }
  static constexpr bigstep::Counted<T> infinity() { return std::numeric_limits<T>::infinity(); }
  static constexpr bigstep::Counted<T> epsilon() { return std::numeric_limits<T>::epsilon(); }
  static constexpr bigstep::Counted<T> max() { return std::numeric_limits<T>::max(); }
  static constexpr bigstep::Counted<T> lowest() { return std::numeric_limits<T>::lowest(); }
};

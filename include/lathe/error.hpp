// lathe's error types. Every failure a user can cause throws a subclass of lathe::Error whose
// message names the offending input; an internal invariant failure is an InternalError (a bug).
#pragma once

#include <stdexcept>
#include <string>

namespace lathe {

/// Base of every exception lathe throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A dtype that an operation does not accept, or no common type for its operands.
class DTypeError : public Error {
 public:
  using Error::Error;
};

/// A malformed UOp graph, reported by the spec checker with the offending node.
class SpecError : public Error {
 public:
  using Error::Error;
};

/// A graph rewrite that does not reach a fixed point (a rule cycle or unbounded growth).
class RewriteError : public Error {
 public:
  using Error::Error;
};

/// The system compiler rejected a generated kernel (a lathe bug or a broken toolchain); the
/// message holds the compiler's output.
class CompileError : public Error {
 public:
  using Error::Error;
};

/// A broken internal invariant: a bug in lathe, never the user's fault.
class InternalError : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void fail_check(const char* cond, const std::string& msg, const char* file, int line);
}  // namespace detail

}  // namespace lathe

/// Checks an internal invariant; on failure throws lathe::InternalError naming the condition.
#define LATHE_CHECK(cond, msg)                                                  \
  do {                                                                          \
    if (!(cond)) ::lathe::detail::fail_check(#cond, (msg), __FILE__, __LINE__); \
  } while (0)

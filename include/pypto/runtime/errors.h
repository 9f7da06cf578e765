#pragma once

#include <stdexcept>
#include <string>

namespace pypto::runtime {

// Building a program library failed: the compiler is missing, rejected the generated source,
// timed out, or the binary cache directory cannot be written. The message is meant for the user
// as is (it includes the compiler's diagnostics).
class BuildError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Loading or running a program library failed. `kind` lets callers (the `run` driver, the
// Python layer) tell a kernel bug from an infrastructure problem without parsing the message.
class ExecutionError : public std::runtime_error {
 public:
  enum class Kind {
    Load,      // the library could not be loaded or is not a program library of this ABI
    Failed,    // the program reported an error (fail(), bad submit, exception, exit code)
    Crashed,   // the program died from a signal (isolated execution only)
    TimedOut,  // the program did not finish in time
    Setup,     // the runtime itself could not set the run up (fork, mmap, bad host arguments)
  };

  ExecutionError(Kind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace pypto::runtime

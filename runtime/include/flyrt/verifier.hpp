// Checks a module before codegen, so that a malformed trace becomes a clear
// error at the user's Python line instead of an LLVM assertion or a crash.
#pragma once

#include <stdexcept>
#include <string>

#include "flyrt/ir.hpp"
#include "flyrt/target.hpp"

namespace flyrt::ir
{

class verify_error : public std::runtime_error
{
public:
    verify_error(const std::string& message, location where)
        : std::runtime_error(message), loc(std::move(where))
    {
    }

    location loc;
};

// Throws verify_error on the first problem found; `t` says what the target
// supports (barriers in `while` loops, say).
void verify(const module& m, const target& t);

} // namespace flyrt::ir

// PTX to machine code (a cubin) in this process, through NVIDIA's nvJitLink
// library where one is found (PyPI's nvidia-nvjitlink, a CUDA toolkit). A
// kernel then reaches the driver as code to load, not PTX to compile: the
// assembling happens on the compile's own thread, beside the other kernels,
// instead of one kernel after another inside cuModuleLoadDataEx. Without the
// library the driver compiles the PTX, as before.
#pragma once

#include <string>

#include "part_memo.hpp"

namespace flyrt::jit
{

// The nvJitLink shared library to open ("" turns assembling off). Opened at
// the next assemble; a library that cannot be opened is reported by
// ptx_assembler_problem() and turns assembling off.
void set_ptx_assembler_path(const std::string& path);

// The library set last ("": none).
std::string ptx_assembler_path();

// Why the library set last cannot assemble ("" when it can, or none is set).
std::string ptx_assembler_problem();

// A cubin of `ptx` for `arch` ("sm_90"), with line information; "" when no
// library is set or it rejects the PTX (the driver then compiles the PTX and
// reports its errors, with the kernel's name). `ptx_digest` (the compile
// memo's key of the PTX; "": none) keeps the cubin for the next compile
// whose PTX is the same.
std::string assemble_ptx(const std::string& ptx, const std::string& ptx_digest, const std::string& arch);

// Keeps `cubin`, which the library set now assembled from the PTX of
// `ptx_digest` for `arch` in another process (a payload from the disk cache,
// whose key names the library), for this process's next assemble of that PTX.
void remember_cubin(const std::string& ptx_digest, const std::string& arch, const std::string& cubin);

// (cubins assembled, cubins an earlier assemble of this process made).
part_counts assembled_cubin_counts();

} // namespace flyrt::jit

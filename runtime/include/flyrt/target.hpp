// What code is generated for. Every stage reads this one description
// instead of target-specific globals: the tracer (warp size), the verifier
// (what the target supports), codegen (triple, CPU, address spaces), the JIT
// and the launchers (limits); its id keys compiled artifacts in memory and
// on disk.
#pragma once

#include <cstdint>
#include <string>

namespace flyrt
{

enum class target_kind : std::uint8_t
{
    cpu,    // this machine: a block's threads run as loops
    nvptx,  // NVIDIA GPUs: PTX, loaded through the CUDA driver
    amdgpu, // AMD GPUs: code objects (ELF), loaded through ROCm's HIP runtime
};

struct target
{
    target_kind kind = target_kind::cpu;
    std::string triple;   // LLVM target triple
    std::string cpu;      // LLVM CPU name: the host's, "sm_90" or "gfx942"
    std::string features; // LLVM feature string
    int warp_size = 32;   // lanes that shuffle together
    int max_threads_per_block = 1024;
    std::int64_t max_shared_bytes = 64 * 1024; // per block, static + dynamic
    unsigned global_address_space = 0;         // LLVM address spaces of tensors
    unsigned shared_address_space = 0;         // and of shared memory
    // Barriers and shuffles inside `while` loops: the CPU splits a block's
    // thread loops at structured `for` and `if` only.
    bool sync_in_while = false;
    // fx.mma, the warp-level matrix multiply-accumulate (NVIDIA: sm_80 on;
    // AMD: the MFMA GPUs gfx90a and gfx94x; the CPU computes it exactly
    // from the lanes' fragments).
    bool matrix_multiply = true;

    bool is_gpu() const { return kind != target_kind::cpu; }
    // "cpu", "nvptx" or "amdgpu".
    std::string name() const;
    // Everything that changes generated code, e.g. "nvptx/sm_90/+ptx80/w32".
    std::string id() const;
};

// This machine's CPU; a CPU warp (32 or 64 lanes) is what shuffles span.
target cpu_target(int warp_size);

// An NVIDIA GPU of compute capability major.minor. LLVM 19 generates up to
// sm_90; newer GPUs get sm_90 PTX, which their driver compiles for them.
target nvptx_target(int major, int minor);

// An AMD GPU architecture as LLVM 19 names it ("gfx942": MI300X); any
// other name is std::invalid_argument listing the known ones. Waves are
// 64 lanes (gfx10 on run wave32 by default; flyrt asks for wave64 there).
target amdgpu_target(const std::string& arch);

} // namespace flyrt
